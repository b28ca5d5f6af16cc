"""Writing baselines: only on an explicit accept or record, as one transaction, journaled for undo and redo.

* **One writer per project.** Every write, undo and redo holds `.agentdiff/lock` (an advisory lock);
  another process waits up to `LOCK_WAIT` seconds, then is refused with a clear message.
* **Checked.** Every file is compared with the digest it had when it was read: a file changed on disk
  since is refused, never overwritten.
* **A transaction.** The entry is journaled first (`pending`, with the old and new text of every file),
  then each new text is staged beside its file and renamed into place, then the entry says `applied`.
  After a crash at any point, the next journal operation rolls a `pending` entry back (files put back
  as they were, staged files removed) and an `undoing`/`redoing` one forward: every file is old or new
  as one set, and a journal entry exists only for a write that happened.
* **Ordered.** Entries are numbered (`seq`), one per user action (a batch accept is one entry). Undo
  takes the newest applied entry; redo the most recently undone one; a new write forgets what could
  be redone. An entry that cannot be undone (a file changed after it) can be dropped, so older ones
  can be undone.

`AGENTDIFF_FAULT=<step>` ends the process at that step (for the crash tests): `intent`, `staged`,
`renamed-1` (after the first rename), `undoing`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Literal, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr

from agentdiff.core.formats.set_aside import SET_ASIDE_DIR, add_notice, set_aside
from agentdiff.core.formats.source_file import read_regular, resolved

JOURNAL_DIR = Path(".agentdiff") / "journal"
LOCK_FILE = Path(".agentdiff") / "lock"
LOCK_WAIT = 5.0


class BaselineConflict(Exception):
    """A file changed on disk since it was read; nothing was written."""


class BaselineWriteError(Exception):
    """The files could not be written (a full disk, no permission, another writer); nothing was written."""


class UndoBlocked(BaselineConflict):
    """The newest entry cannot be undone: a file changed after it. `drop_last` lets older ones be undone."""


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
    files: tuple[dict, ...]  # {"path", "before": sha or None, "after": sha or None, "backup", "new"}
    seq: int = 0
    state: str = "applied"  # pending | applied | undoing | undone | redoing | dropped


def sha256_of(path: Path) -> Optional[str]:
    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except FileNotFoundError:
        return None


def read_exact(path: Path) -> str:
    """A text file as it is on disk: line endings untouched (`read_text` would make `\r\n` `\n`)."""
    return read_regular(path).decode("utf-8")


def _sha(text: Optional[str]) -> Optional[str]:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _fault(step: str) -> None:
    if os.environ.get("AGENTDIFF_FAULT") == step:
        os._exit(137)


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
        return str(resolved(path))


def _stage(path: Path, text: str, durable: bool = True, name: Optional[str] = None) -> str:
    """Write `text` to a temporary file beside `path` (`name`, else a fresh one); returns its path.
    It gets the file's permissions, or the usual ones for a new file (mkstemp makes it private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if name is None:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    else:
        temp = str(path.parent / name)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
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


def _sync_dir(directory: Path) -> None:
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


@contextmanager
def project_lock(root: Path, wait: float = LOCK_WAIT) -> Iterator[None]:
    """The project's one-writer lock; `BaselineWriteError` when another process holds it past `wait`."""
    path = root / LOCK_FILE
    if os.path.lexists(path.parent) and not path.parent.is_dir():
        raise BaselineWriteError(f"nothing was written: {_display(path.parent, root)} is a file, not a folder; agentdiff keeps its "
                                 "journal, runs and history in that folder: move the file away")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
        handle = os.fdopen(fd, "a+", encoding="utf-8")
    except OSError as exc:
        if os.path.islink(path):
            raise BaselineWriteError(f"nothing was written: {_display(path, root)} is a symlink; agentdiff's lock is a file "
                                     "of its own: remove the link") from exc
        raise BaselineWriteError(f"nothing was written: {exc.strerror or exc} ({path})") from exc
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "another process"
                    raise BaselineWriteError(f"another agentdiff ({holder}) is writing to this project; nothing was written, try again") from None
                time.sleep(0.05)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
        except OSError:
            pass  # who holds it is a courtesy to the next writer; a full disk must not fail the lock
        yield
    finally:
        handle.close()  # closing releases the lock


# --- the entries ---------------------------------------------------------------------------------


def _folder(root: Path, entry: JournalEntry) -> Path:
    return root / JOURNAL_DIR / entry.id


def _save(root: Path, entry: JournalEntry) -> None:
    atomic_write(_folder(root, entry) / "entry.json", json.dumps(entry.__dict__, indent=2))


def _stage_entry(root: Path, entry: JournalEntry) -> tuple[str, Path]:
    """`entry` written beside its `entry.json`, to be renamed over it later (`_commit`): the space a
    write needs is taken before any file changes, so a full disk fails it before, never halfway."""
    path = _folder(root, entry) / "entry.json"
    return _stage(path, json.dumps(entry.__dict__, indent=2)), path


def _commit(staged: Sequence[tuple[str, Path]]) -> None:
    for temp, path in staged:
        os.replace(temp, path)
    for directory in {path.parent for _, path in staged}:
        _sync_dir(directory)


def _discard(staged: Sequence[tuple[Optional[str], Path]]) -> None:
    for temp, _ in staged:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)


def _nothing_written(exc: OSError, verb: str = "written") -> BaselineWriteError:
    where = getattr(exc, "filename", None) or ""
    return BaselineWriteError(f"nothing was {verb}: {exc.strerror or exc}{f' ({where})' if where else ''}")


def _with(entry: JournalEntry, state: str) -> JournalEntry:
    return JournalEntry(entry.id, entry.reason, entry.time, entry.files, entry.seq, state)


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


@dataclass(frozen=True)
class UnreadableEntry:
    """A journal folder whose `entry.json` cannot be read (cut short, `[]`, wrong types): what it wrote
    is unknown, so undo never steps over it to an older entry."""

    id: str
    seq: int
    why: str


def _read_entries(root: Path) -> tuple[list[JournalEntry], list[UnreadableEntry]]:
    folder = root / JOURNAL_DIR
    entries, unreadable = [], []
    for item in folder.glob("*/entry.json") if folder.is_dir() else []:
        seq = int(item.parent.name) if item.parent.name.isdigit() else 0
        try:
            data = _Entry.model_validate_json(read_regular(item))
        except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else _first_error(exc)
            unreadable.append(UnreadableEntry(item.parent.name, seq, why))
            continue
        outside = next((f.path for f in data.files if not _inside(f)), None)
        if outside is not None:  # a planted or foreign entry: never followed out of the project
            unreadable.append(UnreadableEntry(item.parent.name, seq, f"it names a file outside the project or its folder ({outside!r})"))
            continue
        state = data.state or ("undone" if data.undone else "applied")
        files = tuple(file.model_dump(exclude_none=False) for file in data.files)
        entries.append(JournalEntry(item.parent.name, data.reason, float(data.time), files, data.seq, state))
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
    entries, _ = _read_entries(root)
    return [e for e in entries if states is None or e.state in states]


def _unreadable_after(root: Path, seq: int, verb: str) -> None:
    """`UndoBlocked` when an entry newer than `seq` cannot be read: stepping over it to an older one
    would undo the wrong write."""
    _, unreadable = _read_entries(root)
    newer = [u for u in unreadable if u.seq > seq]
    if newer:
        bad = max(newer, key=lambda u: u.seq)
        raise UndoBlocked(
            f"cannot {verb}: the newest journal entry ({(JOURNAL_DIR / bad.id / 'entry.json').as_posix()}) cannot be read ({bad.why}), "
            f"so what it wrote is unknown; `agentdiff undo --drop` (D in the workbench) sets it aside under "
            f"{SET_ASIDE_DIR.as_posix()}/ and older entries can be undone"
        )


def _next_seq(root: Path) -> int:
    """After every entry and every numbered folder (one a crash left before its entry was saved)."""
    folder = root / JOURNAL_DIR
    numbered = [int(p.name) for p in folder.iterdir() if p.name.isdigit()] if folder.is_dir() else []
    return max([e.seq for e in journal_entries(root)] + numbered, default=0) + 1


def _linked(path: Path) -> bool:
    """Whether a file has other names (hard links): it is written in place, so every name sees the
    new text (a rename would cut this name off from the others)."""
    try:
        return os.stat(path).st_nlink > 1
    except OSError:
        return False


def _overwrite(path: Path, data: bytes) -> None:
    """Write `data` into the file itself (its inode: every hard link sees it), then wait for the disk."""
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


def _place(temp: str, path: Path, linked: bool) -> None:
    """Put a staged text in place: renamed over the file, or, for a hard-linked file, copied into it
    (the staged copy held its space until now)."""
    if not linked:
        os.replace(temp, path)
        return
    with open(temp, "rb") as handle:
        data = handle.read()
    os.unlink(temp)
    _overwrite(path, data)


def _text(folder: Path, name: Optional[str]) -> Optional[str]:
    return None if name is None else read_exact(folder / name)


def _put(root: Path, entry: JournalEntry, side: str) -> None:
    """Make every file of `entry` its `side` ("backup": before, "new": after) version."""
    folder = _folder(root, entry)
    for file in entry.files:
        path = root / file["path"]
        text = _text(folder, file.get(side))
        if text is None:
            path.unlink(missing_ok=True)
        elif file.get("linked") and path.exists():
            _overwrite(path, text.encode("utf-8"))
        else:
            atomic_write(path, text)


def recover(root: Path) -> list[str]:
    """Finish what a crash interrupted: a `pending` write is rolled back (files put back, staged files
    removed, the entry deleted), an `undoing`/`redoing` one rolled forward. Call with the lock held."""
    said = []
    for entry in journal_entries(root, ("pending", "undoing", "redoing")):
        folder = _folder(root, entry)
        if entry.state == "pending":
            for file in entry.files:
                path = root / file["path"]
                if file.get("staged"):
                    (path.parent / file["staged"]).unlink(missing_ok=True)
                now = sha256_of(path)
                torn = file.get("linked") and now != file["before"]  # written in place, maybe cut short
                if (now == file["after"] and file["after"] != file["before"]) or torn:
                    text = _text(folder, file.get("backup"))
                    if text is None:
                        path.unlink(missing_ok=True)
                    elif file.get("linked"):
                        _overwrite(path, text.encode("utf-8"))
                    else:
                        atomic_write(path, text)
            for item in sorted(folder.iterdir(), reverse=True):
                item.unlink()
            folder.rmdir()
            said.append(f"an interrupted write was rolled back: {entry.reason}")
        else:
            verb = entry.state[:-3]  # undoing → undo
            _, _, side, done = _STEPS[verb]
            _put(root, entry, side)
            _save(root, _with(entry, done))
            for file in entry.files:
                path = root / file["path"]
                (path.parent / _step_temp(path, entry, verb)).unlink(missing_ok=True)
            said.append(f"an interrupted {entry.state[:-3]} was finished: {entry.reason}")
    for leftover in _leftovers(root):  # the lock is ours: no write is making one now
        shutil.rmtree(leftover, ignore_errors=True)
    for temp in (root / JOURNAL_DIR).glob("*/.entry.json.*.tmp"):  # staged by a write a crash stopped
        temp.unlink(missing_ok=True)
    return said


def recover_at_start(root: Path) -> list[str]:
    """At a start (every command, the TUI): finish what a crash interrupted (`recover`), so nothing
    scores a half-written set; also clear what a killed writer left behind. Said once as notices. A
    lock another process holds means a writer is alive, not a crash: left to it."""
    folder = root / JOURNAL_DIR
    if not folder.is_dir():
        return []
    entries, _ = _read_entries(root)
    interrupted = any(e.state in ("pending", "undoing", "redoing") for e in entries)
    if not interrupted and not _leftovers(root):
        return []
    try:
        with project_lock(root, wait=1.0):
            said = recover(root)
    except BaselineWriteError:
        return []
    for line in said:
        add_notice(line)
    return said


def _leftovers(root: Path) -> list[Path]:
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
    entries, _ = _read_entries(root)
    newest_applied = max((e.seq for e in entries if e.state == "applied"), default=0)
    reachable = [e for e in entries if e.state == "applied" or (e.state == "undone" and e.seq > newest_applied)]
    unreachable = [e for e in entries if e not in reachable and e.state not in ("pending", "undoing", "redoing")]
    gone = [e for e in unreachable if now - e.time > 86_400]
    gone += [e for e in reachable[:-KEEP_ENTRIES] if now - e.time > KEEP_DAYS * 86_400]
    for entry in gone:
        shutil.rmtree(_folder(root, entry), ignore_errors=True)
    return len(gone)


def write_baseline(writes: Sequence[FileWrite], root: Path, reason: str) -> JournalEntry:
    """Write all `writes` or none, as one journal entry (which undo reverts as one). A baseline that
    is a symlink is written through it (its target changes; the link stays a link), and journaled as
    the target, so undo puts the target back."""
    writes = [FileWrite(resolved(w.path), w.text, w.expected_sha256) if os.path.islink(w.path) else w for w in writes]
    top = resolved(root)
    for write in writes:
        if not resolved(write.path).is_relative_to(top):
            raise BaselineWriteError(f"nothing was written: {write.path} leads out of the project (to {resolved(write.path)}); "
                                     "agentdiff writes baselines inside the project only (a link there is written through)")
    with project_lock(root):
        recover(root)
        for write in writes:
            try:
                current = sha256_of(write.path)
            except OSError as exc:  # a FIFO or a folder where the file goes: never opened to write
                raise BaselineWriteError(f"nothing was written: {_display(write.path, root)}: {exc.strerror or exc}") from exc
            if current != write.expected_sha256:
                what = "was created" if write.expected_sha256 is None else "changed on disk"
                raise BaselineConflict(f"{_display(write.path, root)} {what} since it was read; nothing was written")
        seq = _next_seq(root)
        entry = JournalEntry(f"{seq:08d}", reason, time.time(), (), seq, "pending")
        folder = _folder(root, entry)
        staged: list[tuple[str, Path]] = []
        try:
            folder.mkdir(parents=True, exist_ok=False)
            files = []
            for index, write in enumerate(writes):
                backup = f"{index}-before" if write.path.exists() else None
                if backup:
                    atomic_write(folder / backup, read_exact(write.path))
                atomic_write(folder / f"{index}-after", write.text)
                files.append({"path": _display(write.path, root), "before": write.expected_sha256, "after": _sha(write.text),
                              "backup": backup, "new": f"{index}-after", "staged": f".{write.path.name}.agentdiff-{seq}.tmp",
                              **({"linked": True} if _linked(write.path) else {})})
            entry = JournalEntry(entry.id, reason, entry.time, tuple(files), seq, "pending")
            _save(root, entry)  # the intent, before any file changes
            _fault("intent")
            for write, file in zip(writes, files):
                staged.append((_stage(write.path, write.text, name=file["staged"]), write.path))
            # a new write: what was undone can no longer be redone; and this entry, done
            entries = [_stage_entry(root, _with(undone, "dropped")) for undone in journal_entries(root, ("undone",))]
            entries.append(_stage_entry(root, _with(entry, "applied")))
            _fault("staged")
        except BaseException as exc:  # nothing has changed yet: take back what was staged
            _discard(staged)
            _discard(locals().get("entries", []))
            for item in folder.iterdir() if folder.is_dir() else []:
                item.unlink()
            if folder.is_dir():
                folder.rmdir()
            if not isinstance(exc, OSError):
                raise
            raise _nothing_written(exc) from exc
        for count, ((temp, path), file) in enumerate(zip(staged, files), 1):
            _place(temp, path, bool(file.get("linked")))
            _fault(f"renamed-{count}")
        for directory in {path.parent for _, path in staged}:
            _sync_dir(directory)
        _commit(entries)
        prune_journal(root)
        return _with(entry, "applied")


#: undo and redo: the digest every file must have first, the state while the files change, which
#: side of the entry they become, and the state after.
_STEPS = {"undo": ("after", "undoing", "backup", "undone"), "redo": ("before", "redoing", "new", "applied")}


def _step(root: Path, entry: JournalEntry, verb: str) -> JournalEntry:
    """Undo or redo `entry` (the lock held): checked; every file's text and the entry's next states
    staged (a full disk fails here, with nothing changed); journaled as in progress; renamed into
    place; journaled as done. A crash after the first journal step is finished by the next start."""
    key, doing, side, done = _STEPS[verb]
    _check(root, entry, key, verb)
    folder = _folder(root, entry)
    staged: list[tuple[Optional[str], Path]] = []
    entries: list[tuple[str, Path]] = []
    try:
        for file in entry.files:
            path, text = root / file["path"], _text(folder, file.get(side))
            staged.append((None if text is None else _stage(path, text, name=_step_temp(path, entry, verb)), path))
        entries = [_stage_entry(root, _with(entry, doing)), _stage_entry(root, _with(entry, done))]
    except OSError as exc:
        _discard(staged)
        _discard(entries)
        raise _nothing_written(exc, "changed") from exc
    except BaseException:
        _discard(staged)
        _discard(entries)
        raise
    _commit(entries[:1])
    _fault(doing)
    for (temp, path), file in zip(staged, entry.files):
        if temp is None:
            path.unlink(missing_ok=True)
        else:
            _place(temp, path, bool(file.get("linked")) and path.exists())
    for directory in {path.parent for _, path in staged}:
        _sync_dir(directory)
    _commit(entries[1:])
    return _with(entry, done)


def _step_temp(path: Path, entry: JournalEntry, verb: str) -> str:
    """The name a file's text is staged under for an undo or redo: known, so a crash's leftover is found."""
    return f".{path.name}.agentdiff-{entry.seq}-{verb}.tmp"


def _check(root: Path, entry: JournalEntry, key: str, doing: str) -> None:
    for file in entry.files:
        if sha256_of(root / file["path"]) != file[key]:
            raise UndoBlocked(
                f"cannot {doing} {entry.reason!r}: {file['path']} changed since it was written; {doing} would lose that change. "
                f"Drop that entry (`agentdiff undo --drop`, D in the workbench) to {doing} older ones"
            )


def undo_last(root: Path) -> Optional[JournalEntry]:
    """Put back what the newest applied entry replaced, byte for byte (a file it created is removed);
    None when there is nothing to undo; `UndoBlocked` when a file changed after it."""
    with project_lock(root):
        recover(root)
        applied = journal_entries(root, ("applied",))
        _unreadable_after(root, applied[-1].seq if applied else 0, "undo")
        if not applied:
            return None
        return _step(root, applied[-1], "undo")


def redo_last(root: Path) -> Optional[JournalEntry]:
    """Apply again the most recently undone entry; None when there is nothing to redo."""
    with project_lock(root):
        recover(root)
        entries = journal_entries(root, ("applied", "undone"))
        newest_applied = max((e.seq for e in entries if e.state == "applied"), default=0)
        undone = [e for e in entries if e.state == "undone" and e.seq > newest_applied
                  and all(file.get("new") for file in e.files)]  # the first journal kept no new texts
        if not undone:
            return None
        _unreadable_after(root, newest_applied, "redo")
        return _step(root, undone[0], "redo")


def drop_last(root: Path) -> Optional[JournalEntry]:
    """Forget the newest applied entry (its files stay as they are), so older ones can be undone."""
    with project_lock(root):
        recover(root)
        applied = journal_entries(root, ("applied",))
        _, unreadable = _read_entries(root)
        newer = [u for u in unreadable if u.seq > (applied[-1].seq if applied else 0)]
        if newer:  # the newest entry cannot be read: set it aside (kept whole), so older ones can be undone
            bad = max(newer, key=lambda u: u.seq)
            set_aside(root / JOURNAL_DIR / bad.id, root, bad.why, then="; older entries can be undone")
            return JournalEntry(bad.id, f"an unreadable journal entry ({bad.why})", time.time(), (), bad.seq, "dropped")
        if not applied:
            return None
        entry = _with(applied[-1], "dropped")
        try:
            _save(root, entry)
        except OSError as exc:
            raise _nothing_written(exc, "changed") from exc
        return entry
