"""`agentdiff compare [BASE] [HEAD]`: two runs side by side, what regressed and what it cost."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from .errors import EXIT_FAILED, EXIT_OK, UsageError

NAME = "compare"
RUN_HELP = ("a kept run (its folder under .agentdiff/runs, its name or a unique beginning of it, latest, previous) "
            "or a JSON report file (run --report json=FILE)")


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="compare two runs: regressed, fixed, flaky, erroring, added, removed; scores, time, tokens, cost",
        description="Compare two runs case by case. Defaults: HEAD the latest kept run; BASE the latest kept run on "
        "the main branch before it, else the one before it. Exit 0, or 1 when a case regressed or newly errs.",
    )
    parser.add_argument("base", nargs="?", help=f"the run compared against: {RUN_HELP}")
    parser.add_argument("head", nargs="?", help="the run compared (default: the latest kept run)")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the comparison as JSON")
    form.add_argument("--markdown", action="store_true", help="print it as Markdown (a PR comment)")


def load_pair(base, head):
    from agentdiff.core.reports.kept_runs import RunNotFound, default_pair

    for given in (base, head):
        if given is not None and not given.strip():  # an unset CI variable: an error, never the default runs
            raise UsageError("a RUN cannot be empty (an unset variable?): name a kept run or a JSON report file")
    try:
        return default_pair(Path.cwd(), base, head)
    except RunNotFound as exc:
        raise UsageError(str(exc)) from None


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.reports.compare import compare, comparison_dict, comparison_lines

    cmp = compare(*load_pair(args.base, args.head))
    if args.json:
        out.write(json.dumps(comparison_dict(cmp), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write("\n".join(comparison_lines(cmp, markdown=args.markdown)) + "\n")
    return EXIT_FAILED if cmp.of("regressed") or cmp.of("newly erroring") else EXIT_OK
