"""Watching files, and deciding what a change means: which cases to re-run, re-score, reload.

`classify` is a pure function from changed paths and what is known about each case to selections,
each with its reason ("re-run: sample_agents/home/prompt.md changed"):

* `test_config.json` changed → reload; the cases whose criteria changed are re-scored from their
  cached runs, with no agent call;
* an eval set changed → reload it: cases whose content changed are re-scored against the cached run
  (or run, when there is none), added cases run, removed cases drop;
* agent code, or any file an agent read during its last run (prompts, YAML, data), changed → re-run
  that agent's cases (a conformance case replays);
* a conformance case's spec or recordings changed → reload it and replay it;
* anything else new (a new case folder, a new eval set) → rediscover.

`watch_changes` turns watchfiles' events into batches of paths, coalescing bursts (an editor's
temp-file-and-rename, a `git checkout` of a thousand files) into one batch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import AsyncIterator, Callable, Iterable, Literal, Optional, Sequence

Action = Literal["run", "reload"]  # a reload re-scores the cases whose expectations or criteria changed

IGNORED_DIRS = frozenset({".git", ".venv", "venv", "__pycache__", ".agentdiff", ".adk", "node_modules", ".mypy_cache", ".pytest_cache", ".hypothesis", ".ruff_cache"})
IGNORED_SUFFIXES = (".pyc", ".pyo", ".swp", ".swo", ".swx", "~", ".tmp", ".part", ".crdownload", ".DS_Store")


def interesting(path: str) -> bool:
    """Not editor litter (swap, backup and temporary files) nor a folder agentdiff ignores."""
    name = os.path.basename(path)
    if name.startswith(".#") or name.startswith("#") or name.endswith(IGNORED_SUFFIXES) or name in ("4913",):
        return False
    parts = Path(path).parts
    return not any(part in IGNORED_DIRS for part in parts)


@dataclass(frozen=True)
class CaseFiles:
    """What a case depends on, as absolute paths."""

    case_id: str
    sources: frozenset[Path]  # its eval set file, or its spec / recordings / session files
    config: Optional[Path] = None  # the test_config.json it is scored with
    agent_dir: Optional[Path] = None  # its agent's package folder
    files_read: frozenset[Path] = frozenset()  # what its agent read during its last run


@dataclass
class Selection:
    action: Action
    case_ids: list[str] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)  # for reload: the files or folders to load again
    reason: str = ""


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def classify(changed: Iterable[Path], cases: Sequence[CaseFiles], root: Path) -> list[Selection]:
    changed = [Path(os.path.abspath(p)) for p in changed if interesting(str(p))]
    if not changed:
        return []
    known = {s for c in cases for s in c.sources} | {f for c in cases for f in c.files_read}
    # a path that is gone and was never read is an editor's or a tool's temporary file
    changed = [p for p in changed if p.exists() or p in known or p.suffix == ".py"]
    changed.sort(key=lambda p: not p.exists())  # reasons name a file that is there
    selections: list[Selection] = []
    by_source: dict[Path, list[str]] = {}
    for case in cases:
        for source in case.sources:
            by_source.setdefault(source, []).append(case.case_id)
    reload_paths: list[Path] = []
    rerun: dict[str, Path] = {}
    for path in changed:
        if path.name == "test_config.json":  # reloading re-scores the cases whose criteria changed
            reload_paths.append(path)
            continue
        if path in by_source or _case_file(path):  # an eval set may live inside its agent's package
            reload_paths.append(path)
            continue
        for case in cases:
            if path in case.files_read or (case.agent_dir is not None and _inside(path, case.agent_dir)):
                rerun.setdefault(case.case_id, path)
    if reload_paths:
        shown = ", ".join(sorted({_shown(p, root) for p in reload_paths})[:3])
        selections.append(Selection("reload", paths=sorted(set(reload_paths)), reason=f"{shown} changed"))
    groups: dict[Path, list[str]] = {}
    for case_id, path in rerun.items():
        groups.setdefault(path, []).append(case_id)
    for path, ids in groups.items():
        selections.append(Selection("run", ids, reason=f"re-run: {_shown(path, root)} changed"))
    return selections


def _case_file(path: Path) -> bool:
    name = path.name
    return name == "spec.yaml" or name.endswith((".evalset.json", ".test.json")) or (name.startswith("generated-") and name.endswith(".yaml"))


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


ChangeSource = Callable[[], AsyncIterator[set[Path]]]


def watchfiles_source(paths: Sequence[Path], debounce_ms: int = 20, force_polling: Optional[bool] = None) -> ChangeSource:
    """A change source on watchfiles: each item is one coalesced batch of changed paths."""

    async def changes() -> AsyncIterator[set[Path]]:
        from watchfiles import awatch

        existing = [str(p) for p in paths if Path(p).exists()]
        if not existing:
            return
        async for batch in awatch(
            *existing,
            watch_filter=lambda _change, path: interesting(path),
            debounce=debounce_ms,
            step=10,
            force_polling=force_polling,
            recursive=True,
            ignore_permission_denied=True,
        ):
            yield {Path(path) for _change, path in batch}

    return changes
