"""`agentdiff gate [--baseline RUN] [RUN]`: may it merge, from the rules of `[tool.agentdiff.gate]`
(`core.reports.gate`); Markdown for a PR comment, JUnit for CI."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from .compare import RUN_HELP, load_pair
from .errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, quoted

NAME = "gate"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "gate", help="the release gate: exit 0 pass, 1 a rule broken, 2 no runs to compare, bad rules or an unreadable failure dictionary",
        description="Check RUN against --baseline with the rules of [tool.agentdiff.gate] (pass-rate drop, critical "
        "cases, p95 seconds, tokens, cost, tool calls); with none configured, no case may regress. Defaults as for "
        "compare. Exit 0 passed, 1 a rule broken, 2 usage.",
    )
    parser.add_argument("run", nargs="?", help=f"the run to check (default: the latest kept run): {RUN_HELP}")
    parser.add_argument("--baseline", help="the run it is checked against (default: as compare's BASE)")
    parser.add_argument("--markdown", action="store_true", help="print the verdict as Markdown (a PR comment)")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="also write the rules as JUnit XML to FILE")

def default_branch() -> str:
    """`main`, else `master`, else their `origin/` copies (a CI checkout of a pull request has no local
    branch): the ref sign-offs are counted from."""
    import subprocess

    for name in ("main", "master", "origin/main", "origin/master"):
        if subprocess.run(["git", "rev-parse", "--verify", "--quiet", name], capture_output=True).returncode == 0:
            return name
    return "main"


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.baselines.journal import atomic_write
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.reports.compare import compare
    from agentdiff.core.reports.gate import gate, gate_junit, gate_markdown, gate_text
    from agentdiff.core.workbench.triage import Triage

    config, errors = load_project_config(Path.cwd())
    for error in errors:  # a configuration that does not load may hide the rules: the gate fails closed
        print(f"error: {error}", file=err)
    if errors:
        print("error: the gate's rules cannot be told from a configuration that does not load: fix it first", file=err)
        return EXIT_USAGE
    triage = Triage.load(Path.cwd())
    if triage.error is not None:  # its blocking entries cannot be told: the gate fails closed
        print(f"error: {triage.error} (the failure dictionary says which failures block the release: "
              "the gate cannot decide without it)", file=err)
        return EXIT_USAGE
    cmp = compare(*load_pair(args.baseline, args.run))
    unsigned = None
    if config.gate.get("require_signoff"):
        from agentdiff.core.reports.baseline_review import GitRefError, changed_baselines

        from .selection import select_cases

        since = config.gate.get("signoff_since") or default_branch()
        try:
            changes = changed_baselines(select_cases([], config)[0].cases, Path.cwd(), since)
        except GitRefError as exc:
            print(f"error: require_signoff since {quoted(since)}: {exc}", file=err)
            return EXIT_USAGE
        unsigned = [change.case_id for change in changes if not change.signed]
    blocked = None
    if any(entry.get("blocking") == "block" for entry in triage.failures.values()):
        failing = ("failed", "error", "flaky", "inconclusive")
        blocked = [case.id for case in cmp.cases if case.head_status in failing and triage.blocking_of(case.id) == "block"]
    result = gate(cmp, config.gate, triage.label_of, unsigned, blocked, config.confidence or 0.95)
    configured = any(key not in ("require_signoff", "signoff_since") for key in config.gate)
    out.write(gate_markdown(result, cmp, configured) if args.markdown else gate_text(result, cmp, configured))
    if args.junit:
        from .options import check_reports

        if not check_reports([("junit", args.junit)], err):  # never over git's or the project's own files
            return EXIT_USAGE
        try:
            atomic_write(args.junit, gate_junit(result))
        except OSError as exc:
            print(f"error: cannot write {args.junit}: {exc.strerror or exc}", file=err)
            return EXIT_USAGE
    return EXIT_OK if result.passed else EXIT_FAILED

