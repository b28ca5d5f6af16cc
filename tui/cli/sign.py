"""`agentdiff sign CASE… [--note TEXT]`: a reviewer's sign-off on the cases' current baselines, kept
in their registration (tied to the baseline's content: a later change needs a new sign-off); one
journaled write, undone by `agentdiff undo`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from .errors import EXIT_OK, EXIT_USAGE, UsageError
from .selection import select_cases

NAME = "sign"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="sign off the cases' current baselines (what `baselines` and the gate's require_signoff check)",
        description="Record a sign-off on each named case's current baseline in its registration "
        "(agentdiff-record.json): who, when, and the baseline's digest. One undoable step.",
    )
    parser.add_argument("cases", nargs="+", metavar="CASE", help="case ids (or eval_ids, case folders, files, folders)")
    parser.add_argument("--note", default="", help="why the new baseline is right")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.reports.baseline_review import sign

    config, _ = load_project_config(Path.cwd())
    found, unknown = select_cases(args.cases, config)
    if unknown:
        print(f"error: no case matches {unknown[0]!r}", file=err)
        return EXIT_USAGE
    if not found.cases:  # a folder of no cases: nothing to sign, and no empty undo step either
        print("nothing to sign: no case is there", file=err)
        return EXIT_USAGE
    try:
        files = sign(found.cases, Path.cwd(), args.note)
    except (BaselineConflict, BaselineWriteError) as exc:
        raise UsageError(str(exc)) from None
    print(f"signed off {len(found.cases)} case(s) in {', '.join(files)} (agentdiff undo takes it back)", file=out)
    return EXIT_OK
