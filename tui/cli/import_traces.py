"""`agentdiff import TRACES… --into FILE`: OpenTelemetry traces of an ADK agent (OTLP/JSON or protobuf,
files or folders, either of ADK's telemetry schemas) become EvalSet cases, one per conversation, each
expecting what its trace did. The new cases are shown as the file change first and written when
confirmed (`--yes` without asking), as one journal entry that `agentdiff undo` takes back; a case
whose id the file already has is left as it is."""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
from pathlib import Path
from typing import TextIO

from .errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, print_errors

NAME = "import"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="turn OpenTelemetry traces of an ADK agent (adk web, production) into EvalSet cases",
        description="Read OTLP trace files (JSON, one export or one per line, or protobuf; folders are searched) as ADK "
        "emits them in either telemetry schema, and add one EvalSet case per conversation to FILE (created when "
        "missing), expecting what the trace did: each turn's user message, tool calls with their responses, and "
        "final response. The file change is printed and confirmed unless --yes; it is one journal entry (`agentdiff "
        "undo`). A conversation whose trace holds no message content is left out, with how to turn capture on.",
    )
    parser.add_argument("traces", nargs="+", type=Path, metavar="TRACES", help="OTLP trace files or folders of them")
    parser.add_argument("--into", type=Path, required=True, metavar="FILE", help="the EvalSet file the cases go into (*.evalset.json)")
    parser.add_argument("--yes", "-y", action="store_true", help="write without asking")


def trace_files(paths: list[Path]) -> list[Path]:
    """The files given, and the trace files under the folders given (sorted, hidden ones left out)."""
    from agentdiff.core.formats.otlp.spans import TRACE_SUFFIXES

    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in TRACE_SUFFIXES
                            and not any(part.startswith(".") for part in p.relative_to(path).parts))
        else:
            found.append(path)
    return found


def read_conversations(paths: list[Path], root: Path) -> tuple[list, list]:
    """The conversations of the trace files given (folders searched), and what did not read."""
    from agentdiff.core.formats.otlp.spans import read_spans
    from agentdiff.core.traces.otlp import conversations

    missing = [p for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {missing[0]}")
    spans, errors = [], []
    for file in trace_files(paths):
        found, problems = read_spans(file, root)
        spans += found
        errors += problems
    return conversations(spans), errors


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError, FileWrite, write_baseline
    from agentdiff.core.formats.json_edit import edit_json
    from agentdiff.core.traces.otlp_cases import case_id_of, eval_case, unusable

    from .accept import _confirm

    root = Path.cwd()
    found, errors = read_conversations(list(args.traces), root)
    print_errors(errors, err)
    target = args.into
    if target.is_dir() or not target.name.endswith((".evalset.json", ".test.json")):
        raise UsageError(f"--into names an EvalSet file (*.evalset.json or *.test.json), not {target}")
    raw = target.read_bytes() if target.exists() else None  # hashed as read: an edit made while the prompt waits is refused
    before = raw.decode("utf-8") if raw is not None else None  # (line endings as they are)
    try:
        data = json.loads(before) if before is not None else {"eval_set_id": target.name.split(".")[0], "name": target.name.split(".")[0],
                                                             "eval_cases": []}
    except ValueError as exc:
        raise UsageError(f"{target} is not valid JSON ({exc}); nothing was written") from None
    cases = data.get("eval_cases") if isinstance(data, dict) else None
    if not isinstance(cases, list):
        raise UsageError(f"{target} is not an EvalSet file (no eval_cases list); nothing was written")
    have = {case.get("eval_id") for case in cases if isinstance(case, dict)}
    added = []
    for conversation in found:
        why = unusable(conversation)
        eval_id = case_id_of(conversation)
        if why is not None:
            print(f"left out: {conversation.id} ({conversation.where}): {why}", file=err)
        elif eval_id in have:
            print(f"already in {target}: {eval_id} (left as it is)", file=out)
        else:
            cases.append(eval_case(conversation, eval_id))
            have.add(eval_id)
            added.append(eval_id)
    if not added:
        print("nothing to import: no conversation with its content that the file does not have already", file=out)
        return EXIT_USAGE if errors else EXIT_FAILED
    text = edit_json(before, data) if before is not None else json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    out.writelines(difflib.unified_diff((before or "").splitlines(keepends=True), text.splitlines(keepends=True),
                                        f"a/{target}", f"b/{target}"))
    description = f"import {len(added)} traced conversation{'s' if len(added) != 1 else ''} into {target}: {', '.join(added[:5])}" + \
        ("…" if len(added) > 5 else "")
    print(description, file=out)
    if not args.yes and not _confirm("write it? [y/N] ", out):
        print("not written", file=out)
        return EXIT_FAILED
    try:
        expected = hashlib.sha256(raw).hexdigest() if raw is not None else None
        entry = write_baseline([FileWrite(target.resolve(), text, expected)], root, description)
    except (BaselineConflict, BaselineWriteError) as exc:
        raise UsageError(str(exc)) from None
    print(f"written: {entry.reason} (`agentdiff undo` takes it back)", file=out)
    return EXIT_USAGE if errors else EXIT_OK  # some file did not read: said above
