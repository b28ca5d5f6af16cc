"""The project's one-writer lock: every baseline write, undo and redo holds `.agentdiff/lock`."""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from agentdiff.core.baselines.file_writes import shown_in
from agentdiff.core.formats.set_aside import linked_state, made_state_dir

LOCK_FILE = Path(".agentdiff") / "lock"
LOCK_WAIT = 5.0



class BaselineWriteError(Exception):
    """The files could not be written (a full disk, no permission, another writer); nothing was written."""


@contextmanager
def project_lock(root: Path, wait: float = LOCK_WAIT) -> Iterator[None]:
    """The project's one-writer lock; `BaselineWriteError` when another process holds it past `wait`."""
    path = root / LOCK_FILE
    if linked_state(root, "journal") is not None:  # `.agentdiff` or its journal a link: never written through
        raise BaselineWriteError(f"nothing was written: {linked_state(root, 'journal')}")
    if os.path.lexists(path.parent) and not path.parent.is_dir():
        raise BaselineWriteError(f"nothing was written: {shown_in(path.parent, root)} is a file, not a folder; agentdiff keeps its "
                                 "journal, runs and history in that folder: move the file away")
    try:
        made_state_dir(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
        handle = os.fdopen(fd, "a+", encoding="utf-8")
    except OSError as exc:
        if os.path.islink(path):
            raise BaselineWriteError(f"nothing was written: {shown_in(path, root)} is a symlink; agentdiff's lock is a file "
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
