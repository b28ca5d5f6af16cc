"""`agentdiff diff`: one case's layered diff, its baseline against an actual run (a stored ADK
result, or a run now), as text or JSON."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from .color import paint_word_diff, wants_color
from .errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_errors
from .options import add_color_option, add_run_options, run_now
from .selection import find_case

NAME = "diff"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="one case's layered diff (expected against actual), as text or JSON",
        description="Diff one case's baseline against its actual run, layer by layer (request, tool_calls, "
        "response, session), every divergence with its turn, path and the file and line of the expected value. "
        "CASE is a case id as `agentdiff list` shows it, or any unique end of one (an eval_id, a case folder). "
        "The actual side is --actual; else, for an EvalSet case, the newest stored ADK result of the case; else "
        "(or with --run) a run of the case now: a replay for a conformance case, a live run for an EvalSet case. "
        "Exit 0 when the sides are the same, 1 when they differ, 2 for usage or load errors.",
    )
    parser.add_argument("case", metavar="CASE", help="case id, eval_id or conformance case folder")
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="where to look for the case (default: .)")
    parser.add_argument("--actual", type=Path, metavar="RESULTS", help="an ADK *.evalset_result.json holding the actual run")
    parser.add_argument("--run", action="store_true", help="run the case now even when ADK has stored results for it")
    add_run_options(parser, repeats=True)
    parser.add_argument("--json", action="store_true", help="print the diff as JSON (docs/diff-json.md)")
    add_color_option(parser)


def _run_one(ref, args: argparse.Namespace):
    from agentdiff.core.project.config import load_project_config

    config, _ = load_project_config(Path.cwd())
    (run,) = run_now([ref], args, config)
    return run


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.diff.case import diff_case
    from agentdiff.core.diff.explain import first_counted, with_lead
    from agentdiff.core.formats.adk_results import load_eval_set_result
    from agentdiff.core.formats.source_file import display_path
    from agentdiff.core.project.family import family_of
    from agentdiff.core.reports.diff_json import render_diff_json
    from agentdiff.core.reports.diff_text import render_diff_text
    from agentdiff.core.reports.judge_text import judge_lines
    from agentdiff.core.run.adk_history import actual_from_results
    from agentdiff.core.run.expected import NotRecorded, load_baseline

    ref = find_case(args.case, args.paths, err)
    if ref is None:
        return EXIT_USAGE
    try:
        baseline = load_baseline(ref, args.streaming_mode)
    except NotRecorded as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    actual = None
    if args.actual is not None:
        loaded, errors = load_eval_set_result(args.actual, display_path(args.actual, Path.cwd()))
        if loaded is None:
            print_errors(errors, err)
            return EXIT_USAGE
        eval_id = family_of(ref).eval_key(ref) or ref.name
        found = actual_from_results(loaded, eval_id)
        if found is None:
            print(f"error: {loaded.source.display} has no run of {eval_id!r}", file=err)
            return EXIT_USAGE
        actual = (found[0], loaded.source.display)
    elif not args.run:  # the newest run its format's own tool stored (ADK's eval history)
        actual = family_of(ref).stored_actual(ref, Path.cwd())
    judge: list[str] = []
    if actual is None:
        case_run = _run_one(ref, args)
        judge = [f"  {m.name} {line.strip()}" if not line.startswith(" ") else f"    {line.strip()}"
                 for m in case_run.result.metrics for line in judge_lines(case_run.result, m, only_failing=False)]
        if case_run.diff is None:
            print(f"error: {ref.id}: {case_run.result.located_error}", file=err)
            if case_run.result.error_trace:
                print(case_run.result.error_trace, file=err)
            return EXIT_USAGE
        diff = case_run.diff
        source = f"a {case_run.result.mode} run just now"
    else:
        trace, source = actual
        diff = diff_case(baseline.trace, trace, baseline.criteria, ref.id, baseline.sources)
        diff = with_lead(diff, first_counted(diff))  # no metrics here: lead with what counts under the criteria
    where = case_run.result if actual is None and case_run.result.error_location else None
    if args.json:
        case = {"id": ref.id, "source": ref.source, "kind": ref.family}
        if where is not None:  # where the run's error is in the project's code
            case |= {"error_location": where.error_location, "error_trace": where.error_trace}
        if actual is None:  # the run's judged metrics, as `run --json` has them
            case["judged"] = {m.name: m.details for m in case_run.result.metrics if m.details and "judge" in m.details}
        more = {}
        if actual is None:  # a case run more than once: its pass rate, and its runs' variants side by side
            from agentdiff.core.diff.variants import grid_dict
            from agentdiff.core.reports.json_report import pass_rate_dict
            from agentdiff.core.run.grid import run_grid

            made = run_grid(case_run)
            if case_run.result.pass_rate is not None:
                case["status"], case["pass_rate"] = case_run.result.status.value, pass_rate_dict(case_run.result.pass_rate)
            if made is not None:
                more["variants"] = grid_dict(made)
        out.write(render_diff_json(diff, case, source, more))
    else:
        text = render_diff_text(diff, actual_source=source)
        if where is not None:  # the error led by its place in the project's code, its traceback below
            trace = "".join(f"    {line}\n" for line in (where.error_trace or "").splitlines())
            text = text.replace(f"run error: {diff.error}\n", f"run error: {where.located_error}\n{trace}", 1)
        out.write(paint_word_diff(text, wants_color(args.color, out)))
        if judge:  # the judge's verdicts and reasons, turn by turn
            out.write("\njudge:\n" + "\n".join(judge) + "\n")
    return EXIT_OK if diff.unchanged else EXIT_FAILED
