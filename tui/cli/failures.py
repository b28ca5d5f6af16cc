"""`agentdiff failures`: the failure dictionary in `agentdiff-triage.yaml`, a team asset: each entry's
meaning, evidence, blocking level and the cases that show it; entries and case bindings retired with a
reason (and a replacement) stay listed as no longer tested, never silently gone."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..safe_text import one_line
from .errors import EXIT_OK, EXIT_USAGE, UsageError

NAME = "failures"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="the failure dictionary: list, define, retire entries; bind cases, retire a binding",
        description="The failure dictionary kept in agentdiff-triage.yaml. With no action: every entry with its blocking "
        "level, description, evidence and cases (retired ones as no longer tested, with why).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    define = actions.add_parser("define", help="write down (or change) an entry")
    define.add_argument("name")
    define.add_argument("--description")
    define.add_argument("--evidence", help="what to look for in a trace")
    define.add_argument("--blocking", choices=("block", "review", "info"),
                        help="block: a failing case bound to it fails the release gate; review; info")
    retire = actions.add_parser("retire", help="retire an entry: its cases show as no longer tested")
    retire.add_argument("name")
    retire.add_argument("--reason", required=True)
    retire.add_argument("--replaced-by", help="the entry that takes its place")
    bind = actions.add_parser("bind", help="bind cases to an entry (as l does in the TUI)")
    bind.add_argument("name")
    bind.add_argument("cases", nargs="+", metavar="CASE", help="case ids (or eval_ids, case folders)")
    bind.add_argument("--element", help="the trace element it shows at, such as 'turn 2 · tool_calls · call 3'")
    unbind = actions.add_parser("unbind", help="retire one case's binding, with why")
    unbind.add_argument("case", help="a case id")
    unbind.add_argument("--reason", required=True)
    unbind.add_argument("--replaced-by", help="what tests it now (a case, an entry)")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError
    from agentdiff.core.workbench.triage import Triage, TriageUnreadable

    if getattr(args, "name", None) is not None and not args.name.strip():
        raise UsageError("a failure's name cannot be blank: name the entry (such as 'double refund')")
    triage = Triage.load(Path.cwd())
    if triage.error:
        print(f"error: {triage.error}", file=err)
        return EXIT_USAGE
    try:
        if args.action == "define":
            triage.define(args.name, description=args.description, evidence=args.evidence, blocking=args.blocking)
            print(f"defined {args.name!r}", file=out)
        elif args.action == "retire":
            _known(triage, args.name)
            retired = {"reason": args.reason, **({"replaced_by": args.replaced_by} if args.replaced_by else {})}
            triage.define(args.name, retired=retired)
            print(f"retired {args.name!r}: its cases show as no longer tested", file=out)
        elif args.action == "bind":
            from agentdiff.core.project.config import load_project_config

            from .selection import select_cases

            _known(triage, args.name)  # a typo must not make a free label that no `block` entry gates
            found, unknown = select_cases(args.cases, load_project_config(Path.cwd())[0])
            if unknown:
                raise UsageError(f"no case matches {unknown[0]!r}")
            triage.set_many([ref.id for ref in found.cases], label=args.name, element=args.element)
            print(f"bound {len(found.cases)} case(s) to {args.name!r}", file=out)
        elif args.action == "unbind":
            if args.case not in triage.cases:
                raise UsageError(f"{args.case!r} is bound to no failure")
            triage.unbind(args.case, args.reason, args.replaced_by)
            print(f"retired the binding of {args.case}", file=out)
        else:
            out.write(listing(triage))
    except (TriageUnreadable, BaselineConflict, BaselineWriteError) as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK


def _known(triage, name: str) -> None:
    """Refuse a name that is not in the failure dictionary, with the closest one and how to add it."""
    if name in triage.labels:
        return
    import difflib

    close = difflib.get_close_matches(name, triage.labels, n=1)
    hint = f"did you mean {close[0]!r}? " if close else (f"it has: {', '.join(triage.labels)}; " if triage.labels else "it is empty; ")
    raise UsageError(f"no entry {name!r} in the failure dictionary ({hint}define it first: agentdiff failures define {name!r} --description …)")


def listing(triage) -> str:
    lines, unused = [], []
    for name in triage.labels:
        entry = triage.entry(name)
        bound = sorted(case_id for case_id, case in triage.cases.items() if case.get("label") == name)
        if not bound and not entry:
            unused.append(name)
            continue
        retired = entry.get("retired")
        head = f"{name}  [{entry.get('blocking', 'unrated')}]" + (f"  retired: {retired['reason']}" + (
            f" (now: {retired['replaced_by']})" if retired.get("replaced_by") else "") if retired else "")
        lines.append(one_line(head))
        for key in ("description", "evidence"):
            if entry.get(key):
                lines.append(f"  {key}: {one_line(entry[key])}")
        for case_id in bound:
            case = triage.cases[case_id]
            gone = triage.retired_binding(case_id)
            lines.append(f"  - {one_line(case_id)}" + (f" at {case['element']}" if case.get("element") else "") + (f": {gone}" if gone else ""))
    if unused:
        lines.append(f"labels with no entry or case yet: {', '.join(unused)}")
    unknown = sorted({case["label"] for case in triage.cases.values() if case.get("label") and case["label"] not in triage.labels})
    for name in unknown:
        lines.append(f"{name}  (not in the dictionary)")
    return "\n".join(lines) + "\n" if lines else "the failure dictionary is empty\n"
