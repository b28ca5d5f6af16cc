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
    parser.add_argument("--list", action="store_true",
                        help="list the journal instead, newest first: each step, its state, when, and who wrote it (an assistant's name)")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.baselines.journal import drop_last, undo_last

    if args.list:
        return list_journal(out)
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
    print(f"{done}: {entry.reason}" + (f" (written by {one_line(entry.author)})" if entry.author else ""), file=out)
    for file in entry.files:
        print(f"  {one_line(file['path'])}", file=out)
    return EXIT_OK


def list_journal(out: TextIO) -> int:
    """The journal, newest first: what `undo` would take back comes first among the applied ones."""
    import time

    from agentdiff.core.baselines.journal_entries import journal_entries

    entries = [e for e in journal_entries(Path.cwd()) if e.state != "dropped"]
    if not entries:
        print("the journal is empty", file=out)
        return EXIT_OK
    for entry in reversed(entries):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.time))
        by = f"  by {one_line(entry.author)}" if entry.author else ""
        print(f"{entry.id}  {entry.state:<8} {when}{by}  {one_line(entry.reason)}", file=out)
    return EXIT_OK
