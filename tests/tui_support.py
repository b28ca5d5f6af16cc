"""Building the app for tests: a copy of sample agents, a pool (the fake `CannedPool`, or the
session's real worker pool), a scripted change source, a fake editor, a frozen clock; and waiting
for the app, bounded, on what it is doing rather than for fixed times."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import AsyncIterator, Callable, Optional

from agentdiff.core.run.options import RunOptions
from agentdiff.tui.app import create_app
from conftest import ROOT
from fake_pool import PROMPT_EDIT

SAMPLES = ROOT / "sample_agents"


def copy_samples(target: Path, agents=("customer_service", "home_automation")) -> Path:
    """A project holding some sample agents (and the demo model); returns the samples folder."""
    folder = target / "sample_agents"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLES / "demo_model.py", folder / "demo_model.py")
    for agent in agents:
        shutil.copytree(SAMPLES / agent, folder / agent, ignore=shutil.ignore_patterns("__pycache__", ".adk", "*.agentdiff-record.json"))
    return folder


def edit_the_home_prompt(samples: Path) -> Path:
    """home_automation's prompt edited as in the canned scenario `prompt_edit`; returns the prompt."""
    prompt = samples / "home_automation" / "prompt.md"
    old, new = PROMPT_EDIT
    prompt.write_text(prompt.read_text().replace(old, new))
    return prompt


class ScriptedChanges:
    """A change source the test feeds: `await changes.push(path, …)`; `await changes.handled()`
    returns once the app has taken every batch pushed and asked for the next (so what they
    caused, runs started or nothing, has happened)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()

    async def push(self, *paths: Path) -> None:
        await self.queue.put({Path(p) for p in paths})

    async def handled(self, timeout: float = 10.0) -> None:
        await asyncio.wait_for(self.queue.join(), timeout)

    def __call__(self) -> AsyncIterator[set[Path]]:
        async def gen():
            while True:
                batch = await self.queue.get()
                try:
                    yield batch
                finally:
                    self.queue.task_done()  # the consumer is back for the next batch

        return gen()


class FakeEditor:
    def __init__(self) -> None:
        self.opened: list[tuple[Path, int | None]] = []
        self.columns: list[int | None] = []

    def __call__(self, path: Path, line: int | None, col: int | None = None) -> None:
        self.opened.append((path, line))
        self.columns.append(col)


def screen_text(app) -> str:
    """The screen's text as one string (the SVG's spans joined, so a styled run of words reads as one)."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>|\n", "", app.export_screenshot())).replace("\xa0", " ")


def make_app(
    root: Path, pool, changes: ScriptedChanges | None = None, editor: FakeEditor | None = None, options: Optional[RunOptions] = None
):
    return create_app(
        root,
        [root / "sample_agents"],
        pool=pool,
        changes=changes,
        watch=changes is not None,
        editor=editor or FakeEditor(),
        clock=lambda: 1_800_000_000.0,
        options=options,
        project="samples",
    )


def _busy(app) -> list[str]:
    """What the app is still doing: cases without a verdict yet or running, and workers (accept,
    undo, re-record…) not finished. The watcher's worker runs for ever: it is never waited on."""
    cases = [case_id for case_id, state in app.workbench.cases.items() if state.running or state.run is None]
    workers = [worker.name for worker in app.workers if worker.group != "watch" and not worker.is_finished]
    return cases + workers


def _no_misses(app) -> None:
    misses = getattr(app.workbench.pool, "misses", None)
    assert not misses, f"the fake pool had no answer for {misses}"


async def settle(app, pilot, timeout: float = 10.0) -> None:
    """Until every case has its verdict, nothing runs or writes any more, and the screen shows it."""
    loop = asyncio.get_running_loop()
    deadline, quiet = loop.time() + timeout, 0
    while quiet < 3:  # quiet three polls in a row: a key's worker or a change's runs had time to start
        _no_misses(app)
        busy = _busy(app)
        quiet = 0 if busy else quiet + 1
        assert loop.time() < deadline, f"still busy after {timeout} s: {busy[:5]}"
        await pilot.pause(0.02)


async def until(pilot, condition: Callable[[], object], timeout: float = 10.0, what: str = "",
                state: Callable[[], object] = lambda: "") -> None:
    """Until `condition()` holds (after a key, a change, a write), polling; fails after `timeout`,
    saying `state()` (what the test looks at) as it was then."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        _no_misses(pilot.app)
        assert loop.time() < deadline, f"timed out after {timeout} s waiting for {what or condition} {state()}"
        await pilot.pause(0.02)
