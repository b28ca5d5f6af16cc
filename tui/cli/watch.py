"""`agentdiff watch` (the default command): open the TUI on the cases under paths, with the same run
flags as `run`, built into options by the shared builder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, TextIO

from .endings import run_app
from .errors import EXIT_OK, EXIT_USAGE
from .options import add_run_options, project_session
from ..safe_text import one_line

NAME = "watch"
NO_TERMINAL = "error: the workbench needs a terminal; use `agentdiff run` for headless runs"


def has_terminal(stdin: Optional[TextIO] = None, stdout: Optional[TextIO] = None) -> bool:
    """True when both stdin and stdout (default: the process's) are a TTY, or when a web driver draws
    the app (`agentdiff serve`: the browser is its terminal); the TUI would hang or draw into a pipe
    otherwise (CI, `</dev/null`, `| less`). Tests monkeypatch this."""
    from ..editor import under_web_driver

    if under_web_driver():
        return True
    for stream in (sys.stdin if stdin is None else stdin, sys.stdout if stdout is None else stdout):
        try:
            if stream is None or not stream.isatty():
                return False
        except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
            return False
    return True


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="the TUI: watch agents, prompts and cases; re-run what a change affects (the default command)",
        description="Open the workbench on the cases under PATHS: every case runs once, then each save re-runs only "
        "what it can affect. Keys: ? in the app.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="folders of cases and agents (default: the configured paths, else .)")
    add_run_options(parser, repeats=True)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not has_terminal():
        print(NO_TERMINAL, file=err)
        return EXIT_USAGE
    from ..app import create_app
    from ..editor import make_editor

    root = Path.cwd()
    session = project_session(args, err)
    if session is None:
        return EXIT_USAGE
    config, paths, options, python, pool = session
    app = create_app(
        root, [p.resolve() for p in paths], pool=pool, options=options, project=f"{root.name} · {python.short(root)}",
        editor=make_editor(config.editor, root), stacked_below=config.stacked_below, keep_runs=config.keep_runs,
        confirm_live_above=config.confirm_live_above,
    )
    try:
        run_app(app)
    finally:
        pool.close()
        history = getattr(getattr(app, "workbench", None), "history", None)
        if history is not None and history.problem:  # said once the screen is put back
            print(f"warning: {one_line(history.problem)}", file=err)
    return EXIT_OK
