"""`agentdiff import TRACES… [--into FILE]`: OpenTelemetry traces of an ADK agent (OTLP/JSON or protobuf,
files or folders, either of ADK's telemetry schemas) become EvalSet cases, one per conversation, each
expecting what its trace did. The new cases are shown as the file change first and written when
confirmed (`--yes` without asking), as one journal entry that `agentdiff undo` takes back; a case
whose id the file already has is left as it is."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import TextIO

from .errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, print_errors

NAME = "import"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="turn OpenTelemetry traces of an ADK agent (adk web, production) into EvalSet cases",
        description="Read OTLP trace files (JSON, one export or one per line, or protobuf; folders are searched) as ADK "
        "emits them in either telemetry schema, and add one EvalSet case per conversation to FILE (created when "
        "missing; by default traced.evalset.json in the conversation's agent folder), expecting what the trace did: each turn's user message, tool calls with their responses, and "
        "final response. The file change is printed and confirmed unless --yes; it is one journal entry (`agentdiff "
        "undo`). A conversation whose trace holds no message content is left out, with how to turn capture on.",
    )
    parser.add_argument("traces", nargs="+", type=Path, metavar="TRACES", help="OTLP trace files or folders of them")
    parser.add_argument("--into", type=Path, metavar="FILE", help="the EvalSet file the cases go into (*.evalset.json; default: "
                        "traced.evalset.json in each conversation's agent folder, found from its trace file's folder up, else beside the trace)")
    parser.add_argument("--yes", "-y", action="store_true", help="write without asking")


def trace_files(paths: list[Path]) -> list[Path]:
    """The files given, and the trace files under the folders given (sorted, hidden ones left out; a JSON
    file there that holds no OTLP traces, an eval set beside them say, is none)."""
    from agentdiff.core.formats.otlp.names import is_trace_file

    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if not any(part.startswith(".") for part in p.relative_to(path).parts)
                            and is_trace_file(p))
        else:
            found.append(path)
    return found


def read_conversations(paths: list[Path], root: Path) -> tuple[list, list]:
    """The conversations of the trace files given (folders searched), and what did not read."""
    from agentdiff.core.reports.traced_runs import read_conversations as read

    missing = [p for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {missing[0]}")
    return read(trace_files(paths), root)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError, write_baseline
    from agentdiff.core.families.traces.cases import target_of
    from agentdiff.core.baselines.documents import RecordError
    from agentdiff.core.families.traces.writes import conversation_writes
    from agentdiff.core.traces.otlp_cases import unusable

    from .accept import _confirm

    root = Path.cwd()
    if args.into is not None and (args.into.is_dir() or not args.into.name.endswith((".evalset.json", ".test.json"))):
        raise UsageError(f"--into names an EvalSet file (*.evalset.json or *.test.json), not {args.into}")
    found, errors = read_conversations(list(args.traces), root)
    print_errors(errors, err)
    by_target: dict[Path, list] = {}
    left_out = 0
    for conversation in found:
        why = unusable(conversation)
        if why is not None:
            left_out += 1
            print(f"left out: {conversation.id} ({conversation.where}): {why}", file=err, flush=True)
        elif conversation.case is None:  # not agentdiff's own export of a case's run
            trace_file = root / conversation.where.rpartition(":")[0]
            by_target.setdefault(args.into.resolve() if args.into else target_of(trace_file, conversation.agent, root), []).append(conversation)
    try:
        writes, added, already = conversation_writes(by_target, [])
    except RecordError as exc:
        raise UsageError(str(exc)) from None
    for eval_id, target in already:
        print(f"already in {_shown(target, root)}: {eval_id} (left as it is)", file=out)
    for write in writes:
        before = write.path.read_bytes().decode("utf-8") if write.expected_sha256 is not None else ""  # its line endings as they are
        shown = _shown(write.path, root)
        out.writelines(difflib.unified_diff(before.splitlines(keepends=True), write.text.splitlines(keepends=True), f"a/{shown}", f"b/{shown}"))
    if not added:
        print("nothing to import: " + (f"{left_out} conversation(s) left out (said above, with the setting that keeps their content)"
                                       if left_out else "no conversation with its content that is not a case already"), file=out)
        return EXIT_USAGE if errors else EXIT_FAILED
    into = ", ".join(dict.fromkeys(_shown(t, root) for _, t in added))
    description = f"import {len(added)} traced conversation{'s' if len(added) != 1 else ''} into {into}: " + \
        ", ".join(i for i, _ in added[:5]) + ("…" if len(added) > 5 else "")
    print(description, file=out)
    if not args.yes and not _confirm("write it? [y/N] ", out):
        print("not written", file=out)
        return EXIT_FAILED
    try:
        entry = write_baseline(writes, root, description)
    except (BaselineConflict, BaselineWriteError) as exc:
        raise UsageError(str(exc)) from None
    print(f"written: {entry.reason} (`agentdiff undo` takes it back)", file=out)
    return EXIT_USAGE if errors else EXIT_OK  # some file did not read: said above


def _shown(path: Path, root: Path) -> str:
    from agentdiff.core.formats.source_file import display_path

    return display_path(path, root)
