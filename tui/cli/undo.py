"""`agentdiff undo` and `agentdiff redo`: the workbench's `z` and `Z` (and `D`, `undo --drop`), on
the same journal: one entry per accept, record or batch, put back byte for byte."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..safe_text import one_line
from .errors import EXIT_FAILED, EXIT_OK, UsageError

NAME = "undo"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="undo the last accept or record (a batch: all of it), byte for byte",
        description="Put back what the last accept or record replaced (a batch accept is one step), byte for byte; "
        "the same journal as the workbench's z. Exit 0 undone, 1 nothing to undo, 2 when a later edit blocks it "
        "(--drop then forgets that step so older ones can be undone).",
    )
    parser.add_argument("--drop", action="store_true",
                        help="drop the newest step instead (its files stay as they are), when a later edit blocks undoing it")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.baselines.journal import drop_last, undo_last

    return journal_step(drop_last if args.drop else undo_last, "drop" if args.drop else "undo", out)


def journal_step(step, verb: str, out: TextIO) -> int:
    from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError

    try:
        entry = step(Path.cwd())
    except (BaselineConflict, BaselineWriteError) as exc:
        raise UsageError(str(exc)) from None
    if entry is None:
        print(f"nothing to {verb}", file=out)
        return EXIT_FAILED
    done = {"undo": "undone", "redo": "redone", "drop": "dropped (its files stay as they are)"}[verb]
    print(f"{done}: {entry.reason}", file=out)
    for file in entry.files:
        print(f"  {one_line(file['path'])}", file=out)
    return EXIT_OK
