"""What changed since a case last passed: the files its agent read in its last passing run, kept by
content in `.agentdiff/blobs/` (each distinct content once), so a failing case can show which of them
differ now, with a diff of each."""

from __future__ import annotations

import difflib
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from agentdiff.core.formats.set_aside import linked_state, made_state_dir
from agentdiff.core.formats.source_file import display_path

BLOBS = Path(".agentdiff") / "blobs"
MAX_BYTES = 512 * 1024  # a larger file is noted by digest only
GRACE = 24 * 3600  # seconds: a blob used this lately is kept even if unreferenced (another session may hold it)
TOUCH_EVERY = 60.0  # seconds: a blob's time is refreshed at most this often by one session (GRACE spares it long after)
LINK_CHECK_EVERY = 1.0  # seconds: how long a look for a committed link stands


@dataclass(frozen=True)
class FileChange:
    path: str  # as displayed
    diff: str  # unified diff, or a line saying why there is none


class Snapshots:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / BLOBS
        self._digests: dict[tuple[str, int, int], str] = {}
        self._shown: dict[str, str] = {}  # path → how it is displayed
        self._blobs = str(self.dir)
        # A passing case's verdict lands on the app's loop: each system call there hands the interpreter's
        # lock to a scoring thread for up to 5 ms, so the look for a link and a blob's touch are not
        # repeated for every case (a file's stat is: its content may have just changed).
        self._touched: dict[str, float] = {}
        self._linked: tuple[float, Optional[str]] = (float("-inf"), None)

    def _link(self) -> Optional[str]:
        now = time.monotonic()
        if now - self._linked[0] >= LINK_CHECK_EVERY:
            self._linked = (now, linked_state(self.root, "blobs"))
        return self._linked[1]

    def keep(self, paths: Iterable[str]) -> dict[str, str]:
        """Each file's digest (displayed path → sha256), its content kept once; unreadable files left out."""
        kept: dict[str, str] = {}
        if self._link() is not None:  # never written through a committed link
            return kept
        for path in sorted(set(paths)):
            try:
                stat = os.stat(path)
                key = (path, stat.st_mtime_ns, stat.st_size)
                digest = self._digests.get(key)
                if digest is not None and not self._used(digest):
                    digest = None  # pruned meanwhile (by another session): kept again
                if digest is None:
                    data = Path(path).read_bytes() if stat.st_size <= MAX_BYTES else b""
                    digest = hashlib.sha256(data).hexdigest() if data or stat.st_size == 0 else f"large:{stat.st_size}:{stat.st_mtime_ns}"
                    if not self._used(digest):
                        blob = self.dir / digest[:2] / digest
                        made_state_dir(blob.parent)
                        blob.parent.mkdir(parents=True, exist_ok=True)
                        temporary = blob.with_name(f".{blob.name}.{os.getpid()}.tmp")
                        temporary.write_bytes(data)  # bytes as read: line endings kept
                        os.replace(temporary, blob)
                        self._touched[digest] = time.monotonic()
                    self._digests[key] = digest
            except OSError:
                continue
            shown = self._shown.get(path)
            if shown is None:
                shown = self._shown[path] = display_path(Path(path), self.root)
            kept[shown] = digest
        return kept

    def _used(self, digest: str) -> bool:
        """Whether the blob is there, marking it used now (`prune` spares what was used lately)."""
        if digest.startswith("large:"):
            return True  # known by size and time alone
        now = time.monotonic()
        if now - self._touched.get(digest, float("-inf")) < TOUCH_EVERY:
            return True  # touched lately: no prune (of blobs unused for GRACE) takes it meanwhile
        try:
            os.utime(os.path.join(self._blobs, digest[:2], digest))
        except OSError:
            self._touched.pop(digest, None)
            return False
        if len(self._touched) >= 65_536:
            self._touched.clear()
        self._touched[digest] = now
        return True

    def prune(self, referenced: Iterable[str], now: float, grace: float = GRACE) -> int:
        """Remove the blobs no history entry refers to any more, unused for `grace` (another
        session may hold one its history has not saved yet); how many."""
        keep = set(referenced)
        removed = 0
        if linked_state(self.root, "blobs") is not None:  # never pruned through a committed link
            return 0
        try:
            folders = list(os.scandir(self.dir))
        except OSError:
            return 0
        for folder in folders:
            try:
                blobs = list(os.scandir(folder.path)) if folder.is_dir(follow_symlinks=False) else []
            except OSError:
                continue
            for blob in blobs:
                try:
                    if blob.name not in keep and now - blob.stat(follow_symlinks=False).st_mtime > grace:
                        os.unlink(blob.path)
                        self._touched.pop(blob.name, None)
                        removed += 1
                except OSError:
                    continue
            try:
                os.rmdir(folder.path)  # only when empty
            except OSError:
                pass
        return removed

    def _old(self, digest: str) -> Optional[str]:
        try:
            return (self.dir / digest[:2] / digest).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None

    def changed_since(self, read: dict[str, str]) -> list[FileChange]:
        """The files of `read` (from a passing run) whose content differs now, with a diff of each."""
        changes = []
        for shown, digest in sorted(read.items()):
            path = self.root / shown
            try:
                if digest.startswith("large:"):  # a large file is known by its size and time alone
                    stat = path.stat()
                    if digest == f"large:{stat.st_size}:{stat.st_mtime_ns}":
                        continue
                    changes.append(FileChange(shown, f"{shown} changed (a large file: its earlier content was not kept)"))
                    continue
                now = path.read_bytes()
            except OSError:
                changes.append(FileChange(shown, f"{shown} is gone since"))
                continue
            if hashlib.sha256(now).hexdigest() == digest:
                continue
            old = self._old(digest)
            if old is None:
                changes.append(FileChange(shown, f"{shown} changed (its earlier content was not kept)"))
                continue
            lines = difflib.unified_diff(old.splitlines(keepends=True), now.decode("utf-8", errors="replace").splitlines(keepends=True),
                                         f"a/{shown} (last pass)", f"b/{shown} (now)")
            changes.append(FileChange(shown, "".join(lines)))
        return changes
