"""Watching files: watchfiles' events as batches of changed paths, bursts coalesced (an editor's
temp-file-and-rename, a `git checkout` of a thousand files) into one batch, editor litter and
agentdiff's own folders left out. The change source is a plain callable, so tests script it."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import AsyncIterator, Callable, Optional, Sequence

from agentdiff.core.workbench.triage import TRIAGE_FILE

IGNORED_DIRS = frozenset({".git", ".venv", "venv", "__pycache__", ".agentdiff", ".adk", "node_modules", ".mypy_cache", ".pytest_cache", ".hypothesis", ".ruff_cache"})
IGNORED_SUFFIXES = (".pyc", ".pyo", ".swp", ".swo", ".swx", "~", ".tmp", ".part", ".crdownload", ".DS_Store")
# agentdiff's own files beside the baselines: writing them is never a reason to run anything
OWN_FILES = ("agentdiff-record.json", TRIAGE_FILE)


def interesting(path: str) -> bool:
    """Not editor litter (swap, backup and temporary files) nor a folder agentdiff ignores."""
    name = os.path.basename(path)
    if name.startswith(".#") or name.startswith("#") or name.endswith(IGNORED_SUFFIXES) or name in ("4913",) or name.endswith(OWN_FILES):
        return False
    parts = Path(path).parts
    return not any(part in IGNORED_DIRS for part in parts)


def watched(path: str) -> bool:
    """What the watcher reports: what is `interesting`, and the triage file (read again, never run on)."""
    return interesting(path) or os.path.basename(path) == TRIAGE_FILE


ChangeSource = Callable[[], AsyncIterator[set[Path]]]

#: A folder with one of these is a project's root: code the agents import may lie anywhere in it.
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", ".git")


def watched_folders(root: Path, paths: Sequence[Path]) -> list[Path]:
    """What to watch: the paths (cases, agents), and the project's root when it is one (a shared module
    or prompt outside the paths is what agents import and read), each folder once."""
    wanted = [Path(os.path.abspath(p)) for p in paths]
    top = Path(os.path.abspath(root))
    if any((top / marker).exists() for marker in PROJECT_MARKERS):
        wanted.append(top)
    kept: list[Path] = []
    for path in sorted(set(wanted), key=lambda p: len(p.parts)):
        if not any(k == path or k in path.parents for k in kept):
            kept.append(path)
    return kept


#: A poller keeps a file's time in whole seconds: a second save in the second of the first looks the same
#: to it (watchfiles polls on WSL, or with WATCHFILES_FORCE_POLLING). So each changed file is looked at
#: again once that second is over, and given again if it changed meanwhile.
SECOND_LOOK_S = 1.1


class SecondLook:
    """Each file of a batch as it was given (time in nanoseconds, size, inode) until it is looked at again:
    so a save the watcher missed is given once, and one it did not miss is not given twice."""

    def __init__(self) -> None:
        self.given: dict[Path, tuple[int, int, int]] = {}
        self.looks: dict[Path, int] = {}  # the looks to come at each file
        self.looked: set[Path] = set()  # the files a look gave last (the watcher may report the same save after)

    @staticmethod
    def state(path: Path) -> Optional[tuple[int, int, int]]:
        try:
            found = path.stat()
        except OSError:
            return None
        return (found.st_mtime_ns, found.st_size, found.st_ino) if stat.S_ISREG(found.st_mode) else None

    def keep(self, batch: set[Path], looked: Optional[set[Path]] = None) -> list[Path]:
        """The batch's files, each kept as given (`looked`: by a look), a look at each to come."""
        files = []
        self.looked = (self.looked - batch) | (looked or set())
        for path in batch:
            state = self.state(path)
            if state is not None:
                self.given[path] = state
                self.looks[path] = self.looks.get(path, 0) + 1
                files.append(path)
            else:  # gone (or a folder): given as it is now, nothing to look at again
                self.given.pop(path, None)
        return files

    def new(self, batch: set[Path]) -> set[Path]:
        """The watcher's batch but the files a look gave already as they are (the look came first). A
        file the watcher gave is given again when it reports it again (a file system that keeps whole
        seconds may show two saves of one size alike)."""
        return {path for path in batch if path not in self.looked or self.state(path) != self.given.get(path)}

    def changed(self, paths: Sequence[Path]) -> set[Path]:
        """A look at `paths`: those that differ from how they were last given (a file no look waits for
        any more is forgotten)."""
        out = {path for path in paths if path in self.given and self.state(path) != self.given[path]}
        for path in paths:
            self.looks[path] = self.looks.get(path, 1) - 1
            if self.looks[path] <= 0:
                self.looks.pop(path, None)
                self.given.pop(path, None)
                self.looked.discard(path)
        return out


def watchfiles_source(paths: Sequence[Path], debounce_ms: int = 20, force_polling: Optional[bool] = None,
                      second_look_s: float = SECOND_LOOK_S) -> ChangeSource:
    """A change source on watchfiles: each item is one coalesced batch of changed paths, and the files
    of each batch that changed again in the second after it (`SecondLook`)."""

    async def changes() -> AsyncIterator[set[Path]]:
        from watchfiles import awatch

        existing = [str(p) for p in paths if Path(p).exists()]
        if not existing:
            return
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[object] = asyncio.Queue()

        async def pump() -> None:
            try:
                async for batch in awatch(
                    *existing,
                    watch_filter=lambda _change, path: watched(path),
                    debounce=debounce_ms,
                    step=10,
                    force_polling=force_polling,
                    recursive=True,
                    ignore_permission_denied=True,
                ):
                    queue.put_nowait({Path(path) for _change, path in batch})
            finally:
                queue.put_nowait(None)

        pumping = asyncio.ensure_future(pump())
        look, timers, ended = SecondLook(), [], False
        try:
            while not ended:
                items = [await queue.get()]
                while not queue.empty():  # what came while the last batch was handled: one batch, as before
                    items.append(queue.get_nowait())
                ended = None in items
                reported: set[Path] = set()
                looked: set[Path] = set()
                for item in items:
                    if isinstance(item, list):
                        looked |= look.changed(item)
                    elif item is not None:
                        reported |= look.new(item)
                batch = reported | looked
                if not batch:
                    continue
                files = look.keep(batch, looked - reported)
                timers = [timer for timer in timers if timer.when() > loop.time()]
                if files:
                    timers.append(loop.call_later(second_look_s, queue.put_nowait, files))
                yield batch
            pumping.result()  # the watcher's own failure, as it raised it
        finally:
            pumping.cancel()
            for timer in timers:
                timer.cancel()

    return changes
