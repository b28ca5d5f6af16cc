"""Building the app for tests: a copy of sample agents, the session's worker pool, a scripted
change source, a fake editor, a frozen clock."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import AsyncIterator

from agentdiff.tui.app import create_app
from conftest import ROOT

SAMPLES = ROOT / "sample_agents"


def copy_samples(target: Path, agents=("customer_service", "home_automation")) -> Path:
    """A project holding some sample agents (and the demo model); returns the samples folder."""
    folder = target / "sample_agents"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLES / "demo_model.py", folder / "demo_model.py")
    for agent in agents:
        shutil.copytree(SAMPLES / agent, folder / agent, ignore=shutil.ignore_patterns("__pycache__", ".adk", "*.agentdiff-record.json"))
    return folder


class ScriptedChanges:
    """A change source the test feeds: `await changes.push(path, …)`."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()

    async def push(self, *paths: Path) -> None:
        await self.queue.put({Path(p) for p in paths})

    def __call__(self) -> AsyncIterator[set[Path]]:
        async def gen():
            while True:
                yield await self.queue.get()

        return gen()


class FakeEditor:
    def __init__(self) -> None:
        self.opened: list[tuple[Path, int | None]] = []

    def __call__(self, path: Path, line: int | None) -> None:
        self.opened.append((path, line))


def make_app(root: Path, pool, changes: ScriptedChanges | None = None, editor: FakeEditor | None = None):
    return create_app(
        root,
        [root / "sample_agents"],
        pool=pool,
        changes=changes,
        watch=changes is not None,
        editor=editor or FakeEditor(),
        clock=lambda: 1_800_000_000.0,
        project="samples",
    )


async def settle(app, pilot) -> None:
    """Until every run has finished and the screen shows it."""
    for _ in range(3):
        await app.workbench.wait()
        await pilot.pause(0.15)
