"""OTLP trace files, read with the OpenTelemetry project's own message classes (`opentelemetry-proto`):
an `ExportTraceServiceRequest` (or `TracesData`: the same fields) as OTLP/protobuf bytes, or as OTLP/JSON,
one document or one per line as a collector's file exporter writes them.

OTLP/JSON ids are hex by the specification; protobuf's JSON mapping (and `MessageToJson`) writes them as
base64. Both are read: a hex id is turned into base64 before parsing, which would otherwise decode it
silently into other bytes. A line that does not read is a `LoadError` with its file, line and reason;
the other lines still read."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from google.protobuf.json_format import ParseError

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.source_file import display_path

MAX_BYTES = 256 * 1024 * 1024  # one trace file read at most
_HEX_ID = re.compile(r"^[0-9a-fA-F]{16}$|^[0-9a-fA-F]{32}$")


@dataclass(frozen=True)
class Span:
    trace_id: str  # hex
    span_id: str
    parent_id: str  # "" for a root
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None  # the status message of a span whose status is ERROR
    events: tuple[tuple[str, dict[str, Any]], ...] = ()
    where: str = ""  # file:line it came from
    adk_version: Optional[str] = None  # its instrumentation scope's version, when that scope is ADK's


def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` as Python."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, kind)


def _b64_ids(node: Any) -> Any:
    """OTLP/JSON's hex ids as protobuf's JSON mapping reads bytes (base64)."""
    if isinstance(node, dict):
        return {k: (base64.b64encode(bytes.fromhex(v)).decode() if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
                    and _HEX_ID.match(v) else "" if k == "parentSpanId" and v == "" else _b64_ids(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_b64_ids(v) for v in node]
    return node


def _request(document: Any) -> Any:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    if not isinstance(document, dict) or "resourceSpans" not in document and "resource_spans" not in document:
        raise ValueError("not an OTLP trace export: no resourceSpans")
    return json_format.ParseDict(_b64_ids(document), ExportTraceServiceRequest(), ignore_unknown_fields=True)


def _spans(request: Any, where: str) -> list[Span]:
    out = []
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            adk = scope.scope.version or None if scope.scope.name == "gcp.vertex.agent" else None
            for span in scope.spans:
                attributes = {kv.key: any_value(kv.value) for kv in span.attributes}
                error = (span.status.message or "error") if span.status.code == 2 else None
                events = tuple((e.name, {kv.key: any_value(kv.value) for kv in e.attributes}) for e in span.events)
                out.append(Span(span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex(), span.name,
                                span.start_time_unix_nano, span.end_time_unix_nano, attributes, error, events, where, adk))
    return out


@dataclass(frozen=True)
class SpansRead:
    """What one read of a trace file found, and what reading it again needs to parse only what is new:
    the bytes read to the end of their last line (their size and digest), and their lines when they are
    whole exports a line, so exports appended since (`receive`, a collector) are read on (`lines` -1: they
    are not, as a document over several lines or protobuf). A last line not ended yet (an export being
    written) is read each time, until it is: `unended` counts its spans and errors, the lists' last."""

    spans: list[Span]
    errors: list[LoadError]
    size: int = -1
    digest: str = ""
    lines: int = -1
    unended: tuple[int, int] = (0, 0)
    kept_size: int = field(default=0, compare=False)  # the bytes the read kept in the user's cache had (`kept`)


def read_spans(path: Path, root: Path) -> tuple[list[Span], list[LoadError]]:
    """The spans of one trace file, and what of it could not be read."""
    found = read_on(path, root)
    return found.spans, found.errors


def read_on(path: Path, root: Path, before: Optional[SpansRead] = None) -> SpansRead:
    """The spans of one trace file. Given what an earlier read of it found (else the read `kept` in the
    user's cache), what is read is what is new since: nothing when the file is as it was, the lines
    appended since when what was read is still the file's beginning."""
    from . import kept

    shown = display_path(path, root)
    try:
        data = path.read_bytes()[: MAX_BYTES + 1]
    except OSError as exc:
        return SpansRead([], [LoadError(file=shown, line=1, message=f"cannot read it: {exc.strerror or exc}")])
    if len(data) > MAX_BYTES:
        return SpansRead([], [LoadError(file=shown, line=1, message=f"over {MAX_BYTES // (1024 * 1024)} MiB: split it (a collector's file exporter rotates files)")])
    if before is None and len(data) >= kept.MIN_BYTES:
        before = _recalled(kept.recall(path, root, shown))
    head = hashlib.sha256(data[: before.size]) if before is not None and 0 < before.size <= len(data) else None
    if before is not None and head is not None and (before.size == len(data) or before.lines >= 0) and head.hexdigest() == before.digest:
        if before.size == len(data) and before.unended == (0, 0):
            return before
        found = _by_lines(data, shown, before, head)
        if found.size - before.kept_size >= kept.MIN_BYTES:  # kept again after a megabyte more (not at every export)
            found = dataclasses.replace(found, kept_size=found.size)
            kept.keep(path, root, shown, _record(found))
        return found
    found = _read_whole(data, shown)
    if found.size >= kept.MIN_BYTES:
        found = dataclasses.replace(found, kept_size=found.size)
        kept.keep(path, root, shown, _record(found))
    return found


def _record(found: SpansRead) -> dict[str, Any]:
    """A read as JSON values (`kept`)."""
    return {"size": found.size, "digest": found.digest, "lines": found.lines, "unended": list(found.unended),
            "spans": [[s.trace_id, s.span_id, s.parent_id, s.name, s.start_ns, s.end_ns, s.attributes, s.error,
                       [list(event) for event in s.events], s.where, s.adk_version] for s in found.spans],
            "errors": [[e.file, e.line, e.message] for e in found.errors]}


def _recalled(record: Optional[dict[str, Any]]) -> Optional[SpansRead]:
    """A read `_record` made, or None when it does not read as one."""
    if record is None:
        return None
    try:
        spans_unended, errors_unended = (int(n) for n in record["unended"])
        return SpansRead([Span(*span[:8], tuple((name, attributes) for name, attributes in span[8]), *span[9:]) for span in record["spans"]],
                         [LoadError(file=file, line=line, message=message) for file, line, message in record["errors"]],
                         int(record["size"]), str(record["digest"]), int(record["lines"]), (spans_unended, errors_unended), int(record["size"]))
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _read_whole(data: bytes, shown: str) -> SpansRead:
    if not data.strip():
        return SpansRead([], [LoadError(file=shown, line=1, message="the file is empty, where OTLP trace data was expected")])
    whole = (len(data), hashlib.sha256(data).hexdigest())
    if data.lstrip()[:1] not in (b"{", b"["):
        return SpansRead(*_binary(data, shown), *whole)
    text = data.decode("utf-8", errors="replace")
    try:
        spans = _spans(_request(json.loads(text)), f"{shown}:1")
        return SpansRead(spans, [], *whole, 1 if data.count(b"\n") == 1 and data.endswith(b"\n") else -1)  # one export a line: read on
    except json.JSONDecodeError:
        pass  # several documents, one a line (a file exporter's), or a broken one: read line by line
    except (ValueError, RecursionError, ParseError) as exc:
        return SpansRead([], [LoadError(file=shown, line=1, message=_said(exc))])
    found = _by_lines(data, shown, SpansRead([], [], 0, "", 0), hashlib.sha256())
    first = data.count(b"\n", 0, len(data) - len(data.lstrip())) + 1  # the first line that is not blank
    if any(error.line == first for error in found.errors):  # not exports a line (a document still being written over several): read whole each time
        return SpansRead(found.spans, found.errors, *whole)
    return found


def _by_lines(data: bytes, shown: str, before: SpansRead, head: Any) -> SpansRead:
    """`before` (what the bytes to its `size` held, `head` their SHA-256 so far, but the last line it
    found not ended), and the lines after it, one export each: those ended, and the last one if it is
    not (read again next time)."""
    spans = before.spans[: len(before.spans) - before.unended[0]]
    errors = before.errors[: len(before.errors) - before.unended[1]]
    cut = max(data.rfind(b"\n") + 1, before.size)
    more_spans, more_errors = _lines(data[before.size:cut].decode("utf-8", errors="replace"), shown, before.lines)
    lines = before.lines + data.count(b"\n", before.size, cut)
    tail_spans, tail_errors = _lines(data[cut:].decode("utf-8", errors="replace"), shown, lines, unended=True)
    head.update(memoryview(data)[before.size:cut])
    return SpansRead(spans + more_spans + tail_spans, errors + more_errors + tail_errors, cut, head.hexdigest(),
                     lines, (len(tail_spans), len(tail_errors)), before.kept_size)


def _lines(text: str, shown: str, before: int, unended: bool = False) -> tuple[list[Span], list[LoadError]]:
    """A file exporter's lines, one export each, numbered on from `before` (split at newlines only: an
    export's text may hold U+2028 and other characters `splitlines` would split at); `unended`: the
    file's last line, with no newline yet."""
    spans: list[Span] = []
    errors: list[LoadError] = []
    for number, line in enumerate(text.split("\n"), start=before + 1):
        if not line.strip():
            continue
        try:
            spans += _spans(_request(json.loads(line)), f"{shown}:{number}")
        except (ValueError, RecursionError, ParseError) as exc:
            said = _said(exc)
            errors.append(LoadError(file=shown, line=number, message=f"its last line is not ended: an export still being written, or cut short ({said})"
                                    if unended else said))
    return spans, errors


def _binary(data: bytes, shown: str) -> tuple[list[Span], list[LoadError]]:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    try:
        request = ExportTraceServiceRequest.FromString(data)
    except (DecodeError, ValueError) as exc:
        return [], [LoadError(file=shown, line=1, message=f"neither OTLP/JSON nor OTLP/protobuf: {exc}")]
    spans = _spans(request, f"{shown}:1")
    if not spans:
        return [], [LoadError(file=shown, line=1, message="no spans: not an OTLP/protobuf trace export")]
    return spans, []


def _said(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


def export_line(data: bytes, json_body: bool) -> tuple[str, list[Span], list[str]]:
    """An OTLP/HTTP export's body (JSON or protobuf) as one OTLP/JSON line, with its spans and the
    conversations (session ids) it holds; ValueError when it is not a trace export."""
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    try:
        request = _request(json.loads(data)) if json_body else ExportTraceServiceRequest.FromString(data)
    except (ValueError, RecursionError, DecodeError, ParseError) as exc:
        raise ValueError(f"not an OTLP trace export: {_said(exc)}") from None
    spans = _spans(request, "")
    ids = sorted({str(s.attributes.get("gen_ai.conversation.id") or s.attributes.get("gcp.vertex.agent.session_id"))
                  for s in spans if s.attributes.get("gen_ai.conversation.id") or s.attributes.get("gcp.vertex.agent.session_id")})
    document = _hex_ids(json_format.MessageToDict(request, use_integers_for_enums=True))  # OTLP/JSON's own form
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")), spans, ids


def _hex_ids(node: Any) -> Any:
    """Protobuf's JSON mapping's base64 ids as OTLP/JSON's hex."""
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str) else _hex_ids(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node
