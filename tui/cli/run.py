"""`agentdiff run`: run cases headless (CI) in worker processes, print progress, the table or JSON,
and write the reports asked for."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from agentdiff.core.reports.json_report import render_json

from .errors import EXIT_USAGE, exit_code, print_errors
from .options import add_report_options, add_run_options, check_reports, run_options, worker_pool, write_reports
from .selection import select_cases
from .table import GLYPHS, render_case_table

NAME = "run"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="run cases headless (CI): replay conformance cases, run EvalSet cases live, report",
        description="Discover the cases under PATHS and run them in isolated worker processes: conformance cases "
        "replay their recordings (no model credentials needed), EvalSet cases run live and are scored with their "
        "test_config.json exactly as ADK scores them. Never writes baselines. Exit 0 when every case passed, 1 when "
        "any failed, errored, was flaky or not evaluated, 2 for usage or load errors.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="files, folders or case ids (default: the configured paths, else .)")
    add_run_options(parser, repeats=True)
    add_report_options(parser)


def _progress(err: TextIO, done: int, total: int, line: str) -> None:
    print(f"[{done}/{total}] {line}", file=err, flush=True)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import asyncio
    import time

    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.run.runner import run_cases

    if not check_reports(args.report, err):
        return EXIT_USAGE
    config, config_errors = load_project_config(Path.cwd())
    found, unknown = select_cases([str(p) for p in args.paths], config)
    errors = list(config_errors) + found.errors
    for query in unknown:
        print(f"error: no case matches {query!r}", file=err)
    options = run_options(args, config)
    cases = []

    async def go() -> None:
        pool = worker_pool(args, config, options)
        start = time.perf_counter()
        try:
            async for case_run in run_cases(found.cases, pool, options, Path.cwd()):
                cases.append(case_run.result)
                result = case_run.result
                _progress(err, len(cases), len(found.cases), f"{GLYPHS[result.status]} {result.id}  ({time.perf_counter() - start:.1f} s)")
        finally:
            pool.close()

    if found.cases:
        asyncio.run(go())
    order = {ref.id: i for i, ref in enumerate(found.cases)}
    cases.sort(key=lambda case: order.get(case.id, 0))
    print_errors(errors, err)
    reports_written = write_reports(args.report, cases, err)
    out.write(render_json(cases) if args.json else render_case_table(cases))
    if unknown or errors or not found.cases or not reports_written:
        if not found.cases and not errors and not unknown:
            print("error: no cases found", file=err)
        return EXIT_USAGE
    return exit_code(cases, [])
