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
  be redone. A file changed elsewhere since the entry wrote it (a hand edit, a `git pull`) is merged:
  undo takes back only the lines the entry wrote and keeps the rest (`merge.take_back`). An entry
  whose own lines changed cannot be undone; it can be dropped, so older ones can be.

`AGENTDIFF_FAULT=<step>` ends the process at that step (for the crash tests): `intent`, `staged`,
`renamed-1` (after the first rename), `undoing`.
"""

from __future__ import annotations

import dataclasses

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.baselines.file_writes import (
    atomic_write,
    commit_staged,
    discard_staged,
    linked,
    overwrite,
    place,
    read_exact,
    sha256_of,
    shown_in,
    stage,
    sync_dir,
    text_sha,
)
from agentdiff.core.baselines.journal_entries import (
    JOURNAL_DIR,
    JournalEntry,
    entry_folder,
    journal_entries,
    leftovers,
    next_seq,
    prune_journal,
    read_entries,
    save_entry,
    stage_entry,
    with_state,
)
from agentdiff.core.baselines.lock import LOCK_FILE, BaselineWriteError, project_lock
from agentdiff.core.baselines.merge import take_back
from agentdiff.core.formats.set_aside import SET_ASIDE_DIR, add_notice, made_state_dir, set_aside
from agentdiff.core.formats.source_file import resolved

#: Names other modules take from here (the journal's parts live in `file_writes` and `journal_entries`).
__all__ = ["JOURNAL_DIR", "LOCK_FILE", "BaselineConflict", "BaselineWriteError", "FileWrite", "JournalEntry", "UndoBlocked",
           "atomic_write", "drop_last", "journal_entries", "project_lock", "prune_journal", "read_exact", "recover",
           "recover_at_start", "redo_last", "sha256_of", "undo_last", "write_baseline"]

class BaselineConflict(Exception):
    """A file changed on disk since it was read; nothing was written."""


class UndoBlocked(BaselineConflict):
    """The newest entry cannot be undone: a file changed after it. `drop_last` lets older ones be undone."""


@dataclass(frozen=True)
class FileWrite:
    path: Path
    text: str
    expected_sha256: Optional[str]  # the digest when read; None: the file must not exist yet


def _fault(step: str) -> None:
    if os.environ.get("AGENTDIFF_FAULT") == step:
        os._exit(137)


def _nothing_written(exc: OSError, verb: str = "written") -> BaselineWriteError:
    return BaselineWriteError(f"nothing was {verb}: {exc.strerror or exc}{f' ({exc.filename})' if getattr(exc, 'filename', None) else ''}")


def _unreadable_after(root: Path, seq: int, verb: str) -> None:
    """`UndoBlocked` when an entry newer than `seq` cannot be read: stepping over it to an older one
    would undo the wrong write."""
    _, unreadable = read_entries(root)
    newer = [u for u in unreadable if u.seq > seq]
    if newer:
        bad = max(newer, key=lambda u: u.seq)
        raise UndoBlocked(
            f"cannot {verb}: the newest journal entry ({(JOURNAL_DIR / bad.id / 'entry.json').as_posix()}) cannot be read ({bad.why}), "
            f"so what it wrote is unknown; `agentdiff undo --drop` (D in the workbench) sets it aside under "
            f"{SET_ASIDE_DIR.as_posix()}/ and older entries can be undone"
        )


def _text(folder: Path, name: Optional[str]) -> Optional[str]:
    return None if name is None else read_exact(folder / name)


def _put(root: Path, entry: JournalEntry, side: str) -> None:
    """Make every file of `entry` its `side` ("backup": before, "new": after) version."""
    folder = entry_folder(root, entry)
    for file in entry.files:
        path = root / file["path"]
        text = _text(folder, file.get("merged") or file.get(side))
        if text is None:
            path.unlink(missing_ok=True)
        elif file.get("linked") and path.exists():
            overwrite(path, text.encode("utf-8"))
        else:
            atomic_write(path, text)


def recover(root: Path) -> list[str]:
    """Finish what a crash interrupted: a `pending` write is rolled back (files put back, staged files
    removed, the entry deleted), an `undoing`/`redoing` one rolled forward. Call with the lock held."""
    said = []
    for entry in journal_entries(root, ("pending", "undoing", "redoing")):
        folder = entry_folder(root, entry)
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
                        overwrite(path, text.encode("utf-8"))
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
            files = tuple({k: v for k, v in file.items() if k != "merged"} for file in entry.files)  # merged texts served once
            save_entry(root, dataclasses.replace(entry, files=files, state=done))
            for file in entry.files:
                path = root / file["path"]
                (path.parent / _step_temp(path, entry, verb)).unlink(missing_ok=True)
                if file.get("merged"):
                    (folder / file["merged"]).unlink(missing_ok=True)
            said.append(f"an interrupted {entry.state[:-3]} was finished: {entry.reason}")
    for leftover in leftovers(root):  # the lock is ours: no write is making one now
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
    entries, _ = read_entries(root)
    interrupted = any(e.state in ("pending", "undoing", "redoing") for e in entries)
    if not interrupted and not leftovers(root):
        return []
    try:
        with project_lock(root, wait=1.0):
            said = recover(root)
    except BaselineWriteError:
        return []
    for line in said:
        add_notice(line)
    return said


def write_baseline(writes: Sequence[FileWrite], root: Path, reason: str, author: str = "") -> JournalEntry:
    """Write all `writes` or none, as one journal entry (which undo reverts as one). A baseline that
    is a symlink is written through it (its target changes; the link stays a link), and journaled as
    the target, so undo puts the target back."""
    writes = [FileWrite(resolved(w.path), w.text, w.expected_sha256) if os.path.islink(w.path) else w for w in writes]
    top = resolved(root)
    seen: set[Path] = set()
    for write in writes:
        if resolved(write.path) in seen:  # two writes of one file would stage one over the other: a bug of the caller's
            raise BaselineWriteError(f"nothing was written: {shown_in(write.path, root)} is written twice in one step")
        seen.add(resolved(write.path))
        inside = resolved(write.path).relative_to(top).parts if resolved(write.path).is_relative_to(top) else None
        if inside is not None and {".git", ".agentdiff"} & set(inside):
            raise BaselineWriteError(f"nothing was written: {write.path} is in .git or .agentdiff, never a baseline's place")
        if inside is None:
            raise BaselineWriteError(f"nothing was written: {write.path} leads out of the project (to {resolved(write.path)}); "
                                     "agentdiff writes baselines inside the project only (a link there is written through)")
    with project_lock(root):
        recover(root)
        for write in writes:
            try:
                current = sha256_of(write.path)
            except OSError as exc:  # a FIFO or a folder where the file goes: never opened to write
                raise BaselineWriteError(f"nothing was written: {shown_in(write.path, root)}: {exc.strerror or exc}") from exc
            if current != write.expected_sha256:
                what = "was created" if write.expected_sha256 is None else "changed on disk"
                raise BaselineConflict(f"{shown_in(write.path, root)} {what} since it was read; nothing was written")
        seq = next_seq(root)
        entry = JournalEntry(f"{seq:08d}", reason, time.time(), (), seq, "pending", author)
        folder = entry_folder(root, entry)
        staged: list[tuple[str, Path]] = []
        try:
            made_state_dir(folder)
            folder.mkdir(parents=True, exist_ok=False)
            files = []
            for index, write in enumerate(writes):
                backup = f"{index}-before" if write.path.exists() else None
                if backup:
                    atomic_write(folder / backup, read_exact(write.path))
                atomic_write(folder / f"{index}-after", write.text)
                files.append({"path": shown_in(write.path, root), "before": write.expected_sha256, "after": text_sha(write.text),
                              "backup": backup, "new": f"{index}-after", "staged": f".{write.path.name}.agentdiff-{seq}.tmp",
                              **({"linked": True} if linked(write.path) else {})})
            entry = dataclasses.replace(entry, files=tuple(files))
            save_entry(root, entry)  # the intent, before any file changes
            _fault("intent")
            for write, file in zip(writes, files):
                staged.append((stage(write.path, write.text, name=file["staged"]), write.path))
            # a new write: what was undone can no longer be redone; and this entry, done
            entries = [stage_entry(root, with_state(undone, "dropped")) for undone in journal_entries(root, ("undone",))]
            entries.append(stage_entry(root, with_state(entry, "applied")))
            _fault("staged")
        except BaseException as exc:  # nothing has changed yet: take back what was staged
            discard_staged(staged)
            discard_staged(locals().get("entries", []))
            for item in folder.iterdir() if folder.is_dir() else []:
                item.unlink()
            if folder.is_dir():
                folder.rmdir()
            if not isinstance(exc, OSError):
                raise
            raise _nothing_written(exc) from exc
        for count, ((temp, path), file) in enumerate(zip(staged, files), 1):
            place(temp, path, bool(file.get("linked")))
            _fault(f"renamed-{count}")
        for directory in {path.parent for _, path in staged}:
            sync_dir(directory)
        commit_staged(entries)
        prune_journal(root)
        return with_state(entry, "applied")


#: undo and redo: the digest every file must have first, the state while the files change, which
#: side of the entry they become, and the state after.
_STEPS = {"undo": ("after", "undoing", "backup", "undone"), "redo": ("before", "redoing", "new", "applied")}


def _step(root: Path, entry: JournalEntry, verb: str) -> JournalEntry:
    """Undo or redo `entry` (the lock held): checked (a file changed elsewhere since is merged,
    `merge.take_back`); every file's text and the entry's next states staged (a full disk fails here,
    with nothing changed); journaled as in progress, with any merged text; renamed into place;
    journaled as done. A crash after the first journal step is finished by the next start."""
    _, doing, side, done = _STEPS[verb]
    folder = entry_folder(root, entry)
    texts, merged = _texts(root, entry, verb)
    staged: list[tuple[Optional[str], Path]] = []
    entries: list[tuple[str, Path]] = []
    try:
        for file, text in zip(entry.files, texts):
            path = root / file["path"]
            staged.append((None if text is None else stage(path, text, name=_step_temp(path, entry, verb)), path))
        kept = [stage(folder / name, texts[i]) for i, name in merged.items()]
        entries = [*zip(kept, (folder / name for name in merged.values())),
                   stage_entry(root, dataclasses.replace(entry, files=tuple(
                       {**file, "merged": merged[i]} if i in merged else file for i, file in enumerate(entry.files)), state=doing)),
                   stage_entry(root, with_state(entry, done))]
    except OSError as exc:
        discard_staged(staged)
        discard_staged(entries)
        raise _nothing_written(exc, "changed") from exc
    except BaseException:
        discard_staged(staged)
        discard_staged(entries)
        raise
    commit_staged(entries[:-1])
    _fault(doing)
    for (temp, path), file in zip(staged, entry.files):
        if temp is None:
            path.unlink(missing_ok=True)
        else:
            place(temp, path, bool(file.get("linked")) and path.exists())
    for directory in {path.parent for _, path in staged}:
        sync_dir(directory)
    commit_staged(entries[-1:])
    for name in merged.values():
        (folder / name).unlink(missing_ok=True)
    for i in merged:
        add_notice(f"{verb} kept the other changes made to {entry.files[i]['path']} since")
    return with_state(entry, done)


def _step_temp(path: Path, entry: JournalEntry, verb: str) -> str:
    """The name a file's text is staged under for an undo or redo: known, so a crash's leftover is found."""
    return f".{path.name}.agentdiff-{entry.seq}-{verb}.tmp"


def _texts(root: Path, entry: JournalEntry, verb: str) -> tuple[list[Optional[str]], dict[int, str]]:
    """The text each file of `entry` becomes, and the names the merged ones are journaled under: a
    file as the entry left it gets its other side; one changed since gets that side merged into its
    changes (`take_back`); `UndoBlocked` when the change touched the lines the entry wrote."""
    key, _, side, _ = _STEPS[verb]
    folder = entry_folder(root, entry)
    texts: list[Optional[str]] = []
    merged: dict[int, str] = {}
    for i, file in enumerate(entry.files):
        path, text = root / file["path"], _text(folder, file.get(side))
        if sha256_of(path) != file[key]:
            other = file.get("new" if side == "backup" else "backup")
            now = read_exact(path) if path.is_file() else None
            text = None if text is None or other is None or now is None else take_back(text, _text(folder, other), now)
            if text is None:
                raise UndoBlocked(
                    f"cannot {verb} {entry.reason!r}: {file['path']} changed since it was written, in the lines it wrote or next "
                    f"to them; {verb} would lose that change. Drop that entry (`agentdiff undo --drop`, D in the workbench) to "
                    f"{verb} older ones")
            merged[i] = f"merged-{verb}-{i}.txt"
        texts.append(text)
    return texts, merged


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


def drop_last(root: Path, expected: Optional[str] = None) -> Optional[JournalEntry]:
    """Forget the newest applied entry (its files stay as they are), so older ones can be undone; with
    `expected`, only when that is the newest entry's id (checked under the project's lock)."""
    with project_lock(root):
        recover(root)
        applied = journal_entries(root, ("applied",))
        _, unreadable = read_entries(root)
        newer = [u for u in unreadable if u.seq > (applied[-1].seq if applied else 0)]
        if newer:  # the newest entry cannot be read: set it aside (kept whole), so older ones can be undone
            bad = max(newer, key=lambda u: u.seq)
            set_aside(root / JOURNAL_DIR / bad.id, root, bad.why, then="; older entries can be undone")
            return JournalEntry(bad.id, f"an unreadable journal entry ({bad.why})", time.time(), (), bad.seq, "dropped")
        if not applied:
            return None
        if expected is not None and applied[-1].id != expected:
            raise BaselineConflict(f"the newest step is now {applied[-1].id} ({applied[-1].reason}), not {expected}: nothing was dropped")
        entry = with_state(applied[-1], "dropped")
        try:
            save_entry(root, entry)
        except OSError as exc:
            raise _nothing_written(exc, "changed") from exc
        return entry
