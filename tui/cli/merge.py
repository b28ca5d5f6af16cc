"""`agentdiff merge REPORTS… [--report KIND=FILE]… [--json]`: the JSON reports of a suite's shards
(`run --shard K/N` on several machines) as one run: its table, JSON, JUnit or Markdown report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from .color import wants_color
from .errors import EXIT_USAGE, exit_code, print_errors
from .options import add_color_option, add_report_options, check_reports, write_reports
from .table import render_case_table

NAME = "merge"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="merge the JSON reports of a suite's shards into one run's reports",
        description="Merge JSON reports (each shard's `run --report json=FILE`) into one: the table on stdout (or "
        "--json), and any --report (json, junit, markdown; a CSV lists invocations, which JSON reports do not hold: "
        "concatenate the shards' CSVs instead). A case in two reports is an error. Exit as run does.",
    )
    parser.add_argument("reports", nargs="+", type=Path, metavar="REPORTS", help="the shards' JSON reports")
    add_report_options(parser)
    add_color_option(parser)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.reports.json_report import render_json
    from agentdiff.core.reports.merge import MergeError, merge_reports

    if any(kind == "csv" for kind, _ in args.report):
        print("error: a CSV report lists invocations, which JSON reports do not hold: concatenate the shards' CSVs instead", file=err)
        return EXIT_USAGE
    if not check_reports(args.report, err):
        return EXIT_USAGE
    load_errors: list = []
    try:
        cases = merge_reports(args.reports, load_errors)
    except MergeError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    config, _ = load_project_config(Path.cwd())
    print_errors(load_errors, err)  # the shards' files that did not load: kept in the merged report too
    if not write_reports(args.report, cases, err, config.prices, load_errors):
        return EXIT_USAGE
    out.write(render_json(cases, prices=config.prices, load_errors=load_errors) if args.json
              else render_case_table(cases, color=wants_color(args.color, out), prices=config.prices))
    return EXIT_USAGE if load_errors else exit_code(cases, [], config.inconclusive_passes, config.new_passes)
