"""The options several commands share: the run flags and report flags as argparse groups, and the
one builder of `RunOptions` (and of the worker pool) from parsed arguments and the project config.

`run`, `watch`, `record` and `diff` all build their options here, so a flag added to the group
reaches every command that takes it.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Optional, Sequence, TextIO

from agentdiff.core.reports import DIR_KINDS, REPORT_KINDS, write_report
from .errors import UsageError, exists, print_errors, quoted


def _fraction(value: str, within, said: str) -> float:
    """`value` as a number `within(number)` accepts; else a usage error saying `said`."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not within(number):
        raise argparse.ArgumentTypeError(f"{said}, not {value[:40]!r}")
    return number


def rate(value: str) -> float:
    """`--min-pass-rate`: from 0 to 1."""
    return _fraction(value, lambda n: 0 <= n <= 1, "a pass rate is from 0 to 1 (0.9 for 90%)")


def level(value: str) -> float:
    """`--confidence`: from 0.5 to below 1."""
    return _fraction(value, lambda n: 0.5 <= n < 1, "a confidence level is from 0.5 to below 1 (0.95 for 95%)")


def num_runs(value: str) -> int:
    """`--num-runs`: from 1 to 1000 (each repeat is a run of the agent, held until it is scored)."""
    from agentdiff.core.project.config import MAX_NUM_RUNS

    return _whole(value, MAX_NUM_RUNS)


#: `--jobs` stops where `jobs` in the configuration does.
MAX_JOBS = 100_000


def positive_int(value: str) -> int:
    """`--jobs`: from 1 to MAX_JOBS; argparse turns the error into a usage error."""
    return _whole(value, MAX_JOBS)


def _whole(value: str, high: int) -> int:
    try:
        number = int(value) if len(value.strip()) <= 20 else high + 1  # a number that long is out of range anyway
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {value[:40]!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be ≥ 1, got {value}")
    if number > high:
        raise argparse.ArgumentTypeError(f"must be at most {high:,}, got {value[:24]}")
    return number


def positive_float(value: str) -> float:
    """A finite number > 0 (`--timeout`); argparse turns the error into a usage error."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {value}")
    return number


def report_spec(value: str) -> tuple[str, Path]:
    """`KIND=FILE` as (kind, path); argparse turns the error into a usage error."""
    kind, sep, file = value.partition("=")
    if not sep or kind not in REPORT_KINDS or not file:
        raise argparse.ArgumentTypeError(f"expected KIND=FILE with KIND one of {', '.join(REPORT_KINDS)}, got {value!r}")
    return kind, Path(file)


def add_color_option(parser: argparse.ArgumentParser) -> None:
    from .color import CHOICES

    parser.add_argument(
        "--color", choices=CHOICES, default="auto",
        help="colour the verdicts: auto (default: on a terminal, unless NO_COLOR is set), always or never",
    )


def add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the JSON report instead of the table")
    parser.add_argument(
        "--report", action="append", type=report_spec, default=[], metavar="KIND=FILE",
        help=f"also write a report ({', '.join(REPORT_KINDS)}); repeatable; csv appends; adk=DIR writes ADK EvalSetResult "
        "files into DIR/<app>/.adk/eval_history (DIR: the agents folder, as adk web's); agents-cli=DIR writes the agents-cli "
        "cases' runs as a trace file DIR/traces_<time>.json for `agents-cli eval grade --traces`; otlp=FILE writes every case's run as "
        "OpenTelemetry (OTLP/JSON, a line a case, ADK's GenAI spans) with a gen_ai.evaluation.result event per metric",
    )


def _report_problem(path: Path) -> Optional[str]:
    """Why a report cannot be written to `path` (checked before any work), or None. A missing parent
    folder is created only when the path is inside the current directory."""
    if path.is_dir():
        return "it is a folder"
    real = os.path.realpath(path)
    if real.startswith(("/proc/", "/sys/")) or real in ("/proc", "/sys"):
        return f"it is a kernel file ({real}), not a place for a report"
    if path.exists() and not path.is_file():
        return "it is not a regular file (a FIFO or a device would block or swallow the report)"
    parts = set(Path(os.path.abspath(path)).parts) | set(Path(real).parts)
    if ".git" in parts:
        return "it is inside .git (git's own files: writing there breaks the repository); name another path"
    if ".agentdiff" in parts:
        return "it is inside .agentdiff (agentdiff's own state: history, journal, kept runs); name another path"
    if path.exists() and _is_project_file(path):
        return "it is one of the project's own files (an eval set, a config, a recording or source); name another path"
    try:
        links = os.stat(path).st_nlink if path.is_file() else 1
    except OSError:
        links = 1
    if links > 1:
        return "it has other names (hard links): writing there (a CSV report appends) could change them too; name a new file"
    here = Path.cwd().resolve()
    if Path(os.path.abspath(path)).is_relative_to(here) and not path.resolve().is_relative_to(here):
        return f"it is a link out of the working tree (to {path.resolve()}); name that path itself to write there"
    parent = path.parent
    if not parent.exists() and not path.resolve().is_relative_to(Path.cwd().resolve()):
        return f"no such folder: {parent}"
    if parent.exists() and not parent.is_dir():
        return f"not a folder: {parent}"
    return None


#: Files a report must never be written over (or appended to): they are the project's, not a report.
_PROJECT_SUFFIXES = (".py", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".md", ".env", ".sh", ".bash", ".js", ".ts", ".go", ".rs",
                     ".java", ".rb", ".c", ".h", ".cpp", ".lock", ".ipynb")
_PROJECT_NAMES = ("test_config.json", "eval_config.json", "agentdiff-record.json", "package.json")


def _is_project_file(path: Path) -> bool:
    from agentdiff.core.project.discovery import is_eval_set_file

    name = path.name
    if name.endswith(".md") and _is_our_markdown(path):
        return False  # a Markdown report an earlier run wrote: written over again
    return (is_eval_set_file(name) or name in _PROJECT_NAMES or name.endswith(".agentdiff-record.json")
            or name.endswith(_PROJECT_SUFFIXES) or name.endswith(".evalset_result.json"))


def _is_our_markdown(path: Path) -> bool:
    from agentdiff.core.reports.markdown import TITLE

    try:
        with open(path, "rb") as handle:
            return handle.read(len(TITLE.encode())) == TITLE.encode()
    except OSError:
        return False


def _folder_problem(kind: str, path: Path) -> Optional[str]:
    if path.exists() and not path.is_dir():
        return "it is a file: adk=DIR names the agents folder" if kind == "adk" else "it is a file: agents-cli=DIR names a folder for the trace file"
    parts = Path(os.path.abspath(path)).parts
    if kind == "agents-cli" and ("datasets" in parts or "baselines" in parts):
        return "a trace file there would be read as a dataset or a baseline; name another folder (agents-cli's is artifacts/traces)"
    if ".git" in parts or ".agentdiff" in parts:
        return "it is inside .git or .agentdiff, which are not a place for reports"
    return None


def _problems(reports: Sequence[tuple[str, Path]], protected: frozenset = frozenset()) -> list[Optional[str]]:
    """Each report's problem (`_report_problem`), or that an earlier report has its path."""
    problems: list[Optional[str]] = []
    first: dict[str, str] = {}
    for kind, path in reports:
        key = os.path.realpath(path)
        problem = _report_problem(path) if kind not in DIR_KINDS else _folder_problem(kind, path)
        if problem is None and key in protected:  # an eval set agentdiff found, whatever its name
            problem = "it is one of the project's own files (an eval set the project's cases come from); name another path"
        if problem is None and kind == "csv" and path.is_symlink():  # the others replace the link; CSV appends
            problem = f"it is a symlink (to {os.readlink(path)}): a CSV report appends, which would write into what it points to; name the file itself"
        if problem is None and key in first:
            problem = f"the {first[key]} report is written there too; give each report its own path"
        first.setdefault(key, kind)
        problems.append(problem)
    return problems


def check_reports(reports: Sequence[tuple[str, Path]], err: TextIO, protected: frozenset = frozenset()) -> bool:
    """True when every `--report` path looks writable and no two share a path; else says why (one
    line each) on `err`. `protected`: real paths of files found as the project's (its eval sets)."""
    ok = True
    for (kind, path), problem in zip(reports, _problems(reports, protected)):
        if problem:
            print(f"error: cannot write the {kind} report to {path}: {problem}", file=err)
            ok = False
    return ok


def write_reports(reports: Sequence[tuple[str, Path]], cases, err: TextIO, prices=None, load_errors=(), protected: frozenset = frozenset(),
                  shard=None, traces=(), otlp=()) -> bool:
    """Write every `--report`; a report that cannot be written is one line on `err` (no traceback) and
    the others are still written. True when all were written."""
    ok = check_reports(reports, err, protected)
    for (kind, path), problem in zip(reports, _problems(reports, protected)):
        if problem:
            continue
        try:
            write_report(kind, cases, path, prices, load_errors, shard, traces, otlp)
        except OSError as error:
            print(f"error: cannot write the {kind} report to {path}: {error.strerror or error}", file=err)
            ok = False
    return ok


def add_run_options(parser: argparse.ArgumentParser, *, mode: bool = True, repeats: bool = False) -> None:
    """The flags of how cases run. `mode`: --mode; `repeats`: --num-runs and --run-tools. A flag a
    command does not take still gets its default, so `run_options` reads every attribute plainly."""
    parser.add_argument("--agents", action="append", type=Path, default=[], metavar="DIR", help="an agents dir (repeatable)")
    if mode:
        parser.add_argument("--mode", choices=("replay", "live"), help="replay (conformance default) or live (EvalSet default)")
    parser.add_argument("--streaming-mode", choices=("none", "sse"), help="conformance: which recordings (default: every recorded mode; record: none)")
    parser.add_argument("--jobs", type=positive_int, help="runs in flight (default: 128 per CPU; rate limits are found and kept to)")
    parser.add_argument("--timeout", type=positive_float, help="seconds per run before it is stopped (default 120)")
    parser.add_argument("--python", metavar="PATH",
                        help="the interpreter (or environment folder) that runs the agents (default: the project's, see docs/your-project.md)")
    parser.add_argument("--no-judge-cache", action="store_true",
                        help="make every judge call again instead of answering from .agentdiff/judge-cache/")
    if repeats:
        parser.add_argument("--num-runs", type=num_runs, help="repeats per case, run concurrently (default 1, at most 1000)")
        parser.add_argument("--run-tools", action="store_true", help="replay: also diff the real tools' results against the recorded ones")
        parser.add_argument("--min-pass-rate", type=rate, metavar="RATE",
                            help="live repeats: the pass rate each case must show, as an interval's bound clears it "
                                 "(0.9; default: every run passes; overrides the project's)")
        parser.add_argument("--confidence", type=level, metavar="LEVEL", help="the level of every pass-rate interval (default 0.95)")
        parser.add_argument("--pass-hat-k", type=num_runs, action="append", default=[], metavar="K",
                            help="report pass^k: the chance K runs in a row all pass (repeatable)")
    if not mode:
        parser.set_defaults(mode=None)
    if not repeats:
        parser.set_defaults(num_runs=None, run_tools=False, min_pass_rate=None, confidence=None, pass_hat_k=[])


def run_options(args: argparse.Namespace, config):
    """The `RunOptions` of a command: each flag given wins over the project config."""
    from agentdiff.core.run.options import RunOptions

    return RunOptions(
        mode=args.mode or config.mode,
        num_runs=args.num_runs or config.num_runs,
        timeout=args.timeout or config.timeout,
        run_tools=args.run_tools,
        streaming=args.streaming_mode,
        agents_dirs=tuple(args.agents) + config.agents,
        mapping=config.agent_for,
        judge_cache=None if args.no_judge_cache or _linked_cache() else Path.cwd() / ".agentdiff" / "judge-cache",
        prices=config.prices,
        strict_node_order=config.strict_node_order,
        pass_rules=pass_rules(args, config),
    )


def pass_rules(args: argparse.Namespace, config):
    """What live repeats are held to: the project's rules, the command line's above them."""
    from agentdiff.core.scoring.pass_rate import PassRules

    return PassRules(
        min_pass_rate=config.min_pass_rate,
        confidence=config.confidence,
        pass_hat_k=tuple(sorted(set(getattr(args, "pass_hat_k", None) or ()) | set(config.pass_hat_k))),
        for_cases=config.min_pass_rate_for,
        given_min_pass_rate=getattr(args, "min_pass_rate", None),
        given_confidence=getattr(args, "confidence", None),
    )


def run_now(refs: Sequence, args: argparse.Namespace, config, keep=None) -> list:
    """Run `refs` now, as `run` would (one pool, closed after, a bounded window of cases in flight):
    their `CaseRun`s, in order; with `keep`, only those it accepts (the others are dropped as they
    finish, so thousands of passing cases cost no memory)."""
    import asyncio

    from agentdiff.core.project.agent_memo import AgentMemo
    from agentdiff.core.run.runner import run_case

    if not refs:
        return []
    options = run_options(args, config)

    async def go() -> list:
        pool = worker_pool(args, config, options)
        agents = AgentMemo(Path.cwd())
        window = asyncio.Semaphore(2 * (args.jobs or config.jobs or 32))
        results: dict[int, object] = {}

        async def one(index: int, ref) -> None:
            async with window:
                run = await run_case(ref, pool, options, Path.cwd(), agents)
            if keep is None or keep(run):
                results[index] = run

        try:
            await asyncio.gather(*(one(index, ref) for index, ref in enumerate(refs)))
            return [results[index] for index in sorted(results)]
        finally:
            pool.close()

    return asyncio.run(go())


def agents_python(args: argparse.Namespace, config):
    """The `Interpreter` that runs the project's agents (`--python`, the configuration, else found);
    `UsageError` when it cannot run them."""
    from agentdiff.core.project.interpreter import find_interpreter

    found = find_interpreter(Path.cwd(), args.python, config.python)
    if found.error:
        raise UsageError(f"the agents' Python, {found.describe(Path.cwd())}")
    return found


def worker_pool(args: argparse.Namespace, config, options, python=None):
    """The pool the runs go to, on `python` (an `Interpreter`; default: `agents_python`). Processes
    start on its first run; close it when done."""
    from agentdiff.core.worker.pool import WorkerPool

    python = python or agents_python(args, config)
    return WorkerPool(jobs=args.jobs or config.jobs, timeout=options.timeout or 120.0, memory_mb=config.memory_mb, python=python.path)


def _linked_cache() -> bool:
    """A symlinked `.agentdiff` or judge cache (a cloned repository can commit one) is never written
    through: the judge is asked every time instead."""
    from agentdiff.core.formats.set_aside import linked_state

    return linked_state(Path.cwd(), "judge-cache") is not None


def project_session(args: argparse.Namespace, err: TextIO):
    """What a long-lived session (the TUI, the MCP server) starts from, in the current folder: the
    project's configuration (its problems printed), the paths of cases (the configured ones, else `.`),
    the run options, the agents' Python and a worker pool. None, with why, when a path is not there."""
    from agentdiff.core.project.config import load_project_config

    config, config_errors = load_project_config(Path.cwd())
    print_errors(config_errors, err)
    paths = list(args.paths) or list(config.paths) or [Path(".")]
    missing = [p for p in paths if not exists(p)]
    if missing:
        print(f"error: no such folder: {quoted(missing[0])}", file=err)
        return None
    options = run_options(args, config)
    python = agents_python(args, config)
    return config, paths, options, python, worker_pool(args, config, options, python)
