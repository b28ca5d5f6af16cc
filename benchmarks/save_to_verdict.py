"""Save → verdict in the real app (real watcher, worker pool and file changes), shared by the `tui`
and `agents-cli` benchmarks: a copy of one sample agent, a file of it saved eight times, alternately
with an edit that fails `case` and as it was, each time until `case`'s new verdict is in (and, with
`every_case`, no case runs any more)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "sample_agents"


def save_to_verdict_times(sample: str, edited: str, case: str, old: str, new: str, every_case: bool = False) -> list[float]:
    """Seconds from each save to its verdict. `edited`: the file, relative to the sample's folder;
    `old` → `new`: the edit that fails `case`."""
    from agentdiff.core.worker.pool import WorkerPool
    from agentdiff.tui.app import create_app

    root = Path(tempfile.mkdtemp(prefix="agentdiff-bench-"))
    shutil.copytree(SAMPLES / sample, root / "sample_agents" / sample, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    shutil.copy(SAMPLES / "demo_model.py", root / "sample_agents" / "demo_model.py")
    path = root / "sample_agents" / sample / edited
    times: list[float] = []

    async def go() -> None:
        pool = WorkerPool(timeout=60)
        await pool.start()
        app = create_app(root, [root / "sample_agents"], pool=pool, project="bench")
        async with app.run_test(size=(160, 48)) as pilot:
            await app.workbench.wait()
            await pilot.pause(0.5)
            original = path.read_text()
            for i in range(8):
                expect_fail = i % 2 == 0
                before = app.workbench.cases[case].run
                path.write_text(original.replace(old, new) if expect_fail else original)
                tick = time.perf_counter()
                while True:
                    state = app.workbench.cases[case]
                    busy = any(s.running for s in app.workbench.cases.values()) if every_case else state.running
                    if state.run is not before and not busy and (state.status.value == "failed") == expect_fail:
                        break
                    await asyncio.sleep(0.005)
                await pilot.pause()
                times.append(time.perf_counter() - tick)
                await asyncio.sleep(0.3)
        pool.close()

    try:
        asyncio.run(go())
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return times
