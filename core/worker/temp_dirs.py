"""The private temporary folders of agentdiff's processes (the worker server's socket and package),
named by the process that made them, so one a killed process left behind can be found and removed."""

from __future__ import annotations

import os
import shutil
import tempfile


def private_temp_dir() -> str:
    """A private (0700) temporary folder named by this process (`agentdiff-<pid>-…`), so one that a
    killed process left behind can be told from a live one's (`sweep_temp_dirs`)."""
    return tempfile.mkdtemp(prefix=f"agentdiff-{os.getpid()}-")


def sweep_temp_dirs() -> None:
    """Remove the temporary folders of agentdiff processes that are gone (a `kill -9` runs no cleanup):
    only folders named `agentdiff-<pid>-…`, owned by this user, whose process no longer exists."""
    base = tempfile.gettempdir()
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        parts = name.split("-", 2)
        if len(parts) != 3 or parts[0] != "agentdiff" or not parts[1].isdigit() or int(parts[1]) == os.getpid():
            continue
        path = os.path.join(base, name)
        try:
            if os.lstat(path).st_uid != os.getuid() or not os.path.isdir(path) or os.path.islink(path):
                continue
            os.kill(int(parts[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except (OSError, OverflowError):
            continue  # alive (another user's process, say) or not ours to judge
