"""Writing baselines: only on an explicit accept or record, atomically, journaled for undo.

Each write is all-or-nothing over its files: every file is checked against the digest it had when
it was read (a file changed on disk since is refused, never overwritten), the previous versions are
saved in the journal under `.agentdiff/journal/`, then each file is written to a temporary file,
fsynced and renamed over the old one. `undo_last` puts the previous versions back, refusing in
turn if a file changed since the write.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

JOURNAL_DIR = Path(".agentdiff") / "journal"


class BaselineConflict(Exception):
    """A file changed on disk since it was read; nothing was written."""


class BaselineWriteError(Exception):
    """The files could not be written (a full disk, no permission); nothing was written."""


@dataclass(frozen=True)
class FileWrite:
    path: Path
    text: str
    expected_sha256: Optional[str]  # the digest when read; None: the file must not exist yet


@dataclass(frozen=True)
class JournalEntry:
    id: str
    reason: str
    time: float
    files: tuple[dict, ...]  # {"path", "before": sha or None, "after": sha, "backup": name or None}


def sha256_of(path: Path) -> Optional[str]:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def atomic_write(path: Path, text: str, durable: bool = True) -> None:
    """Replace `path` with `text` all at once; `durable` also waits for the disk (baselines do)."""
    temp = _stage(path, text, durable)
    try:
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    if durable:
        _sync_dir(path.parent)


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _stage(path: Path, text: str, durable: bool = True) -> str:
    """Write `text` to a temporary file beside `path` (on disk, with `durable`); returns its name.
    It gets the file's permissions, or the usual ones for a new file (mkstemp makes it private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
        os.chmod(temp, mode)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    return temp


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def write_baseline(writes: Sequence[FileWrite], root: Path, reason: str) -> JournalEntry:
    """Write all `writes` or none; returns the journal entry that can undo them.

    Every new text is first staged on disk beside its file; only when all are staged (and the
    journal holds the previous versions) are they renamed into place. A failure before that (a full
    disk, a read-only folder) leaves every baseline as it was and says why; a kill at any moment
    leaves each file whole, old or new."""
    for write in writes:
        current = sha256_of(write.path)
        if current != write.expected_sha256:
            what = "was created" if write.expected_sha256 is None else "changed on disk"
            raise BaselineConflict(f"{_display(write.path, root)} {what} since it was read; nothing was written")
    entry_id = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}-{time.monotonic_ns() % 1_000_000:06d}"
    folder = root / JOURNAL_DIR / entry_id
    staged: list[tuple[str, Path]] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        files = []
        for index, write in enumerate(writes):
            backup = None
            if write.path.exists():
                backup = f"{index}-{write.path.name}"
                atomic_write(folder / backup, write.path.read_text(encoding="utf-8"))
            files.append(
                {
                    "path": _display(write.path, root),
                    "before": write.expected_sha256,
                    "after": hashlib.sha256(write.text.encode("utf-8")).hexdigest(),
                    "backup": backup,
                }
            )
        for write in writes:
            staged.append((_stage(write.path, write.text), write.path))
        entry = JournalEntry(entry_id, reason, time.time(), tuple(files))
        atomic_write(folder / "entry.json", json.dumps(entry.__dict__, indent=2))
    except OSError as exc:
        for temp, _ in staged:
            if os.path.exists(temp):
                os.unlink(temp)
        shutil.rmtree(folder, ignore_errors=True)
        where = getattr(exc, "filename", None) or ""
        raise BaselineWriteError(f"nothing was written: {exc.strerror or exc}{f' ({where})' if where else ''}") from exc
    for temp, path in staged:
        os.replace(temp, path)
    for directory in {path.parent for _, path in staged}:
        _sync_dir(directory)
    return entry


def _sync_dir(directory: Path) -> None:
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def journal_entries(root: Path) -> list[JournalEntry]:
    folder = root / JOURNAL_DIR
    entries = []
    for item in sorted(folder.glob("*/entry.json")) if folder.is_dir() else []:
        data = json.loads(item.read_text(encoding="utf-8"))
        if not data.get("undone"):
            entries.append(JournalEntry(data["id"], data["reason"], data["time"], tuple(data["files"])))
    return entries


def undo_last(root: Path) -> Optional[JournalEntry]:
    """Put back what the newest journaled write replaced; None when there is nothing to undo."""
    entries = journal_entries(root)
    if not entries:
        return None
    entry = entries[-1]
    folder = root / JOURNAL_DIR / entry.id
    for file in entry.files:
        path = root / file["path"]
        if sha256_of(path) != file["after"]:
            raise BaselineConflict(f"{file['path']} changed since it was written; undo would lose that change")
    for file in entry.files:
        path = root / file["path"]
        if file["backup"] is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, (folder / file["backup"]).read_text(encoding="utf-8"))
    data = json.loads((folder / "entry.json").read_text(encoding="utf-8"))
    data["undone"] = True
    atomic_write(folder / "entry.json", json.dumps(data, indent=2))
    return entry
