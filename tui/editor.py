"""Opening a file at a line and column in the user's editor.

The command is, in order: the `editor` setting (a template such as `code -g {file}:{line}:{col}`),
else `$VISUAL` / `$EDITOR` (a template too when it holds `{file}`), else vi. An editor named without
a template is spelled from `SPELLINGS`, by its program's name; an editor not in it gets the file alone.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Callable, Optional

Editor = Callable[[Path, Optional[int], Optional[int]], None]

_JETBRAINS = ("idea", "pycharm", "charm", "webstorm", "goland", "clion", "rider", "phpstorm", "rubymine", "rustrover", "datagrip")

#: How each common editor is told a line and column: the arguments after the program's own.
SPELLINGS: dict[str, str] = {
    **dict.fromkeys(("vi", "vim", "nvim", "gvim", "mvim"), "+{line} {file}"),
    "nano": "+{line},{col} {file}",
    **dict.fromkeys(("emacs", "emacsclient"), "+{line}:{col} {file}"),
    "micro": "{file}:{line}:{col}",
    **dict.fromkeys(("hx", "helix"), "{file}:{line}:{col}"),
    "kak": "+{line}:{col} {file}",
    **dict.fromkeys(("code", "codium", "code-insiders", "cursor", "windsurf"), "--goto {file}:{line}:{col}"),
    **dict.fromkeys(("subl", "sublime_text", "zed", "zeditor"), "{file}:{line}:{col}"),
    **dict.fromkeys(_JETBRAINS, "--line {line} --column {col} {file}"),
}


def editor_command(path: Path, line: Optional[int], col: Optional[int] = None, setting: Optional[str] = None) -> list[str]:
    """The argument list that opens `path` at `line` (and `col`, 1 when unknown)."""
    template = setting or os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    args = shlex.split(template)
    if not any("{file}" in arg for arg in args):
        name = os.path.basename(args[0]) if args else "vi"
        spelling = SPELLINGS.get(name.removesuffix(".exe").removesuffix(".sh")) if line else None
        args += shlex.split(spelling) if spelling else ["{file}"]
    values = {"file": str(path), "line": str(line or 1), "col": str(col or 1)}
    out = []
    for arg in args:
        if not line and ("{line}" in arg or "{col}" in arg) and "{file}" in arg:
            arg = arg.split("{file}")[0] + "{file}"  # `{file}:{line}` with no line: the file alone
        elif not line and ("{line}" in arg or "{col}" in arg):
            if out and out[-1].startswith("-"):
                out.pop()  # `--line {line}`: the option goes with its value
            continue
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def under_web_driver() -> bool:
    """Whether the app is drawn in a browser (`agentdiff serve`): no terminal, none to lend an editor."""
    return os.environ.get("TEXTUAL_DRIVER", "").endswith(":WebDriver")


_OPEN: set[subprocess.Popen] = set()  # the editor the app is waiting on (suspended), if any


def start(command: list[str]) -> subprocess.Popen:
    """The editor's process, started in the app's terminal (the app suspended meanwhile)."""
    return subprocess.Popen(command)


def stop_editors() -> None:
    """The app is ending (a signal, its terminal gone) while it waits on an editor: end the editor, so the
    app can exit (unsaved work there is the editor's own to keep: most keep a swap file)."""
    for editor in list(_OPEN):
        try:
            editor.terminate()
        except OSError:
            pass


def make_editor(setting: Optional[str] = None, root: Optional[Path] = None) -> Editor:
    """The editor the app opens with `e`: the configured template, else the environment's. With `root`,
    the `editor` setting is read from the project's configuration at each `e`, so one added or changed
    while the app runs is used at once (`setting` is then the one read at start, if the file no longer
    reads)."""

    def open_in_editor(path: Path, line: Optional[int], col: Optional[int] = None) -> None:
        editor = start(editor_command(path, line, col, _setting_now(root, setting)))
        _OPEN.add(editor)
        try:
            editor.wait()
        finally:
            _OPEN.discard(editor)

    open_in_editor.runs_a_program = True  # type: ignore[attr-defined]  # one a browser session must never start
    return open_in_editor


def _setting_now(root: Optional[Path], setting: Optional[str]) -> Optional[str]:
    if root is None:
        return setting
    from agentdiff.core.project.config import load_project_config

    config, errors = load_project_config(root)
    return setting if errors else config.editor


default_editor = make_editor()
