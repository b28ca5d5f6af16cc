"""agentdiff's own state files (`.agentdiff/history.sqlite`, a kept run's report, a journal entry) that
cannot be read are set aside, never overwritten and never left to fail every later command: moved
whole under `.agentdiff/set-aside/`, with one notice saying so. The commands and the TUI show the
notices once (`take_notices`); nothing here prints."""

from __future__ import annotations

import os
import secrets
import threading
import time
from pathlib import Path
from typing import Optional

SET_ASIDE_DIR = Path(".agentdiff") / "set-aside"
STATE_DIR = Path(".agentdiff")


def linked_state(root: Path, *parts: str) -> Optional[str]:
    """Why `root/.agentdiff/<parts…>` must not be used, or None: `.agentdiff` or a folder on the way is a
    symlink (a cloned repository can commit one: following it would write, prune or delete elsewhere)."""
    path = root / STATE_DIR
    for part in ("", *parts):
        path = path / part if part else path
        if os.path.islink(path):
            shown = (STATE_DIR.joinpath(*parts[: parts.index(part) + 1]) if part else STATE_DIR).as_posix()
            return f"{shown} is a symlink; agentdiff keeps its own state in folders of its own and never follows it: remove the link"
    return None

#: Written into `.agentdiff/` when agentdiff makes it, as pytest, ruff and mypy do with their caches, so
#: `git add -A` never stages agentdiff's history, caches or kept runs. A team that wants to commit a file
#: of it un-ignores that file there (`!name`); a `.agentdiff/` that already exists is left as it is.
GITIGNORE = "# agentdiff's own state (history, caches, kept runs, the journal): made by agentdiff, not committed\n*\n"


def made_state_dir(path: Path) -> None:
    """Before writing `path` (under a project's `.agentdiff/`): make the `.agentdiff/` folder when it is not
    there yet, with its `.gitignore`. Nothing when `path` is not under one, or the folder already exists."""
    path = Path(path)
    for folder in (path, *path.parents):
        if folder.name == STATE_DIR.name:
            if not folder.exists() and folder.parent.is_dir():
                try:
                    folder.mkdir(exist_ok=True)
                    (folder / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
                except OSError:
                    pass  # the writer's own mkdir says why, as before
            return


_notices: list[str] = []
_lock = threading.Lock()


def set_aside(path: Path, root: Path, why: str, then: str = ", and started anew") -> bool:
    """Move `path` (a file or a folder) under `root/.agentdiff/set-aside/`, named by when and what it
    was, and keep a notice: which file, why it could not be read, where it is now. False (and a notice
    all the same) when it could not be moved."""
    try:
        shown = path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        shown = str(path)
    linked = linked_state(root, "set-aside")
    if linked is not None:
        _notice(f"{shown} cannot be read ({why}) nor set aside ({linked}): it is ignored")
        return False
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    target = root / SET_ASIDE_DIR / f"{stamp}-{secrets.token_hex(2)}-{shown.replace('/', '__')}"
    try:
        made_state_dir(target.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    except OSError as exc:
        _notice(f"{shown} cannot be read ({why}) nor set aside ({exc.strerror or exc}): it is ignored")
        return False
    _notice(f"{shown} cannot be read ({why}): set aside as {SET_ASIDE_DIR.as_posix()}/{target.name}{then}")
    return True


def add_notice(text: str) -> None:
    """A notice about agentdiff's own state to show once (a write a crash interrupted, rolled back)."""
    _notice(text)


def _notice(text: str) -> None:
    with _lock:
        if text not in _notices:
            _notices.append(text)


def take_notices() -> list[str]:
    """The notices kept since the last call (each said once)."""
    with _lock:
        taken = list(_notices)
        _notices.clear()
    return taken
