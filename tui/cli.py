"""The `agentdiff` command line.

Exit codes: 0 every case passed, 1 any case failed, errored, was flaky or not evaluated, 2 usage
or load errors (bad files are reported on stderr and the good ones still run).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional, Sequence, TextIO

from agentdiff.core import __version__
from agentdiff.core.formats.adk_results import RESULT_SUFFIX
from agentdiff.core.project.discovery import ConformanceCaseRef, discover
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.eval_set_files import load_config_file
from agentdiff.core.reports import REPORT_KINDS, write_report
from agentdiff.core.reports.json_report import render_json
from agentdiff.core.scoring.results import CaseResult, summarize

from .console_table import render_case_table

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _report_spec(value: str) -> tuple[str, Path]:
    kind, sep, file = value.partition("=")
    if not sep or kind not in REPORT_KINDS or not file:
        raise argparse.ArgumentTypeError(f"expected KIND=FILE with KIND one of {', '.join(REPORT_KINDS)}, got {value!r}")
    return kind, Path(file)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentdiff",
        description="A workbench for evaluating AI agents; speaks Google ADK's eval and conformance formats.",
    )
    parser.add_argument("--version", action="version", version=f"agentdiff {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    score = commands.add_parser(
        "score",
        help="re-score stored ADK results (*.evalset_result.json) with zero agent calls",
        description="Re-score the actual invocations stored in ADK results files, exactly as ADK scores them. "
        "Folders are searched for *.evalset_result.json. The runs of one eval case in a file are grouped as "
        "AgentEvaluator groups num_runs.",
    )
    score.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="results files or folders")
    score.add_argument("--config", type=Path, help="a test_config.json whose criteria replace the stored ones")
    _report_options(score)

    listing = commands.add_parser(
        "list", help="list the cases found under PATHS, and every file that failed to load",
        description="Discover EvalSet files (*.evalset.json, *.test.json) and conformance cases (spec.yaml) "
        "under PATHS and list them with their load errors.",
    )
    listing.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="files or folders (default: .)")
    listing.add_argument("--json", action="store_true", help="print JSON")

    watch = commands.add_parser(
        "watch", help="the TUI: watch agents, prompts and cases; re-run what a change affects (the default command)",
        description="Open the workbench on the cases under PATHS: every case runs once, then each save re-runs only "
        "what it can affect. Keys: ? in the app.",
    )
    watch.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="folders of cases and agents (default: the configured paths, else .)")
    watch.add_argument("--agents", action="append", type=Path, default=[], metavar="DIR", help="an agents dir (repeatable)")
    watch.add_argument("--mode", choices=("replay", "live"), help="replay (conformance default) or live")
    watch.add_argument("--jobs", type=int, help="runs in flight")
    watch.add_argument("--timeout", type=float, help="seconds per run")

    run = commands.add_parser(
        "run", help="run cases headless (CI): replay conformance cases, run EvalSet cases live, report",
        description="Discover the cases under PATHS and run them in isolated worker processes: conformance cases "
        "replay their recordings (no model credentials needed), EvalSet cases run live and are scored with their "
        "test_config.json exactly as ADK scores them. Never writes baselines. Exit 0 when every case passed, 1 when "
        "any failed, errored, was flaky or not evaluated, 2 for usage or load errors.",
    )
    run.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="files, folders or case ids (default: the configured paths, else .)")
    _run_options(run)
    run.add_argument("--num-runs", type=int, help="repeats per case, run concurrently (default 1)")
    run.add_argument("--run-tools", action="store_true", help="replay: also diff the real tools' results against the recorded ones")
    _report_options(run)

    record = commands.add_parser(
        "record", help="re-record cases live: their run becomes the baseline (journaled, undoable)",
        description="Run each case live and write what it did as its baseline: a conformance case's "
        "generated-recordings/-session YAML (ADK's format; spec.yaml is never touched), or an EvalSet case's "
        "expected invocations (the rest of the file is kept as it was). A registration record "
        "(agentdiff-record.json) goes beside it. Writes are atomic and journaled under .agentdiff/journal.",
    )
    record.add_argument("cases", nargs="+", metavar="CASE_OR_PATH", help="case ids, or files and folders of cases")
    _run_options(record, mode=False)

    diff = commands.add_parser(
        "diff", help="one case's layered diff (expected against actual), as text or JSON",
        description="Diff one case's baseline against its actual run, layer by layer (request, tool_calls, "
        "response, session), every divergence with its turn, path and the file and line of the expected value. "
        "CASE is a case id as `agentdiff list` shows it, or any unique end of one (an eval_id, a case folder). "
        "The actual side is --actual; else, for an EvalSet case, the newest stored ADK result of the case; else "
        "(or with --run) a run of the case now: a replay for a conformance case, a live run for an EvalSet case. "
        "Exit 0 when the sides are the same, 1 when they differ, 2 for usage or load errors.",
    )
    diff.add_argument("case", metavar="CASE", help="case id, eval_id or conformance case folder")
    diff.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="where to look for the case (default: .)")
    diff.add_argument("--actual", type=Path, metavar="RESULTS", help="an ADK *.evalset_result.json holding the actual run")
    diff.add_argument("--run", action="store_true", help="run the case now even when ADK has stored results for it")
    _run_options(diff)
    diff.add_argument("--json", action="store_true", help="print the diff as JSON (docs/diff-json.md)")
    return parser


def _report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the JSON report instead of the table")
    parser.add_argument(
        "--report", action="append", type=_report_spec, default=[], metavar="KIND=FILE",
        help=f"also write a report ({', '.join(REPORT_KINDS)}); repeatable; csv appends",
    )


def _run_options(parser: argparse.ArgumentParser, mode: bool = True) -> None:
    parser.add_argument("--agents", action="append", type=Path, default=[], metavar="DIR", help="an agents dir (repeatable)")
    if mode:
        parser.add_argument("--mode", choices=("replay", "live"), help="replay (conformance default) or live (EvalSet default)")
    parser.add_argument("--streaming-mode", choices=("none", "sse"), help="conformance: which recordings (default: every recorded mode; record: none)")
    parser.add_argument("--jobs", type=int, help="concurrent workers (default: the CPU count)")
    parser.add_argument("--timeout", type=float, help="seconds per run before it is stopped (default 120)")


def _print_errors(errors: Sequence[LoadError], out: TextIO) -> None:
    for error in errors:
        print(f"error: {error}", file=out)


def _result_files(paths: Sequence[Path]) -> tuple[list[Path], list[LoadError]]:
    files: list[Path] = []
    errors: list[LoadError] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob(f"*{RESULT_SUFFIX}") if p.is_file())
            if not found:
                errors.append(LoadError(file=str(path), message=f"no *{RESULT_SUFFIX} files in this folder"))
            files += found
        elif path.exists():
            files.append(path)
        else:
            errors.append(LoadError(file=str(path), message="no such file or folder"))
    return files, errors


def _exit_code(cases: Sequence[CaseResult], errors: Sequence[LoadError]) -> int:
    if errors:
        return EXIT_USAGE
    return EXIT_OK if summarize(cases).all_passed else EXIT_FAILED


def cmd_score(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.scoring.stored_results import rescore_files

    config = None
    errors: list[LoadError] = []
    if args.config is not None:
        if not args.config.is_file():
            print(f"error: {args.config}: no such config file", file=err)
            return EXIT_USAGE
        loaded, config_errors = load_config_file(args.config)
        if config_errors:
            _print_errors(config_errors, err)
            return EXIT_USAGE
        config = loaded.config
    files, errors = _result_files(args.results)
    cases, load_errors = rescore_files(files, config, root=Path.cwd())
    errors += load_errors
    _print_errors(errors, err)
    for kind, path in args.report:
        write_report(kind, cases, path)
    if args.json:
        out.write(render_json(cases))
    else:
        out.write(render_case_table(cases))
    return _exit_code(cases, errors)


def cmd_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    found = discover(args.paths or [Path(".")], root=Path.cwd())
    if args.json:
        items = []
        for ref in found.cases:
            item = {"id": ref.id, "source": ref.source, "category": ref.category, "name": ref.name}
            if isinstance(ref, ConformanceCaseRef):
                item |= {"kind": "conformance", "agent": ref.case.spec.agent, "recorded": sorted(ref.case.baselines)}
            else:
                item |= {"kind": "eval_set", "eval_set_id": ref.eval_set.eval_set.eval_set_id,
                         "turns": len(ref.case.conversation or []), "config": ref.config.file}
            items.append(item)
        json.dump({"cases": items, "errors": [e.model_dump() for e in found.errors]}, out, indent=2)
        out.write("\n")
    else:
        current = None
        for ref in found.cases:
            if ref.category != current:
                current = ref.category
                print(current, file=out)
            if isinstance(ref, ConformanceCaseRef):
                modes = ", ".join(sorted(ref.case.baselines)) or "not recorded"
                print(f"  {ref.name}  [agent {ref.case.spec.agent}; {modes}]", file=out)
            else:
                turns = len(ref.case.conversation or [])
                kind = f"{turns} turn{'s' if turns != 1 else ''}" if ref.case.conversation is not None else "scenario"
                print(f"  {ref.name}  [{kind}; config {ref.config.file or 'ADK default'}]", file=out)
        print(f"{len(found.cases)} cases, {len(found.errors)} load errors", file=out)
        _print_errors(found.errors, err)
    return EXIT_USAGE if found.errors else EXIT_OK


def _select(args_paths: Sequence[str], config, err: TextIO):
    """Cases from paths and case ids; returns (cases, load errors, unknown arguments)."""
    from agentdiff.core.project.discovery import Discovery

    selected = Discovery()
    unknown: list[str] = []
    paths = [Path(p) for p in args_paths if Path(p).exists()]
    queries = [p for p in args_paths if not Path(p).exists()]
    if paths or not queries:
        found = discover(paths or list(config.paths) or [Path(".")], root=Path.cwd())
        selected.cases += found.cases
        selected.errors += found.errors
    if queries:
        everything = discover(list(config.paths) or [Path(".")], root=Path.cwd())
        for query in queries:
            matches = everything.resolve(query)  # every case the query names: ids, eval_ids, case folders
            if matches:
                selected.cases += matches
            else:
                unknown.append(query)
    seen: set[str] = set()
    selected.cases = [c for c in selected.cases if not (c.id in seen or seen.add(c.id))]
    return selected, unknown


def _options(args: argparse.Namespace, config):
    from agentdiff.core.run.options import RunOptions

    return RunOptions(
        mode=getattr(args, "mode", None) or config.mode,
        num_runs=getattr(args, "num_runs", None) or config.num_runs,
        timeout=args.timeout or config.timeout,
        run_tools=getattr(args, "run_tools", False),
        streaming=args.streaming_mode,
        agents_dirs=tuple(args.agents) + config.agents,
        mapping=config.agent_for,
    )


def _pool(args: argparse.Namespace, config, options):
    from agentdiff.core.worker.pool import WorkerPool

    return WorkerPool(jobs=getattr(args, "jobs", None) or config.jobs, timeout=options.timeout or 120.0, memory_mb=config.memory_mb)


def _progress(err: TextIO, done: int, total: int, line: str) -> None:
    print(f"[{done}/{total}] {line}", file=err, flush=True)


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import asyncio
    import time

    from agentdiff.core.run.runner import run_cases
    from agentdiff.core.project.config import load_project_config
    from .console_table import GLYPHS

    config, config_errors = load_project_config(Path.cwd())
    found, unknown = _select([str(p) for p in args.paths], config, err)
    errors = list(config_errors) + found.errors
    for query in unknown:
        print(f"error: no case matches {query!r}", file=err)
    options = _options(args, config)
    cases = []

    async def go() -> None:
        pool = _pool(args, config, options)
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
    _print_errors(errors, err)
    for kind, path in args.report:
        write_report(kind, cases, path)
    out.write(render_json(cases) if args.json else render_case_table(cases))
    if unknown or errors or not found.cases:
        if not found.cases and not errors and not unknown:
            print("error: no cases found", file=err)
        return EXIT_USAGE
    return _exit_code(cases, [])


def cmd_record(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import asyncio

    from agentdiff.core.baselines.record import record_case
    from agentdiff.core.project.config import load_project_config

    config, config_errors = load_project_config(Path.cwd())
    found, unknown = _select(args.cases, config, err)
    for query in unknown:
        print(f"error: no case matches {query!r}", file=err)
    _print_errors(list(config_errors) + found.errors, err)
    if unknown or not found.cases:
        return EXIT_USAGE
    options = _options(args, config)
    failures = 0

    async def go() -> None:
        nonlocal failures
        pool = _pool(args, config, options)
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


def cmd_watch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.run.options import RunOptions
    from agentdiff.core.project.config import load_project_config

    from .app import create_app

    root = Path.cwd()
    config, config_errors = load_project_config(root)
    _print_errors(config_errors, err)
    paths = list(args.paths) or list(config.paths) or [Path(".")]
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"error: no such folder: {missing[0]}", file=err)
        return EXIT_USAGE
    options = RunOptions(
        mode=args.mode or config.mode, num_runs=config.num_runs, timeout=args.timeout or config.timeout,
        agents_dirs=tuple(args.agents) + config.agents, mapping=config.agent_for,
    )
    pool = _pool(args, config, options)
    try:
        create_app(root, [p.resolve() for p in paths], pool=pool, options=options).run()
    finally:
        pool.close()
    return EXIT_OK


def _find_case(query: str, paths: Sequence[Path], err: TextIO):
    """The one case `query` names, or None after saying why on `err`."""
    file_part = query.split("::", 1)[0] if "::" in query else None
    search = list(paths) or ([Path(file_part)] if file_part and Path(file_part).exists() else [Path(".")])
    found = discover(search, root=Path.cwd())
    matches = found.resolve(query)
    if len(matches) == 1:
        return matches[0]
    if not matches:
        _print_errors(found.errors, err)
        print(f"error: no case matches {query!r} (see `agentdiff list`)", file=err)
    else:
        print(f"error: {query!r} matches {len(matches)} cases; use one of:", file=err)
        for ref in matches:
            print(f"  {ref.id}", file=err)
    return None


def _run_one(ref, args: argparse.Namespace):
    import asyncio

    from agentdiff.core.run.runner import run_case
    from agentdiff.core.project.config import load_project_config

    config, _ = load_project_config(Path.cwd())
    options = _options(args, config)

    async def go():
        pool = _pool(args, config, options)
        try:
            return await run_case(ref, pool, options, Path.cwd())
        finally:
            pool.close()

    return asyncio.run(go())


def cmd_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.formats.adk_results import load_eval_set_result
    from agentdiff.core.run.adk_history import actual_from_results, latest_actual
    from agentdiff.core.run.expected import NotRecorded, load_baseline
    from agentdiff.core.diff.case import diff_case
    from agentdiff.core.project.discovery import EvalCaseRef
    from agentdiff.core.reports.diff_json import render_diff_json
    from agentdiff.core.reports.diff_text import render_diff_text
    from agentdiff.core.formats.source_file import display_path

    ref = _find_case(args.case, args.paths, err)
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
            _print_errors(errors, err)
            return EXIT_USAGE
        eval_id = ref.case.eval_id if isinstance(ref, EvalCaseRef) else ref.name
        found = actual_from_results(loaded, eval_id)
        if found is None:
            print(f"error: {loaded.source.display} has no run of {eval_id!r}", file=err)
            return EXIT_USAGE
        actual = (found[0], loaded.source.display)
    elif isinstance(ref, EvalCaseRef) and not args.run:
        actual = latest_actual(ref, Path.cwd())
    if actual is None:
        case_run = _run_one(ref, args)
        if case_run.diff is None:
            print(f"error: {ref.id}: {case_run.result.error}", file=err)
            return EXIT_USAGE
        diff = case_run.diff
        source = f"a {case_run.result.mode} run just now"
    else:
        trace, source = actual
        diff = diff_case(baseline.trace, trace, baseline.criteria, ref.id, baseline.sources)
    if args.json:
        case = {"id": ref.id, "source": ref.source, "kind": "eval_set" if isinstance(ref, EvalCaseRef) else "conformance"}
        out.write(render_diff_json(diff, case, source))
    else:
        out.write(render_diff_text(diff, actual_source=source))
    return EXIT_OK if diff.same else EXIT_FAILED


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"score", "list", "diff", "run", "record", "watch"}
    if not argv or (argv[0] not in commands and not argv[0].startswith("-")):
        argv = ["watch", *argv]  # `agentdiff [PATHS…]` is the TUI
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(out)
        return EXIT_USAGE
    handler = {"score": cmd_score, "list": cmd_list, "diff": cmd_diff, "run": cmd_run, "record": cmd_record, "watch": cmd_watch}[args.command]
    return handler(args, out, err)


def entry() -> None:
    sys.exit(main())
