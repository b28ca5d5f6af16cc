"""What a trace file is called and how one is told, without reading it as OTLP (no protobuf imported:
discovery asks this of every project)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

#: The suffixes of trace files in a folder given to `import` or `score`.
TRACE_SUFFIXES = (".json", ".jsonl", ".pb", ".otlp", ".binpb")
#: The names a project's trace files go by (read as cases of their own, and offered by `B`): `traces.json`
#: as `agentdiff receive` writes it, and the names below; any file given on a command line is read too.
TRACE_FILE_NAMES = ("traces.json", "traces.jsonl")
TRACE_FILE_ENDINGS = (".traces.json", ".traces.jsonl", ".otlp.json", ".otlp.jsonl", ".otlp")
_SNIFF = 65_536


def is_trace_file_name(name: str) -> bool:
    return name in TRACE_FILE_NAMES or name.endswith(TRACE_FILE_ENDINGS)


def holds_traces(path: Path) -> bool:
    """Whether a file of such a name holds OTLP traces (protobuf by its suffix, JSON by `resourceSpans`
    near its start): a `traces.json` of some other tool is none; one that cannot be read is (its read says why)."""
    if path.suffix == ".otlp":
        return True
    said = _sniffed(path)
    return True if said is None else said


def is_trace_file(path: Path) -> bool:
    """Whether a file in a folder given to `import` or `score` is a trace file: protobuf by its suffix,
    JSON by a `resourceSpans` near its start (an eval set or ADK's results beside it are not)."""
    try:
        if not path.is_file() or path.suffix not in TRACE_SUFFIXES or path.name.endswith(".evalset_result.json"):
            return False
    except OSError:  # a name too long for a file, say: not a trace (the caller says why it is not there)
        return False
    return path.suffix in (".pb", ".binpb", ".otlp") or bool(_sniffed(path))


def _sniffed(path: Path) -> Optional[bool]:
    """Whether a `resourceSpans` is near its start; None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF)
    except OSError:
        return None
    return b'"resourceSpans"' in head or b'"resource_spans"' in head
