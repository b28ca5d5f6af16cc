"""`agentdiff accept`: the workbench's `a`/`A` for scripts and CI bots, on the same journal (`undo`,
`redo` take it back and again).

`accept CASE…` runs each case now (a replay for a conformance case, a live run for an EvalSet case),
prints the exact file change, asks (unless `--yes`), and writes it as one journal entry; `--all-failed
[PATHS]` does it for every case that fails. Exit 0 written, 1 nothing to accept (or not confirmed), 2 error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from ..safe_text import one_line
from .errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, print_errors, quoted
from .options import add_run_options, run_now
from .selection import find_case, select_cases

NAME = "accept"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="accept cases' actual runs as their baselines (the preview first; journaled: `undo` takes it back)",
        description="Run each CASE now and write what it did as its baseline: the whole case, one turn (--turn) or one "
        "layer of a turn (--layer). CASE is a case id or any unique end of one, as for `diff`. With --all-failed, every "
        "failing case under PATHS. The exact file change is printed first and confirmed unless --yes; the write is one "
        "journal entry. Exit 0 written, 1 nothing to accept or not confirmed, 2 errors.",
    )
    parser.add_argument("cases", nargs="*", metavar="CASE", help="case ids (or, with --all-failed, PATHS to look under)")
    parser.add_argument("--all-failed", action="store_true", help="accept every failing case (under the PATHS given)")
    parser.add_argument("--turn", type=int, metavar="N", help="only turn N (1-based) of an EvalSet case")
    parser.add_argument("--layer", choices=("tool_calls", "response"), help="only this layer (of --turn N, else of every turn)")
    parser.add_argument("--run", type=int, metavar="N", dest="repeat", help="of a flaky case (its runs disagree): accept run N (1-based)")
    parser.add_argument("--yes", "-y", action="store_true", help="write without asking")
    add_run_options(parser)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:

    from agentdiff.core.baselines.accept import AcceptRequest, NothingToAccept, plan_accepts
    from agentdiff.core.baselines.documents import RecordError
    from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError, write_baseline
    from agentdiff.core.project.config import load_project_config

    if not args.cases and not args.all_failed:
        raise UsageError("name the cases to accept (CASE…), or --all-failed")
    if args.turn is not None and args.turn < 1:
        raise UsageError("--turn counts from 1")
    if args.repeat is not None and args.repeat < 1:
        raise UsageError("--run counts from 1")
    root = Path.cwd()
    config, config_errors = load_project_config(root)
    print_errors(config_errors, err)
    if args.all_failed:
        found, unknown = select_cases(args.cases, config)
        refs = list(found.cases)
        print_errors(found.errors, err)
        if unknown:
            raise UsageError(f"no case or folder matches {quoted(unknown[0])}")
    else:
        refs = []
        for query in args.cases:
            ref = find_case(query, [], err)
            if ref is None:
                return EXIT_USAGE
            refs.append(ref)
    runs = run_now(refs, args, config, keep=(lambda run: run.result.status.value != "passed") if args.all_failed else None)
    if args.all_failed:
        flaky = [run for run in runs if run.result.disagreeing]
        if flaky:
            print(f"left out, flaky (their runs disagree; accept one with --run N, or review them): "
                  f"{', '.join(run.ref.id for run in flaky)}", file=err)
            runs = [run for run in runs if run not in flaky]
        broken = [run for run in runs if run.result.status.value == "error" or run.shown_output is None or run.shown_output.error]
        for run in broken:  # an error has no run to accept: the others are still accepted
            print(f"left out, the run failed: {run.ref.id}: {one_line(run.result.error or '')}", file=err)
        runs = [run for run in runs if run not in broken]
        if not runs:
            print("nothing to accept: no case fails", file=out)
            return EXIT_FAILED
    scope = "layer" if args.layer else "turn" if args.turn is not None else "case"
    turn = args.turn - 1 if args.turn is not None else None
    try:
        repeat = args.repeat - 1 if args.repeat is not None else None
        plan = plan_accepts([AcceptRequest(run, scope, turn, args.layer, repeat) for run in runs], root)
    except NothingToAccept as exc:
        print(exc, file=out)
        return EXIT_FAILED
    except RecordError as exc:
        raise UsageError(str(exc)) from None
    out.write(plan.preview)
    print(f"{plan.description} ({len(plan.writes)} file{'s' if len(plan.writes) != 1 else ''})", file=out)
    if not args.yes and not _confirm("write it? [y/N] ", out):
        print("not written", file=out)
        return EXIT_FAILED
    try:
        entry = write_baseline(plan.writes, root, plan.description)
    except (BaselineConflict, BaselineWriteError) as exc:
        raise UsageError(str(exc)) from None
    print(f"written: {entry.reason} (`agentdiff undo` takes it back)", file=out)
    for run in runs:  # a journey check is no baseline: accepting the run does not make it hold
        broken = [m for m in run.result.metrics if m.name.startswith("check: ") and m.status.value == "failed"]
        for metric in broken:
            print(f"note: {run.ref.id} still fails {metric.name} ({(metric.details or {}).get('source', '')}): "
                  f"{metric.reason}", file=out)
    return EXIT_OK


def _confirm(question: str, out: TextIO) -> bool:
    if not sys.stdin or not sys.stdin.isatty():
        raise UsageError("not asked: no terminal to answer on; pass --yes to write without asking")
    out.write(question)
    out.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
