"""`agentdiff baselines [PATHS…] [--since REF]`: every case whose baseline changed since a git ref
while its definition did not, with who recorded it, what changed in the agent (models, prompt, tool
sources) and in the baseline, layer by layer; and `agentdiff sign CASE…`: a reviewer's sign-off."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..safe_text import one_line
from .errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_errors, quoted
from .selection import select_cases

NAME = "baselines"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="review baseline changes since a git ref: re-recorded cases whose definition did not change",
        description="List every case whose baseline (a conformance case's generated-* files, an eval case's expected "
        "answers and tool calls) changed since REF while its definition (spec.yaml, the user messages) did not: who "
        "recorded it, what changed in the agent (models, prompt, tool sources) and, layer by layer, in the baseline, "
        "and whether it was signed off (agentdiff sign). Exit 0 when every such change is signed off, 1 when one is not.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="files, folders or case ids (default: the configured paths, else .)")
    parser.add_argument("--since", default="HEAD", metavar="REF", help="the git ref to compare with (default: HEAD, the uncommitted changes)")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.reports.baseline_review import GitRefError, changed_baselines

    config, errors = load_project_config(Path.cwd())
    found, unknown = select_cases([str(p) for p in args.paths], config)
    print_errors(list(errors) + found.errors, err)
    if unknown:
        print(f"error: no case matches {unknown[0]!r}", file=err)
        return EXIT_USAGE
    try:
        changes = changed_baselines(found.cases, Path.cwd(), args.since)
    except GitRefError as exc:
        print(f"error: --since {quoted(args.since)}: {exc}", file=err)
        return EXIT_USAGE
    if not changes:
        print(f"no baseline was re-recorded since {args.since} (no expectations changed while their case stayed the same)", file=out)
        return EXIT_OK
    for change in changes:
        mark = "✓ signed off" if change.signed else "✗ not signed off"
        print(f"{one_line(change.case_id)}  ({mark}{' · recorded for the first time' if change.new else ''})", file=out)
        print(f"  files: {one_line(', '.join(change.files))}", file=out)
        record = change.registration or {}
        if record:
            through = f" (accepted by the assistant {one_line(record['assistant'])})" if isinstance(record.get("assistant"), str) else ""
            print(f"  recorded by {one_line(str(record.get('recorded_by', '?')))} at {one_line(str(record.get('recorded_at', '?')))}{through}", file=out)
        for said in change.what_changed:
            print(f"  agent: {one_line(said)}", file=out)
        for layer, said in change.layers:
            print(f"  {layer}: {one_line(said)}", file=out)
        if change.signed:
            print(f"  signed off by {one_line(str(change.signed.get('by')))} at {one_line(str(change.signed.get('at')))}"
                  + (f": {one_line(str(change.signed['note']))}" if change.signed.get("note") else ""), file=out)
    unsigned = [c for c in changes if not c.signed]
    print(f"\n{len(changes)} baseline change(s), {len(unsigned)} not signed off"
          + (" (agentdiff sign CASE… records a sign-off)" if unsigned else ""), file=out)
    return EXIT_FAILED if unsigned else EXIT_OK
