"""`adk test` fixtures: a replay of N fixtures by agentdiff against ADK's own `adk test` on the same
fixtures and agent (one pytest process, as ADK runs them), each a whole command with its start paid;
and the same N replayed again on a warm worker pool (what watch mode pays after a save).

The fixtures are recorded once by ADK's `adk test --rebuild` (a real ADK agent with a tool, its Gemini
model played by the fake Gemini server of the test suite), then copied N times; replays call no model."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
N = int(os.environ.get("AGENTDIFF_BENCH_FIXTURES", "40"))
ROUNDS = 3

AGENT = '''
from google.adk.agents import LlmAgent


def get_weather(city: str) -> dict:
    """Returns the weather in a city."""
    return {"city": city, "forecast": "sunny", "celsius": 21}


root_agent = LlmAgent(name="weather", model="gemini-2.5-flash", instruction="Answer with get_weather.", tools=[get_weather])
'''


def _respond(call):
    from fake_gemini import Reply

    if any("functionResponse" in p for c in call.body.get("contents", []) for p in c.get("parts", [])):
        return Reply(text="It is sunny in Paris.")
    return Reply(function_calls=[{"name": "get_weather", "args": {"city": "Paris"}}])


def _project(root: Path, adk: Path) -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from fake_gemini import FakeGemini

    folder = root / "weather"
    (folder / "tests").mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent  # noqa: F401\n")
    (folder / "agent.py").write_text(AGENT)
    (folder / "tests" / "case_0.json").write_text(json.dumps({"events": [
        {"author": "user", "content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]}}]}))
    server = FakeGemini(_respond).start()
    try:
        done = subprocess.run([str(adk), "test", str(root), "--rebuild"], capture_output=True, text=True,
                              env={**os.environ, **server.env}, timeout=300)
    finally:
        server.close()
    if "Successfully rebuilt" not in done.stdout:
        raise RuntimeError(f"adk test --rebuild failed: {done.stdout}{done.stderr}")
    for i in range(1, N):
        shutil.copy(folder / "tests" / "case_0.json", folder / "tests" / f"case_{i}.json")


def _timed(command: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - started, done


async def _warm(root: Path) -> float:
    from agentdiff.core.run.options import RunOptions
    from agentdiff.core.worker.pool import WorkerPool
    from agentdiff.core.workbench.workbench import Workbench

    pool = WorkerPool(timeout=60)
    try:
        wb = Workbench(root, [root], pool, RunOptions())
        wb.run(list(wb.cases), "warm-up")
        await wb.wait()
        times = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            wb.run(list(wb.cases), "again")
            await wb.wait()
            times.append(time.perf_counter() - started)
        assert all(s.status is not None and s.status.value == "passed" for s in wb.cases.values())
        return statistics.median(times)
    finally:
        pool.close()


def adk_test_benchmark() -> list[tuple[str, str, str]]:
    bin_dir = Path(sys.executable).parent
    adk, agentdiff = bin_dir / "adk", bin_dir / "agentdiff"
    with tempfile.TemporaryDirectory(prefix="agentdiff-adk-test-") as scratch:
        root = Path(scratch)
        _project(root, adk)
        theirs, ours = [], []
        for _ in range(ROUNDS):  # alternately, so both see the same machine
            seconds, done = _timed([str(adk), "test", str(root)], root)
            if f"{N} passed" not in done.stdout:
                raise RuntimeError(f"adk test: {done.stdout[-2000:]}")
            theirs.append(seconds)
            seconds, done = _timed([str(agentdiff), "run", "--json"], root)
            if json.loads(done.stdout)["summary"]["passed"] != N:
                raise RuntimeError(f"agentdiff run: {done.stderr[-2000:]}")
            ours.append(seconds)
        warm = asyncio.run(_warm(root))
    adk_s, ours_s = statistics.median(theirs), statistics.median(ours)
    return [
        (f"adk test: `adk test` on {N} fixtures (one pytest process, median of {ROUNDS})", f"{adk_s:.2f} s", "the reference"),
        (f"adk test: `agentdiff run` on the same {N} fixtures, workers started (median of {ROUNDS})", f"{ours_s:.2f} s",
         f"{adk_s / ours_s:.1f}x faster" if ours_s < adk_s else f"{ours_s / adk_s:.1f}x slower"),
        (f"adk test: the same {N} replayed again on a warm pool (watch mode; median of {ROUNDS})", f"{warm:.2f} s",
         f"{adk_s / warm:.0f}x faster than adk test"),
    ]
