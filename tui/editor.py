"""Opening a file at a line in the user's editor (`$VISUAL` / `$EDITOR`, else vi)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Callable, Optional

Editor = Callable[[Path, Optional[int]], None]

LINE_FLAG_EDITORS = ("vi", "vim", "nvim", "nano", "emacs", "micro", "kak", "hx", "helix")  # +LINE FILE
GOTO_EDITORS = ("code", "codium")  # --goto FILE:LINE
COLON_EDITORS = ("subl", "zed")  # FILE:LINE


def default_editor(path: Path, line: Optional[int]) -> None:
    """The editor at `line`, in the spelling each common editor understands."""
    args = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
    name = os.path.basename(args[0])
    if line and name in GOTO_EDITORS:
        args += ["--goto", f"{path}:{line}"]
    elif line and name in COLON_EDITORS:
        args.append(f"{path}:{line}")
    else:
        if line and name in LINE_FLAG_EDITORS:
            args.append(f"+{line}")
        args.append(str(path))
    subprocess.call(args)
