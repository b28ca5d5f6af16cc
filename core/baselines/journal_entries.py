"""The journal's entries on disk (`.agentdiff/journal/<seq>/entry.json` and the texts beside it): read
and checked (an entry is data, and one that cannot be read, or that names a file outside the project,
is an `UnreadableEntry`, never followed), saved and staged, numbered, and pruned."""

from __future__ import annotations

import dataclasses

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr

from agentdiff.core.baselines.file_writes import atomic_write, stage
from agentdiff.core.formats.set_aside import linked_state
from agentdiff.core.formats.source_file import read_regular, resolved

JOURNAL_DIR = Path(".agentdiff") / "journal"


@dataclass(frozen=True)
class JournalEntry:
    id: str
    reason: str
    time: float
    files: tuple[dict, ...]  # {"path", "before": sha or None, "after": sha or None, "backup", "new"}
    seq: int = 0
    state: str = "applied"  # pending | applied | undoing | undone | redoing | dropped
    author: str = ""  # who asked for the write when it was not the person at the keyboard: an assistant's MCP client name


# --- the entries ---------------------------------------------------------------------------------
def entry_folder(root: Path, entry: JournalEntry) -> Path:
    return root / JOURNAL_DIR / entry.id


def save_entry(root: Path, entry: JournalEntry) -> None:
    atomic_write(entry_folder(root, entry) / "entry.json", json.dumps(entry.__dict__, indent=2))


def stage_entry(root: Path, entry: JournalEntry) -> tuple[str, Path]:
    """`entry` written beside its `entry.json`, to be renamed over it later (`commit_staged`): the space a
    write needs is taken before any file changes, so a full disk fails it before, never halfway."""
    path = entry_folder(root, entry) / "entry.json"
    return stage(path, json.dumps(entry.__dict__, indent=2)), path


def with_state(entry: JournalEntry, state: str) -> JournalEntry:
    return dataclasses.replace(entry, state=state)


STATES = ("pending", "applied", "undoing", "undone", "redoing", "dropped")


class _File(BaseModel):
    model_config = ConfigDict(extra="allow")
    path: StrictStr
    before: Optional[StrictStr] = None
    after: Optional[StrictStr] = None
    backup: Optional[StrictStr] = None
    new: Optional[StrictStr] = None
    staged: Optional[StrictStr] = None


class _Entry(BaseModel):
    model_config = ConfigDict(extra="allow")
    reason: StrictStr
    time: Union[StrictInt, StrictFloat]
    files: list[_File]
    seq: StrictInt = 0
    state: Optional[Literal[STATES]] = None  # type: ignore[valid-type]
    undone: Optional[bool] = None  # the first journal's flag
    author: Optional[StrictStr] = None


@dataclass(frozen=True)
class UnreadableEntry:
    """A journal folder whose `entry.json` cannot be read (cut short, `[]`, wrong types): what it wrote
    is unknown, so undo never steps over it to an older entry."""

    id: str
    seq: int
    why: str


def read_entries(root: Path) -> tuple[list[JournalEntry], list[UnreadableEntry]]:
    folder = root / JOURNAL_DIR
    if linked_state(root, "journal") is not None:  # never followed: the writes refuse and say why
        return [], []
    entries, unreadable = [], []
    for item in folder.glob("*/entry.json") if folder.is_dir() else []:
        seq = int(item.parent.name) if item.parent.name.isdigit() else 0
        try:
            data = _Entry.model_validate_json(read_regular(item))
        except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else _first_error(exc)
            unreadable.append(UnreadableEntry(item.parent.name, seq, why))
            continue
        outside = next((f.path for f in data.files if not _inside(f) or not _in_project(root, f.path)), None)
        if outside is not None:  # a planted or foreign entry: never followed out of the project
            unreadable.append(UnreadableEntry(item.parent.name, seq, f"it names a file outside the project or its folder ({outside!r})"))
            continue
        state = data.state or ("undone" if data.undone else "applied")
        files = tuple(file.model_dump(exclude_none=False) for file in data.files)
        entries.append(JournalEntry(item.parent.name, data.reason, float(data.time), files, data.seq, state, data.author or ""))
    entries.sort(key=lambda e: (e.seq, e.time, e.id))
    return entries, unreadable


def _inside(file: "_File") -> bool:
    """Whether an entry's file stays in the project (a relative path, no `..`) and its stored and
    staged copies are plain names in their folders: an entry is data on disk, and a planted one must
    not make the next start write or delete a file elsewhere."""
    parts = Path(file.path).parts
    if not file.path or os.path.isabs(file.path) or ".." in parts or "\0" in file.path:
        return False
    return all(name is None or (name and "/" not in name and "\\" not in name and name not in (".", "..") and "\0" not in name)
               for name in (file.backup, file.new, file.staged))


def _in_project(root: Path, path: str) -> bool:
    """Whether a journaled path, resolved (links followed), is a file of the project's own: inside it,
    and not in `.git` (a git config is code git runs) or agentdiff's `.agentdiff`."""
    top = resolved(root)
    real = resolved(root / path)
    if not real.is_relative_to(top):
        return False
    return not ({".git", ".agentdiff"} & set(real.relative_to(top).parts) or {".git", ".agentdiff"} & set(Path(path).parts))


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where + ': ' if where else ''}{first['msg']}"
    return str(exc)


def journal_entries(root: Path, states: Optional[Sequence[str]] = None) -> list[JournalEntry]:
    """Every readable entry, oldest first (by `seq`); with `states`, only those in them. Entries of the
    first journal (named by time, `undone` flag) are read in their time order, before the numbered ones."""
    entries, _ = read_entries(root)
    return [e for e in entries if states is None or e.state in states]


def next_seq(root: Path) -> int:
    """After every entry and every numbered folder (one a crash left before its entry was saved)."""
    folder = root / JOURNAL_DIR
    numbered = [int(p.name) for p in folder.iterdir() if p.name.isdigit()] if folder.is_dir() else []
    return max([e.seq for e in journal_entries(root)] + numbered, default=0) + 1


def leftovers(root: Path) -> list[Path]:
    if linked_state(root, "journal") is not None:
        return []
    """Journal folders a write killed before its entry was saved (the lock is held while one is made)."""
    folder = root / JOURNAL_DIR
    try:
        return [p for p in folder.iterdir() if p.is_dir() and not (p / "entry.json").exists()]
    except OSError:
        return []


#: The journal keeps every entry undo or redo can still reach, the newest `KEEP_ENTRIES` of them at
#: least; beyond those, entries older than `KEEP_DAYS` go, and entries nothing can reach any more
#: (dropped, or undone and then written past) go once a day old.
KEEP_ENTRIES = 200
KEEP_DAYS = 30


def prune_journal(root: Path, now: Optional[float] = None) -> int:
    """Remove what the journal no longer needs (call with the lock held); how many entries went."""
    now = time.time() if now is None else now
    entries, _ = read_entries(root)
    newest_applied = max((e.seq for e in entries if e.state == "applied"), default=0)
    reachable = [e for e in entries if e.state == "applied" or (e.state == "undone" and e.seq > newest_applied)]
    unreachable = [e for e in entries if e not in reachable and e.state not in ("pending", "undoing", "redoing")]
    gone = [e for e in unreachable if now - e.time > 86_400]
    gone += [e for e in reachable[:-KEEP_ENTRIES] if now - e.time > KEEP_DAYS * 86_400]
    for entry in gone:
        shutil.rmtree(entry_folder(root, entry), ignore_errors=True)
    return len(gone)
