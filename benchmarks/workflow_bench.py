"""Replay of an ADK 2 workflow case against a plain agent's with as many model calls: a 10-node graph
(five function nodes and five LLM nodes, one model call each) and one `LlmAgent` that makes five model
calls (four tool calls, then its answer), both conformance cases recorded with `agentdiff record`, then
replayed on one warm worker pool, alternately, so both see the same machine."""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "sample_agents"

WORKFLOW = '''
from google.adk.agents import LlmAgent
from google.adk.workflow import Workflow

from demo_model import playbook_model

PROMPT = """You write one line.

## Playbook
Otherwise reply "step done"
"""


def make_step(i):
    def step(node_input):
        return f"step {i}"
    step.__name__ = f"prepare_{i}"
    return step


chain = []
for i in range(5):
    chain += [make_step(i), LlmAgent(name=f"writer_{i}", model=playbook_model(), instruction=PROMPT)]
root_agent = Workflow(name="flow", edges=[("START", *chain)])
'''

PLAIN = '''
from google.adk.agents import LlmAgent

from demo_model import playbook_model

PROMPT = """You look things up.

## Playbook
Otherwise call look_up(key="a"), then call look_up(key="b"), then call look_up(key="c"), then call look_up(key="d"), then reply "done"
"""


def look_up(key: str) -> dict:
    """Look a key up."""
    return {"key": key, "value": key.upper()}


root_agent = LlmAgent(name="plain", model=playbook_model(), instruction=PROMPT, tools=[look_up])
'''


def _project(root: Path) -> None:
    shutil.copy(SAMPLES / "demo_model.py", root / "demo_model.py")
    for name, source in (("flow", WORKFLOW), ("plain", PLAIN)):
        package = root / name
        (package / "conformance" / "bench" / "one").mkdir(parents=True)
        (package / "__init__.py").write_text("from . import agent  # noqa: F401\n")
        (package / "agent.py").write_text(source)
        (package / "conformance" / "bench" / "one" / "spec.yaml").write_text(
            f"description: one message\nagent: {name}\nuser_messages:\n  - text: go\n")


def workflow_benchmark() -> list[tuple[str, str, str]]:
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.run.options import RunOptions
    from agentdiff.core.run.runner import run_case
    from agentdiff.core.worker.pool import WorkerPool

    root = Path(tempfile.mkdtemp(prefix="agentdiff-bench-"))
    try:
        _project(root)
        recorded = subprocess.run([sys.executable, "-m", "agentdiff.tui.cli", "record", "flow", "plain"], cwd=root, capture_output=True, text=True)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        found = discover([root], root)
        refs = {ref.id.split("/")[0]: ref for ref in found.cases}  # flow/conformance/bench/one
        pool = WorkerPool(jobs=1, timeout=60)
        asyncio.run(pool.start())
        times: dict[str, list[float]] = {"flow": [], "plain": []}
        calls: dict[str, float] = {}
        try:
            for i in range(24):
                for name in ("flow", "plain"):
                    start = time.perf_counter()
                    run = asyncio.run(run_case(refs[name], pool, RunOptions(mode="replay"), root))
                    elapsed = time.perf_counter() - start
                    assert run.result.status.value == "passed", (name, run.result.error, run.result.layers)
                    calls[name] = run.result.model_calls or 0
                    if i >= 4:  # the first runs warm this process's own imports
                        times[name].append(elapsed)
        finally:
            pool.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    flow, plain = statistics.median(times["flow"]), statistics.median(times["plain"])
    return [
        (f"workflow: replay of a 10-node workflow case ({calls['flow']:g} model calls, median)", f"{flow * 1000:.0f} ms", ""),
        (f"workflow: replay of a plain agent case ({calls['plain']:g} model calls, median)", f"{plain * 1000:.0f} ms",
         f"ratio {flow / plain:.2f}x (target ≤ 1.5x)"),
    ]
