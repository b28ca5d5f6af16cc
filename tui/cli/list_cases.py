"""`agentdiff list`: the cases found under paths, and every file that failed to load (text or JSON);
with `--agents`, the agent each file's cases resolve to and the rule that chose it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from agentdiff.core.project.discovery import discover
from agentdiff.core.project.family import family_of

from ..safe_text import one_line
from .color import BOLD, DIM, paint, wants_color
from .errors import EXIT_OK, EXIT_USAGE, print_errors
from .options import add_color_option

NAME = "list"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="list the cases found under PATHS, and every file that failed to load",
        description="Discover EvalSet files (*.evalset.json, *.test.json), conformance cases (spec.yaml) and "
        "agents-cli datasets (tests/eval/datasets/*.json) under PATHS and list them with their load errors.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="files or folders (default: .)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--agents", action="store_true",
                        help="show the agent each eval set file or conformance case resolves to, and why (or the error and its fix)")
    add_color_option(parser)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.project.config import load_project_config

    config, config_errors = load_project_config(Path.cwd())
    found = discover(args.paths or list(config.paths) or [Path(".")], root=Path.cwd())
    found.errors[:0] = config_errors  # a configuration that does not load is said here too, as `run` says it
    resolutions = _resolve(found, config) if args.agents else {}
    from agentdiff.core.project.look_alikes import look_alikes

    alike = look_alikes(found.cases)
    if args.json:
        from agentdiff.core.reports.changed_since import depends_on

        items = []
        depends = depends_on(found.cases, Path.cwd(), config.agents, config.agent_for)
        for ref in found.cases:
            item = {"id": ref.id, "source": ref.source, "category": ref.category, "name": ref.name}
            item |= family_of(ref).described(ref)
            item["depends_on"] = depends.get(ref.id, {})
            if ref.id in alike:
                item["look_alike"] = alike[ref.id]
            if args.agents:
                resolution = resolutions[id(ref)]
                item |= {"agent": _agent_name(resolution), "agent_reason": resolution.reason or None}
                if resolution.error:
                    item["agent_error"] = resolution.error
            items.append(item)
        errors = [e.model_dump() for e in found.errors]  # `load_errors`, as every report names them; `errors` is its old name
        json.dump({"cases": items, "load_errors": errors, "errors": errors, "notes": found.notes}, out, indent=2)
        out.write("\n")
    elif args.agents:
        _print_agents(found, resolutions, wants_color(args.color, out), out)
        print(f"{len(found.cases)} cases, {len(found.errors)} load errors", file=out)
        print_errors(found.errors, err)
    else:
        _print_cases(found.cases, wants_color(args.color, out), out)
        print(f"{len(found.cases)} cases, {len(found.errors)} load errors", file=out)
        print_errors(found.errors, err)
    for note in found.notes if not args.json else ():  # files that look like cases and are not read as ones
        print(f"note: {one_line(note)}", file=err)
    for case_id, note in alike.items():  # ids a reader could take for another's: said, never renamed
        print(f"warning: {one_line(case_id)}: {one_line(note)}", file=err)
    return EXIT_USAGE if found.errors else EXIT_OK


def _print_cases(cases, color: bool, out: TextIO) -> None:
    """Each category's name, then a line per case; written a thousand lines at a time (a million
    cases are a million lines)."""
    lines: list[str] = []
    current = None
    for ref in cases:
        if ref.category != current:
            current = ref.category
            lines.append(paint(one_line(current), BOLD, color))
        lines.append(f"  {one_line(ref.name)}  " + paint(f"[{family_of(ref).listed(ref)}]", DIM, color))
        if len(lines) >= 1000:
            out.write("\n".join(lines) + "\n")
            lines = []
    if lines:
        out.write("\n".join(lines) + "\n")


def _resolve(found, config) -> dict:
    """Each case's `AgentResolution` (by `id(ref)`), with the project configuration `run` uses."""
    from agentdiff.core.project.agent_memo import AgentMemo

    root = Path.cwd()
    agents = AgentMemo(root)
    return {id(ref): agents.resolve(ref, config.agents, config.agent_for) for ref in found.cases}


def _agent_name(resolution) -> str | None:
    agent = resolution.agent
    if agent is None:
        return None
    return agent.label


def _print_agents(found, resolutions: dict, color: bool, out: TextIO) -> None:
    """One line per eval set file or conformance case folder: `path  → agent  (reason)`; a file whose
    cases resolve differently gets one line per case; an unresolved one, its error and fix indented."""
    groups: dict[str, list] = {}
    for ref in found.cases:
        groups.setdefault(family_of(ref).group(ref), []).append(ref)
    for path, refs in groups.items():
        outcomes = [(_agent_name(r), r.reason, r.error) for r in (resolutions[id(ref)] for ref in refs)]
        if len(set(outcomes)) == 1:
            lines = [(path, outcomes[0])]
        else:
            lines = [(ref.id, outcome) for ref, outcome in zip(refs, outcomes)]
        for shown, (agent, reason, error) in lines:
            if agent is not None:
                print(f"{shown}  → {paint(agent, BOLD, color)}  " + paint(f"({reason})", DIM, color), file=out)
            else:
                print(f"{shown}  → " + paint("no agent", BOLD, color), file=out)
                for line in (error or "").splitlines():
                    print(f"    {line}", file=out)
