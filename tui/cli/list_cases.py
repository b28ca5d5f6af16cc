"""`agentdiff list`: the cases found under paths, and every file that failed to load (text or JSON)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from agentdiff.core.project.discovery import ConformanceCaseRef, discover

from .color import BOLD, DIM, paint, wants_color
from .errors import EXIT_OK, EXIT_USAGE, print_errors
from .options import add_color_option

NAME = "list"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="list the cases found under PATHS, and every file that failed to load",
        description="Discover EvalSet files (*.evalset.json, *.test.json) and conformance cases (spec.yaml) "
        "under PATHS and list them with their load errors.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="files or folders (default: .)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_color_option(parser)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    found = discover(args.paths or [Path(".")], root=Path.cwd())
    if args.json:
        items = []
        for ref in found.cases:
            item = {"id": ref.id, "source": ref.source, "category": ref.category, "name": ref.name}
            if isinstance(ref, ConformanceCaseRef):
                item |= {"kind": "conformance", "agent": ref.case.spec.agent, "recorded": sorted(ref.case.baselines)}
            else:
                item |= {"kind": "eval_set", "eval_set_id": ref.eval_set.eval_set.eval_set_id, "eval_id": ref.case.eval_id,
                         "turns": len(ref.case.conversation or []), "config": ref.config.file}
            items.append(item)
        json.dump({"cases": items, "errors": [e.model_dump() for e in found.errors]}, out, indent=2)
        out.write("\n")
    else:
        color = wants_color(args.color, out)
        current = None
        for ref in found.cases:
            if ref.category != current:
                current = ref.category
                print(paint(current, BOLD, color), file=out)
            if isinstance(ref, ConformanceCaseRef):
                modes = ", ".join(sorted(ref.case.baselines)) or "not recorded"
                print(f"  {ref.name}  " + paint(f"[agent {ref.case.spec.agent}; {modes}]", DIM, color), file=out)
            else:
                turns = len(ref.case.conversation or [])
                kind = f"{turns} turn{'s' if turns != 1 else ''}" if ref.case.conversation is not None else "scenario"
                print(f"  {ref.name}  " + paint(f"[{kind}; config {ref.config.file or 'ADK default'}]", DIM, color), file=out)
        print(f"{len(found.cases)} cases, {len(found.errors)} load errors", file=out)
        print_errors(found.errors, err)
    return EXIT_USAGE if found.errors else EXIT_OK
