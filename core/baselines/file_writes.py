"""The file writes baselines are made of: whole files or nothing (staged beside the file, then
renamed; a hard-linked file copied into in place), digests, and the folder syncs that make them last.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable, Optional, Sequence, TextIO, Union

from agentdiff.core.formats.source_file import read_regular, resolved


def sha256_of(path: Path) -> Optional[str]:
    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except FileNotFoundError:
        return None


def read_exact(path: Path) -> str:
    """A text file as it is on disk: line endings untouched (`read_text` would make `\r\n` `\n`)."""
    return read_regular(path).decode("utf-8")


def text_sha(text: Optional[str]) -> Optional[str]:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def atomic_write(path: Path, text: Union[str, Callable[[TextIO], None]], durable: bool = True) -> None:
    """Replace `path` with `text` all at once (or what `text(handle)` writes: a big report, streamed);
    `durable` also waits for the disk (baselines do)."""
    temp = stage(path, text, durable)
    try:
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    if durable:
        sync_dir(path.parent)


def shown_in(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(resolved(path))


def stage(path: Path, text: Union[str, Callable[[TextIO], None]], durable: bool = True, name: Optional[str] = None) -> str:
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
            if isinstance(text, str):
                handle.write(text)
            else:
                text(handle)
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


def sync_dir(directory: Path) -> None:
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def linked(path: Path) -> bool:
    """Whether a file has other names (hard links): it is written in place, so every name sees the
    new text (a rename would cut this name off from the others)."""
    try:
        return os.stat(path).st_nlink > 1
    except OSError:
        return False


def overwrite(path: Path, data: bytes) -> None:
    """Write `data` into the file itself (its inode: every hard link sees it), then wait for the disk."""
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


def place(temp: str, path: Path, linked: bool) -> None:
    """Put a staged text in place: renamed over the file, or, for a hard-linked file, copied into it
    (the staged copy held its space until now)."""
    if not linked:
        os.replace(temp, path)
        return
    with open(temp, "rb") as handle:
        data = handle.read()
    os.unlink(temp)
    overwrite(path, data)


def commit_staged(staged: Sequence[tuple[str, Path]]) -> None:
    for temp, path in staged:
        os.replace(temp, path)
    for directory in {path.parent for _, path in staged}:
        sync_dir(directory)


def discard_staged(staged: Sequence[tuple[Optional[str], Path]]) -> None:
    for temp, _ in staged:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
