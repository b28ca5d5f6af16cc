"""`agentdiff run`: run cases headless (CI) in worker processes, print progress, the table or JSON,
and write the reports asked for."""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from pathlib import Path
from typing import Optional, TextIO

from agentdiff.core.project.family import family_of
from agentdiff.core.reports.json_report import write_json
from agentdiff.core.run.result_spool import ResultSpool
from agentdiff.core.scoring.confidence import MAX_RUNS
from .run_confident import add_confident_options, confident_options, settle_held
from agentdiff.core.scoring.results import CaseStatus, slim

from .color import is_terminal, paint_status, wants_color
from .errors import EXIT_OK, EXIT_USAGE, UsageError, exit_code, print_errors, quoted
from .options import (
    add_color_option,
    agents_python,
    add_report_options,
    add_run_options,
    check_reports,
    run_options,
    worker_pool,
    write_reports,
)
from ..safe_text import CR, ESC, one_line
from .selection import select_cases
from .table import GLYPHS, render_case_table

NAME = "run"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="run cases headless (CI): replay conformance cases, run EvalSet cases live, report",
        description="Discover the cases under PATHS and run them in isolated worker processes: conformance cases "
        "replay their recordings (no model credentials needed), EvalSet cases run live and are scored with their "
        "test_config.json exactly as ADK scores them. Never writes baselines. Exit 0 when every case passed, 1 when "
        "any failed, errored, was flaky or not evaluated, 2 for usage or load errors, 3 when the cases that did not "
        "pass are inconclusive (held to a minimum pass rate their runs did not settle).",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="files, folders or case ids (default: the configured paths, else .)")
    parser.add_argument("--shard", type=shard_spec, metavar="K/N",
                        help="run shard K of N: the cases split evenly and the same way on every machine (by their last known "
                        "durations when there are some; see --shard-durations); merge the shards' JSON reports with agentdiff merge")
    parser.add_argument("--shard-durations", type=Path, metavar="REPORT",
                        help="a JSON report (say, the last CI run's) whose seconds balance the shards (default: the kept runs')")
    parser.add_argument("--yes", action="store_true", help="run many cases live without asking (see confirm_live_above)")
    parser.add_argument("--changed-since", metavar="REF",
                        help="only the cases the changes since the git REF can affect (their eval files, checks, agent code, "
                        "the project files their agent's code imports or names, files their agent read in the last kept run), "
                        "each said with why; a changed file that affects no known case is said on stderr")
    parser.add_argument("--changed-since-strict", action="store_true",
                        help="with --changed-since: run every case when some changed file cannot be tied to a case "
                        "(it is not documentation, CI settings or a test, and no agent imports, names or read it)")
    add_run_options(parser, repeats=True)
    add_confident_options(parser)
    add_report_options(parser)
    add_color_option(parser)


HEARTBEAT_SECONDS = 30.0  # a case still running says so this often (tests lower it)
_CLEAR = f"{CR}{ESC}[2K"  # back to the start of the line, and clear it


def _same_terminal(a: TextIO, b: TextIO) -> bool:
    """Both streams are the same terminal (stdout and stderr both on the screen)."""
    if not (is_terminal(a) and is_terminal(b)):
        return False
    try:
        return os.path.samestat(os.fstat(a.fileno()), os.fstat(b.fileno()))
    except (AttributeError, ValueError, OSError):
        return False


def _seconds(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


class Progress:
    """What `run` says on stderr while it works. `live` (stdout and stderr the same terminal): one
    line rewritten in place and cleared at the end, so the table is the only list of cases; else one
    line per event, as logs want them."""

    def __init__(self, err: TextIO, total: int, live: bool, color: bool) -> None:
        from agentdiff.core.workbench.progress import Progress as Batch

        self.err, self.total, self.live, self.color = err, total, live, color
        self.done = 0
        self._shown = False
        self.batch = Batch(started=time.monotonic())  # for the ETA: the cases' last times, else the pace so far

    def plan(self, case_ids: list[str], last_seconds: dict[str, float], jobs: int) -> None:
        self.batch.jobs = max(1, jobs)
        self.batch.queued(case_ids, False, time.monotonic(), last_seconds)

    def left_text(self) -> str:
        """` · about 2m05s left` while a second or more is left by the estimate, else nothing."""
        from agentdiff.core.workbench.progress import duration_text

        eta = self.batch.eta(time.monotonic())
        return f" · about {duration_text(eta)} left" if eta is not None and eta >= 1 and self.done < self.total else ""

    def _width(self) -> int:
        try:
            columns = os.get_terminal_size(self.err.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        return max(20, columns - 1) if columns else 79  # a terminal of unknown size says 0

    def say(self, text: str, painted: Optional[str] = None) -> None:
        """`text` as one line (`painted`: the same text with colour codes, for when it fits)."""
        if not self.live:
            print(painted or text, file=self.err, flush=True)
            return
        width = self._width()  # a line longer than the terminal would wrap, and `\r` not reach its start
        if len(text) > width:
            line = text[: width - 1] + "…"
        else:
            line = painted or text
        self.err.write(_CLEAR + line)
        self.err.flush()
        self._shown = True

    def keep(self, text: str) -> None:
        """A line that stays on a terminal too (which Python and ADK run the agents), above the one
        rewritten in place."""
        if self.live:
            self.err.write(_CLEAR)
            self._shown = False
        print(text, file=self.err, flush=True)

    def case_done(self, result, seconds: float) -> None:
        self.done += 1
        self.batch.finished(result.id)
        glyph = GLYPHS[result.status]
        head, tail = f"[{self.done}/{self.total}] ", f" {one_line(result.id)}  ({seconds:.1f} s){self.left_text()}"
        self.say(head + glyph + tail, head + paint_status(glyph, result.status, self.color) + tail)

    def heartbeat(self, case_id: str, seconds: float) -> None:
        prefix = f"[{self.done}/{self.total}] " if self.live else ""
        self.say(f"{prefix}case {one_line(case_id)}: {_seconds(seconds)} s, waiting for the agent")

    def finish(self) -> None:
        if self.live and self._shown:
            self.err.write(_CLEAR)
            self.err.flush()
            self._shown = False


def agents_cli_trace(case_run) -> list[tuple[str, dict]]:
    """An agents-cli case's run as its trace file entry (none for other cases, or a run that failed)."""
    return family_of(case_run.ref).kept_traces(case_run)


async def _timed(ref, pool, options, root: Path, progress: Progress, slots: asyncio.Semaphore, agents):
    """One case (as `run_cases` runs it) with its own clock, from the moment it gets a slot (so a case
    queued behind others is not counted as running), and a heartbeat while it runs long."""
    from agentdiff.core.run.runner import run_case

    async with slots:
        began = time.perf_counter()
        task = asyncio.ensure_future(run_case(ref, pool, options, root, agents))
        try:
            while not (await asyncio.wait({task}, timeout=HEARTBEAT_SECONDS))[0]:
                progress.heartbeat(ref.id, time.perf_counter() - began)
        finally:
            task.cancel()  # nothing when it is done; stops the run when this is cancelled
        return task.result(), time.perf_counter() - began


#: More shards than this is no CI matrix (and a list of that many loads would not fit in memory).
MAX_SHARDS = 10_000


def shard_spec(value: str) -> tuple[int, int]:
    index, sep, count = value.partition("/")
    whole = all(part.isascii() and part.isdigit() and len(part) <= 6 for part in (index, count))  # ASCII digits only
    if not sep or not whole or not 1 <= int(index) <= int(count):
        raise argparse.ArgumentTypeError(f"expected K/N with 1 ≤ K ≤ N ≤ {MAX_SHARDS:,}, such as 2/4, got {value[:40]!r}")
    if int(count) > MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"at most {MAX_SHARDS:,} shards, got {count}")
    return int(index), int(count)


def sharded(cases, args: argparse.Namespace, err: TextIO):
    from agentdiff.core.reports.merge import last_durations, shard

    index, count = args.shard
    if args.shard_durations is not None and not args.shard_durations.is_file():
        raise UsageError(f"--shard-durations {args.shard_durations}: no such report; every shard must split alike, so none runs without it")
    durations = last_durations(Path.cwd(), args.shard_durations)
    mine = shard(cases, index, count, key=lambda ref: ref.id, durations=durations)
    by = "balanced by their last known durations" if durations else "every {}th by id: no durations known yet".format(count)
    print(f"shard {index}/{count}: {len(mine)} of {len(cases)} cases ({by})", file=err)
    return mine


def confirmed(cases, args: argparse.Namespace, config, err: TextIO) -> bool:
    """Many cases about to run live: what they took the last time, and, at a terminal, a question."""
    import sys

    from agentdiff.core.reports.estimate import from_kept

    print(from_kept(Path.cwd(), [ref.id for ref in cases], config.prices).line(), file=err)
    if args.yes or not sys.stdin.isatty():
        return True
    err.write(f"run them live? (more than confirm_live_above = {config.confirm_live_above}; --yes skips this) [y/N] ")
    err.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def changed_cases(cases, args: argparse.Namespace, config, err: TextIO):
    """The cases changes since `--changed-since` can affect, each said with why; None when git cannot tell.
    Changed files tied to no case are said too; with `--changed-since-strict` they choose every case."""
    from agentdiff.core.formats.source_file import display_path
    from agentdiff.core.reports.changed_since import GitRefError, changed_impact

    try:
        impact = changed_impact(cases, Path.cwd(), args.changed_since, tuple(args.agents) + config.agents, config.agent_for)
    except GitRefError as exc:
        print(f"error: --changed-since {quoted(args.changed_since)}: {exc}", file=err)
        return None
    if impact.unattributed:
        shown = [one_line(display_path(p, Path.cwd())) for p in impact.unattributed]
        listed = ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")
        print(f"warning: {len(shown)} changed file(s) tied to no case: {listed}", file=err)
        if getattr(args, "changed_since_strict", False):
            print(f"--changed-since-strict: running all {len(cases)} cases", file=err)
            return list(cases)
        print("  (no agent imports, names or read them in a kept run; --changed-since-strict runs every case then)", file=err)
    chosen = impact.chosen
    if chosen:
        print(f"{len(chosen)} of {len(cases)} cases affected by the changes since {args.changed_since}:", file=err)
        for ref, reason in chosen:
            print(f"  {one_line(ref.id)}: {reason}", file=err)
    return [ref for ref, _ in chosen]


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.project.agent_memo import AgentMemo
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.project.doctor import declares_dependencies
    from agentdiff.core.project.interpreter import OWN_PYTHON
    from agentdiff.core.reports.kept_runs import RunKeeper
    from agentdiff.core.workbench.history import HISTORY_FILE, History
    from agentdiff.core.workbench.snapshots import Snapshots

    if not check_reports(args.report, err):
        return EXIT_USAGE
    config, config_errors = load_project_config(Path.cwd())
    found, unknown = select_cases([str(p) for p in args.paths], config)
    errors = list(config_errors) + found.errors
    if getattr(args, "changed_since_strict", False) and args.changed_since is None:
        print("error: --changed-since-strict goes with --changed-since REF", file=err)
        return EXIT_USAGE
    if args.changed_since is not None:
        found.cases = changed_cases(found.cases, args, config, err)
        if found.cases is None:
            return EXIT_USAGE
        if not found.cases:
            print(f"no case is affected by the changes since {args.changed_since}", file=err)
            return EXIT_OK
    for query in unknown:
        print(f"error: no case matches {quoted(query)}", file=err)
    if args.shard is not None:
        found.cases = sharded(found.cases, args, err)
    options = confident_options(args, run_options(args, config), err, found.cases)
    if options is None:
        return EXIT_USAGE
    if options.mode == "live" and len(found.cases) > config.confirm_live_above and not confirmed(found.cases, args, config, err):
        print("not run", file=err)
        return EXIT_USAGE
    python = agents_python(args, config) if found.cases else None
    keep_invocations = any(kind in ("csv", "adk") for kind, _ in args.report)  # only the CSV and ADK reports list them
    wants_traces = any(kind == "agents-cli" for kind, _ in args.report)
    wants_otlp = any(kind == "otlp" for kind, _ in args.report)
    otlp: list = []  # (result, trace, agent) of each case, for --report otlp=FILE
    traces: list[tuple[str, dict]] = []  # (case id, the case as agents-cli's trace file holds it)
    cases = ResultSpool()  # past its first 2,000, the results wait on disk for the reports
    progress = Progress(err, len(found.cases), live=_same_terminal(err, out), color=wants_color(args.color, err))
    keeper = RunKeeper(Path.cwd(), "run", config.keep_runs)  # `compare` and `gate` read it later
    keeper.shard = "{}/{}".format(*args.shard) if args.shard else None
    keeper.partial = f"--changed-since {args.changed_since}" if args.changed_since is not None else None
    if args.paths and keeper.partial is None and found.cases:  # some of the project's cases only: never the
        total = len(select_cases([], config)[0].cases)          # "whole run" compare and gate pick by default
        if len(found.cases) < total:  # (only counted: the whole project is not held through the run)
            keeper.partial = f"only {' '.join(str(p) for p in args.paths)} ({len(found.cases)} of {total} cases)"

    history, snapshots = History(Path.cwd() / HISTORY_FILE), Snapshots(Path.cwd())
    began = time.time()

    async def go() -> None:
        assert python is not None
        progress.keep(f"starting workers: {python.describe(Path.cwd())}…")
        if python.why == OWN_PYTHON and declares_dependencies(Path.cwd()):
            progress.keep("note: the project has no environment of its own here, so its agents import what agentdiff's "
                         "environment has; `agentdiff doctor` checks, --python chooses")
        pool = worker_pool(args, config, options, python)
        tasks: set[asyncio.Future] = set()
        try:
            start = getattr(pool, "start", None)
            if start is not None:
                try:
                    await start()
                except Exception:  # noqa: BLE001 - each case's run retries and reports why, as an error verdict
                    pass
            # As many cases at once as the pool runs jobs at once, so a case's clock starts when it runs.
            jobs = getattr(pool, "jobs", None)  # WorkerPool's; a test's pool may not say
            ids = [ref.id for ref in found.cases]
            progress.plan(ids, history.last_seconds(ids), jobs if isinstance(jobs, int) and jobs > 0 else len(ids))
            progress.say(f"running {len(found.cases)} case{'' if len(found.cases) == 1 else 's'}{progress.left_text()}")
            slots = asyncio.Semaphore(jobs if isinstance(jobs, int) and jobs > 0 else len(found.cases))
            agents = AgentMemo(Path.cwd())  # one resolution per eval set file, not per case
            # A bounded window of cases in flight: results stream from the start, and a finished
            # case's run (its outputs, traces, diff) is let go once its result is kept.
            waiting = iter(enumerate(found.cases))
            ranks: dict[asyncio.Future, int] = {}  # a case's place in the suite, the reports' order
            window = 2 * (jobs if isinstance(jobs, int) and jobs > 0 else 32)
            finished: asyncio.Queue[asyncio.Future] = asyncio.Queue()  # each task as it ends (O(1), not a wait over the window)

            def start_next() -> None:
                rank, ref = next(waiting, (0, None))
                if ref is not None:
                    task = asyncio.ensure_future(_timed(ref, pool, options, Path.cwd(), progress, slots, agents))
                    task.add_done_callback(finished.put_nowait)
                    tasks.add(task)
                    ranks[task] = rank

            for _ in range(window):
                start_next()
            def finish(case_run, seconds: float, rank: int) -> None:
                keeper.add(case_run)
                history.record(case_run, time.time(), began, snapshots)  # `p` and `S` show headless runs too
                cases.append(case_run.result if keep_invocations else slim(case_run.result), rank)
                if wants_traces:
                    traces.extend(agents_cli_trace(case_run))
                if wants_otlp and case_run.trace is not None:
                    otlp.append((case_run.result, case_run.trace, case_run.agent.label if case_run.agent is not None else ""))
                progress.case_done(case_run.result, seconds)

            unsettled: list[tuple[object, float, int]] = []  # --until-confident: kept whole until they settle
            while tasks:
                done = [await finished.get()]
                while not finished.empty():
                    done.append(finished.get_nowait())
                for task in done:
                    tasks.discard(task)
                    case_run, seconds = task.result()
                    if args.until_confident and case_run.result.status is CaseStatus.INCONCLUSIVE:
                        unsettled.append((case_run, seconds, ranks.pop(task)))
                    else:
                        finish(case_run, seconds, ranks.pop(task))
                    start_next()
            await settle_held(unsettled, pool, options, args.max_runs or MAX_RUNS, config.prices, progress, finish)
        finally:
            for task in tasks:
                task.cancel()
            progress.finish()
            pool.close()

    if found.cases:
        try:
            asyncio.run(go())
        except BaseException:  # interrupted: no half a kept run
            keeper.discard()
            raise
        history.prune(snapshots, time.time())  # W's stored contents no entry needs any more, as when the TUI closes
        history.close()  # what waits, written
        if history.problem:
            print(f"warning: {one_line(history.problem)}", file=err)
    cases.sort()
    print_errors(errors, err)
    found_files = frozenset(map(os.path.realpath, {family_of(ref).unit(ref) for ref in found.cases}))  # what no report may overwrite
    if traces:
        order = {ref.id: i for i, ref in enumerate(found.cases)}
        traces.sort(key=lambda item: order.get(item[0], 0))
    reports_written = write_reports(args.report, cases, err, config.prices, errors, found_files, keeper.shard, [t for _, t in traces], otlp)
    runtime = {"python": python.python, "interpreter": python.path, "chosen_by": python.why, "adk": python.adk} if python else None
    keeper.finish(cases, config.prices, runtime, errors)
    if keeper.problem:  # the results stand; only compare and gate will not find this run
        print(f"warning: this run could not be kept under .agentdiff/runs ({keeper.problem}): `compare` and `gate` "
              "will not find it", file=err)
    if args.json:
        write_json(out, cases, runtime, config.prices, errors, keeper.shard)
    else:
        out.write(render_case_table(cases, color=wants_color(args.color, out), prices=config.prices))
    if unknown or errors or not found.cases or not reports_written:
        if not found.cases and not errors and not unknown:
            print("error: no cases found", file=err)
            for note in found.notes:
                print(f"note: {note}", file=err)
        return EXIT_USAGE
    return exit_code(cases, [], config.inconclusive_passes, config.new_passes)
