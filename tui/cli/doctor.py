"""`agentdiff doctor`: the agents' Python and ADK version, whether each agent imports there, and
which model credentials are set (names only), each problem with what to do about it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from .color import BOLD, DIM, paint, wants_color
from .errors import EXIT_FAILED, EXIT_OK, print_errors
from .options import add_color_option

NAME = "doctor"
_MARK = {True: ("✓", "32"), False: ("✗", "31"), None: ("·", DIM)}
_TITLES = {"python": "the agents' Python", "agents": "agents", "models": "models (LiteLLM)", "credentials": "model credentials (names only)",
           "metrics": "agents-cli metrics"}


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="check what the project's agents need to run: Python, ADK, imports, credentials",
        description="Check the interpreter that runs the agents and its ADK version, import every agent the "
        "eval files under PATHS resolve to, and list which model credentials are set (names, never values). "
        "Exit 1 when anything needs fixing.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="files or folders (default: the configured paths, else .)")
    parser.add_argument("--python", metavar="PATH", help="the interpreter (or environment folder) that runs the agents")
    parser.add_argument("--agents", action="append", type=Path, default=[], metavar="DIR", help="an agents dir (repeatable)")
    add_color_option(parser)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core import __version__
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.project.doctor import agent_checks, credential_checks, drop_in_checks, metric_checks, python_checks
    from agentdiff.core.project.interpreter import find_interpreter
    from agentdiff.core.project.model_checks import model_checks

    root = Path.cwd()
    color = wants_color(args.color, out)
    config, config_errors = load_project_config(root)
    python = find_interpreter(root, args.python, config.python)
    found = discover(list(args.paths) or list(config.paths) or [Path(".")], root=root)
    print(paint(f"agentdiff {__version__}", BOLD, color) + paint(f"  (on Python {sys.version.split()[0]}, {sys.prefix})", DIM, color), file=out)
    checks = python_checks(python, root) + drop_in_checks(python, root)
    found_agents, imported = agent_checks(found, root, tuple(args.agents) + config.agents, config.agent_for, python)
    checks += found_agents + model_checks(imported) + credential_checks(imported) + metric_checks(found.cases)
    section = None
    for check in checks:
        if check.section != section:
            section = check.section
            print(paint(_TITLES[section], BOLD, color), file=out)
        mark, code = _MARK[check.ok]
        print(f"  {paint(mark, code, color)} {check.text}", file=out)
        if check.fix:
            print(paint(f"      → {check.fix}", DIM, color), file=out)
    problems = sum(1 for c in checks if c.ok is False) + len(found.errors) + len(config_errors)
    if not found.cases and not found.errors:  # nothing to check is not "no problems"
        looked = ", ".join(str(p) for p in (list(args.paths) or list(config.paths) or [Path(".")]))
        print(f"no eval files found under {looked} (looked for *.test.json, *.evalset.json, a spec.yaml in tests/, "
              "tests/eval/datasets/*.json); name them with `paths` in the configuration, or pass their folder", file=out)
        for note in found.notes:
            print(f"note: {note}", file=out)
        return EXIT_FAILED
    print(f"{len(found.cases)} cases; " + (f"{problems} problem{'s' if problems != 1 else ''}" if problems else "no problems"), file=out)
    print_errors(list(config_errors) + found.errors, err)
    return EXIT_FAILED if problems else EXIT_OK
