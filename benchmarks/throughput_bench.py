"""Throughput: 200 EvalSet cases x `num_runs` 2 of an agent whose model sleeps 100 ms per call (a tool
call, then the answer: two calls a run), through agentdiff's worker pool and through ADK's
`AgentEvaluator`, both with their imports paid; then both again with a CPU-heavy job beside them.

The floor is what no runner of these runs can beat on this machine: ADK's own CPU for the runs, spread
over every core, plus the two model calls one run waits for. ADK's CPU per run is measured in the same
sitting, in a plain process that runs the agent through `InMemoryRunner` and nothing else: all the runs
at once with `asyncio.gather`, and in rounds of 100 (the lower figure is taken, so the floor is the
harder one). agentdiff's workers' CPU is read from the worker server's accounting of its waited-for
children (every worker is one), so the rows say where the time over the floor goes.

    .venv/bin/python benchmarks/run.py throughput
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Iterator

CASES = 200
RUNS = 2
MODEL_SECONDS = 0.1
CALLS_PER_RUN = 2

_SLEEPY_AGENT = '''
import asyncio
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


def look_up(key: str) -> dict:
    """Look a key up."""
    return {"key": key, "value": key.upper()}


class SleepyModel(BaseLlm):
    """A model that takes 100 ms per call: asks for one look-up, then answers."""

    model: str = "sleepy-model"

    async def generate_content_async(self, llm_request, stream=False):
        await asyncio.sleep(0.1)
        last = llm_request.contents[-1]
        key = llm_request.contents[0].parts[0].text.split()[-1]
        if any(p.function_response for p in last.parts or []):
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=f"The value of {key} is {key.upper()}.")]))
        else:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name="look_up", args={"key": key}))]))


root_agent = LlmAgent(name="sleepy", model=SleepyModel(), instruction="Look things up.", tools=[look_up])
'''

#: ADK alone: the sleepy agent's runs through `InMemoryRunner` in one plain process, `argv[2]` at a time;
#: prints the process's CPU seconds per run.
_PLAIN_ADK = '''
import asyncio, logging, sys, time, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
sys.path.insert(0, sys.argv[1])
from google.adk.runners import InMemoryRunner
from google.genai import types
from sleepy.agent import root_agent

async def one(i):
    runner = InMemoryRunner(agent=root_agent, app_name="sleepy")
    session = await runner.session_service.create_session(app_name="sleepy", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text=f"look up k{i}")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    await runner.close()

async def main(runs, at_once):
    await one(-1)  # ADK's lazy set-up, as the worker server pays it before it forks
    start = time.process_time()
    for first in range(0, runs, at_once):
        await asyncio.gather(*(one(i) for i in range(first, min(runs, first + at_once))))
    print((time.process_time() - start) / runs)

asyncio.run(main(int(sys.argv[2]), int(sys.argv[3])))
'''


def sleepy_project(cases: int) -> tuple[Path, dict, dict]:
    """An agents dir with the sleepy agent and an eval set of `cases` one-turn cases."""
    root = Path(tempfile.mkdtemp(prefix="agentdiff-bench-"))
    agent = root / "sleepy"
    agent.mkdir()
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text(_SLEEPY_AGENT)
    eval_set = {
        "eval_set_id": "sleepy",
        "eval_cases": [
            {
                "eval_id": f"case_{i}",
                "conversation": [
                    {
                        "user_content": {"role": "user", "parts": [{"text": f"look up k{i}"}]},
                        "final_response": {"role": "model", "parts": [{"text": f"The value of k{i} is K{i}."}]},
                        "intermediate_data": {"tool_uses": [{"name": "look_up", "args": {"key": f"k{i}"}}]},
                    }
                ],
            }
            for i in range(cases)
        ],
    }
    (agent / "sleepy.evalset.json").write_text(json.dumps(eval_set))
    criteria = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
    (agent / "test_config.json").write_text(json.dumps({"criteria": criteria}))
    return root, eval_set, criteria


def _adk_cpu_per_run(root: Path, runs: int, at_once: int) -> float:
    out = subprocess.run([sys.executable, "-c", _PLAIN_ADK, str(root), str(runs), str(at_once)],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _children_cpu(pid: int) -> float:
    """A process's own CPU and that of its waited-for children, in seconds (`/proc/PID/stat`)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def _cpu_heavy_job() -> Iterator[None]:
    """A busy loop on one core beside the measurement (a build or a test run, say)."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def _agentdiff(root: Path, jobs, label: str) -> tuple[float, list[tuple[str, str, str]]]:
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.run.options import RunOptions
    from agentdiff.core.run.runner import run_cases
    from agentdiff.core.worker.pool import WorkerPool

    refs = discover([root], root).cases
    pool = WorkerPool(jobs=jobs, timeout=120)

    async def ours() -> list:
        return [run.result async for run in run_cases(refs, pool, RunOptions(num_runs=RUNS), root)]

    start = time.perf_counter()
    asyncio.run(pool.start())
    server_seconds = time.perf_counter() - start
    server = pool._server._process.pid if pool._server is not None and pool._server._process is not None else None
    workers_before = _children_cpu(server) if server else 0.0
    main_before = time.process_time()
    start = time.perf_counter()
    results = asyncio.run(ours())
    wall = time.perf_counter() - start
    main_cpu = time.process_time() - main_before
    workers_cpu = (_children_cpu(server) - workers_before) if server else float("nan")
    pool.close()
    passed = sum(r.status.value == "passed" for r in results)
    runs = CASES * RUNS
    name = f"--jobs {jobs}" if jobs else f"default --jobs ({pool.jobs})"
    return wall, [
        (f"throughput: agentdiff, {name}{label}", f"{wall:.2f} s", f"{passed}/{CASES} passed; + {server_seconds:.1f} s worker server start"),
        (f"throughput: agentdiff's CPU per run, {name}{label}", f"{1000 * workers_cpu / runs:.2f} ms",
         f"workers (the app's process: {1000 * main_cpu / runs:.2f} ms)"),
    ]


def _agent_evaluator(root: Path, eval_set: dict, criteria: dict) -> float:
    from google.adk.evaluation.agent_evaluator import AgentEvaluator
    from google.adk.evaluation.eval_config import EvalConfig
    from google.adk.evaluation.eval_set import EvalSet

    async def theirs() -> None:
        await AgentEvaluator.evaluate_eval_set(
            agent_module="sleepy", eval_set=EvalSet.model_validate(eval_set), eval_config=EvalConfig(criteria=criteria),
            num_runs=RUNS, print_detailed_results=False,
        )

    start = time.perf_counter()
    asyncio.run(theirs())
    return time.perf_counter() - start


def throughput_benchmark() -> list[tuple[str, str, str]]:
    from agentdiff.core.scoring.rouge import rouge1

    rows: list[tuple[str, str, str]] = []
    root, eval_set, criteria = sleepy_project(CASES)
    rouge1("warm", "up")  # the stemmer load, paid before the clock as ADK's imports are
    runs, cpus = CASES * RUNS, os.cpu_count() or 1
    try:
        adk_cpu = min(_adk_cpu_per_run(root, runs, runs), _adk_cpu_per_run(root, runs, 100))
        floor = runs * adk_cpu / cpus + CALLS_PER_RUN * MODEL_SECONDS
        rows.append(("throughput: ADK's own CPU per run (one plain process)", f"{1000 * adk_cpu:.2f} ms",
                     "the lower of all runs at once and rounds of 100"))
        rows.append((f"throughput: floor ({runs} runs x ADK's CPU / {cpus} cores + {CALLS_PER_RUN} model calls)", f"{floor:.2f} s", ""))
        timings = {}
        for jobs in (None, 256):
            timings[jobs], measured = _agentdiff(root, jobs, "")
            rows.extend(measured)
        with _cpu_heavy_job():
            loaded, measured = _agentdiff(root, None, ", a CPU-heavy job beside it")
            rows.extend(measured)

        warnings.filterwarnings("ignore")
        sys.path.insert(0, str(root))
        logging.disable(logging.CRITICAL)
        adk_seconds = _agent_evaluator(root, eval_set, criteria)
        with _cpu_heavy_job():
            adk_loaded = _agent_evaluator(root, eval_set, criteria)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    rows.insert(0, (f"throughput: ADK AgentEvaluator, {CASES} cases x {RUNS} runs", f"{adk_seconds:.1f} s",
                    f"in process; {adk_loaded:.1f} s with a CPU-heavy job beside it"))
    rows.append(("throughput: distance from the floor, default --jobs", f"{timings[None] / floor:.2f}x", "target <= 1.5x"))
    rows.append(("throughput: speed-up, default --jobs", f"{adk_seconds / timings[None]:.1f}x", "target >= 10x"))
    rows.append(("throughput: speed-up, --jobs 256", f"{adk_seconds / timings[256]:.1f}x", "target >= 10x"))
    rows.append(("throughput: speed-up, default --jobs, a CPU-heavy job beside both", f"{adk_loaded / loaded:.1f}x", "target >= 12x"))
    return rows
