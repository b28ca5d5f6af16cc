"""`agentdiff score`: re-score the runs stored in ADK results files, with zero agent calls."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence, TextIO

from agentdiff.core.formats.adk_results import RESULT_SUFFIX
from agentdiff.core.formats.eval_set_files import load_config_file
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.reports.json_report import render_json

from .color import wants_color
from .errors import EXIT_USAGE, UsageError, exists, exit_code, print_errors
from .options import add_color_option, add_report_options, check_reports, write_reports
from .score_agents_cli import agents_cli_kind, score_agents_cli
from .score_traces import score_traces, split_traces
from .table import render_case_table

NAME = "score"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME,
        help="re-score stored ADK results (*.evalset_result.json), OpenTelemetry traces, or agents-cli traces and grades, with zero agent calls",
        description="Re-score the actual invocations stored in ADK results files, exactly as ADK scores them. "
        "Folders are searched for *.evalset_result.json. The runs of one eval case in a file are grouped as "
        "AgentEvaluator groups num_runs. An agents-cli grade results file (results_<ts>.json) is shown with its "
        "stored scores; an agents-cli trace file (traces_<ts>.json) is graded by the eval config's local metrics "
        "and diffed against each case's baseline. OpenTelemetry traces of ADK (OTLP files or folders, either telemetry schema) are "
        "scored the same way, each conversation against the EvalSet case it maps to (its eval_id is the conversation's "
        "session id, as `agentdiff import` names it, else its user messages are the same).",
    )
    parser.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="results files, trace files, or folders of them")
    parser.add_argument("--config", type=Path, help="a test_config.json whose criteria replace the stored ones")
    parser.add_argument("--adk-version", metavar="X.Y.Z",
                        help="score as this ADK version scores (default: the version in the project's Python, see doctor)")
    parser.add_argument("--python", metavar="PATH", help="the project's interpreter, whose ADK version scores (default: found)")
    add_report_options(parser)
    add_color_option(parser)


def _result_files(paths: Sequence[Path]) -> tuple[list[Path], list[LoadError]]:
    files: list[Path] = []
    errors: list[LoadError] = []
    for path in paths:
        if not exists(path):
            errors.append(LoadError(file=str(path)[:200], message="no such file or folder"))
            continue
        if path.is_dir():
            found = sorted(p for p in path.rglob(f"*{RESULT_SUFFIX}") if p.is_file())
            if not found:
                errors.append(LoadError(file=str(path), message=f"no *{RESULT_SUFFIX} files in this folder"))
            files += found
        else:
            files.append(path)
    return files, errors


def _rules(args: argparse.Namespace):
    """The scoring rules: of `--adk-version`, else of the ADK in the project's Python, else the newest."""
    from agentdiff.core.formats.adk_rules import parse_version, rules_for
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.project.interpreter import find_interpreter

    if args.adk_version is not None:
        if parse_version(args.adk_version) is None:
            raise UsageError(f"--adk-version {args.adk_version!r} is not a version (say 1.19.0)")
        return rules_for(args.adk_version)
    config, _ = load_project_config(Path.cwd())
    python = find_interpreter(Path.cwd(), args.python, config.python)
    if python.error and (args.python or config.python):
        raise UsageError(f"the agents' Python, {python.describe(Path.cwd())}")
    return rules_for(python.adk)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.project.discovery import find_eval_sets
    from agentdiff.core.scoring.stored_results import rescore_files

    if not check_reports(args.report, err):
        return EXIT_USAGE
    config = None
    if args.config is not None:
        if not args.config.is_file():
            print(f"error: {args.config}: no such config file", file=err)
            return EXIT_USAGE
        loaded, config_errors = load_config_file(args.config)
        if config_errors:
            print_errors(config_errors, err)
            return EXIT_USAGE
        config = loaded.config
    rules = _rules(args)
    traces, given = split_traces(args.results)
    agents_cli = [(kind, path) for path in given if (kind := agents_cli_kind(path)) is not None]
    files, errors = _result_files([path for path in given if path not in {p for _, p in agents_cli}])
    case_ids = find_eval_sets(Path.cwd()) if files else None  # to name each case as `run` does
    cases, load_errors = rescore_files(files, config, root=Path.cwd(), case_ids=case_ids, rules=rules)
    errors += load_errors
    if agents_cli:
        more, more_errors = score_agents_cli(agents_cli, args, Path.cwd())
        cases, errors = [*cases, *more], [*errors, *more_errors]
    if traces:
        more, more_errors = score_traces(traces, args, Path.cwd(), err)
        cases, errors = [*cases, *more], [*errors, *more_errors]
    print_errors(errors, err, listed_by="agentdiff score --json")
    reports_written = write_reports(args.report, cases, err)
    if args.json:
        out.write(render_json(cases, load_errors=errors))
    else:
        out.write(render_case_table(cases, color=wants_color(args.color, out)))
    return exit_code(cases, errors) if reports_written else EXIT_USAGE
