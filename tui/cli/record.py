"""`agentdiff record`: run cases live and write what they did as their baselines (journaled)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from .errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_errors, quoted
from .options import add_run_options, run_options, worker_pool
from .selection import select_cases

NAME = "record"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="re-record cases live: their run becomes the baseline (journaled, undoable)",
        description="Run each case live and write what it did as its baseline: a conformance case's "
        "generated-recordings/-session YAML (ADK's format; spec.yaml is never touched), or an EvalSet case's "
        "expected invocations (the rest of the file is kept as it was). A registration record "
        "(agentdiff-record.json) goes beside it. Writes are atomic and journaled under .agentdiff/journal.",
    )
    parser.add_argument("cases", nargs="+", metavar="CASE_OR_PATH", help="case ids, or files and folders of cases")
    add_run_options(parser, mode=False)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import asyncio

    from agentdiff.core.baselines.record import record_case
    from agentdiff.core.project.config import load_project_config

    config, config_errors = load_project_config(Path.cwd())
    found, unknown = select_cases(args.cases, config)
    for query in unknown:
        print(f"error: no case matches {quoted(query)}", file=err)
    print_errors(list(config_errors) + found.errors, err)
    if unknown or not found.cases:
        return EXIT_USAGE
    options = run_options(args, config)
    failures = 0

    async def go() -> None:
        nonlocal failures
        pool = worker_pool(args, config, options)
        try:
            outcomes = await asyncio.gather(*(record_case(ref, pool, options, Path.cwd()) for ref in found.cases))
        finally:
            pool.close()
        for outcome in outcomes:
            if outcome.error:
                failures += 1
                print(f"✗ {outcome.ref.id}: {outcome.error}", file=out)
            else:
                print(f"✓ {outcome.ref.id}: wrote {', '.join(outcome.written)}", file=out)

    asyncio.run(go())
    return EXIT_FAILED if failures else EXIT_OK
