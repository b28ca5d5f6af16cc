"""Watching files: watchfiles' events as batches of changed paths, bursts coalesced (an editor's
temp-file-and-rename, a `git checkout` of a thousand files) into one batch, editor litter and
agentdiff's own folders left out. The change source is a plain callable, so tests script it."""

from __future__ import annotations

import os
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


def watchfiles_source(paths: Sequence[Path], debounce_ms: int = 20, force_polling: Optional[bool] = None) -> ChangeSource:
    """A change source on watchfiles: each item is one coalesced batch of changed paths."""

    async def changes() -> AsyncIterator[set[Path]]:
        from watchfiles import awatch

        existing = [str(p) for p in paths if Path(p).exists()]
        if not existing:
            return
        async for batch in awatch(
            *existing,
            watch_filter=lambda _change, path: watched(path),
            debounce=debounce_ms,
            step=10,
            force_polling=force_polling,
            recursive=True,
            ignore_permission_denied=True,
        ):
            yield {Path(path) for _change, path in batch}

    return changes
