"""A case's layered diff as data: rows per layer and turn, divergences with their locations, and
one-line summaries. Computed by `diff_layers.diff_case`; rendered by the TUI and the CLI."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, Optional

from agentdiff.core.diff.request_normalize import NormalizedRequest, normalize_request
from agentdiff.core.diff.sequence import WordOp
from agentdiff.core.diff.text_lines import LineRow, first_changed_line, is_multiline
from agentdiff.core.diff.tree import Change, render_path
from agentdiff.core.formats.eval_config import MatchType
from agentdiff.core.traces.model import LlmExchange, NodeStep, TextResponse, ToolCall

Layer = Literal["nodes", "request", "tool_calls", "response", "session"]
#: In reading order: what ran (an ADK 2 workflow's nodes), what was asked, done, answered, kept.
LAYERS: tuple[Layer, ...] = ("nodes", "request", "tool_calls", "response", "session")
RowKind = Literal["same", "changed", "inserted", "deleted", "moved"]
LayerState = Literal["same", "changed", "absent"]


@dataclass(frozen=True)
class DiffCriteria:
    """What decides the verdict: the trajectory match type and the response threshold."""

    match_type: MatchType = MatchType.EXACT
    ignore_args: bool = False
    response_threshold: Optional[float] = None  # ROUGE-1; None: the response layer does not gate
    trajectory_judged: bool = True  # False: no tool trajectory metric (tool calls are aligned by `match_type` all the same)
    strict_node_order: bool = False  # parallel branches compared in the order they ran, not by branch


@dataclass(frozen=True)
class SourceLocation:
    """The file and line holding an expected value (the nearest enclosing value that exists)."""

    file: str
    line: Optional[int] = None
    column: Optional[int] = None
    path: str = ""

    def __str__(self) -> str:
        return self.file + (f":{self.line}" if self.line else "")


@dataclass(frozen=True)
class RequestRow:
    """One LLM call of one agent, paired by (agent, index in the turn) as ADK's replay pairs them."""

    kind: RowKind  # inserted: the agent ran past the recording; deleted: a recorded call never made
    agent: str
    index: int
    seq: int
    expected: Optional[LlmExchange]
    actual: Optional[LlmExchange]
    changes: tuple[Change, ...] = ()  # by path in the normalised requests
    _normalized: dict[str, Optional[NormalizedRequest]] = field(default_factory=dict, repr=False, compare=False)

    def _side(self, side: str) -> Optional[NormalizedRequest]:
        if side not in self._normalized:  # computed on demand: only a shown request needs it
            exchange = self.expected if side == "expected" else self.actual
            self._normalized[side] = normalize_request(exchange.request or {}) if exchange is not None else None
        return self._normalized[side]

    @property
    def expected_request(self) -> Any:
        normalized = self._side("expected")
        return normalized.request if normalized else None

    @property
    def actual_request(self) -> Any:
        normalized = self._side("actual")
        return normalized.request if normalized else None

    @property
    def notes(self) -> tuple[str, ...]:
        """The excluded and normalised fields of both sides."""
        notes = [note for side in ("expected", "actual") for note in (self._side(side).notes if self._side(side) else ())]  # type: ignore[union-attr]
        return tuple(dict.fromkeys(notes))


@dataclass(frozen=True)
class ToolCallRow:
    kind: RowKind
    expected_index: Optional[int]
    actual_index: Optional[int]
    expected: Optional[ToolCall]
    actual: Optional[ToolCall]
    changes: tuple[Change, ...] = ()  # paths relative to the call: ("name",), ("args", "order_id")
    response_changes: tuple[Change, ...] = ()  # paths relative to the tool response
    counts: bool = False  # this row decides the trajectory verdict under the match type
    seq: int = 0

    @property
    def differs(self) -> bool:
        return self.kind != "same" or bool(self.response_changes)

    @property
    def name(self) -> str:
        call = self.actual or self.expected
        return call.name if call else ""


@dataclass(frozen=True)
class NodeRow:
    """One node run of a workflow, paired by node path (`diff.nodes`)."""

    kind: RowKind  # changed: another route or output, or another node ran in its place
    expected_index: Optional[int]
    actual_index: Optional[int]
    expected: Optional[NodeStep]
    actual: Optional[NodeStep]
    changes: tuple[Change, ...] = ()  # ("node",), ("route", …), ("output", …)


@dataclass(frozen=True)
class ResponseDiff:
    expected: Optional[str]
    actual: Optional[str]
    words: tuple[WordOp, ...] = ()
    score: Optional[float] = None  # ROUGE-1 F-measure of actual against expected
    threshold: Optional[float] = None
    expected_intermediate: tuple[TextResponse, ...] = ()
    actual_intermediate: tuple[TextResponse, ...] = ()
    # a workflow's own output (the event ADK marks as the root's), beside ADK's final response: shown, not scored
    expected_output: Any = None
    actual_output: Any = None
    has_output: tuple[bool, bool] = (False, False)

    @property
    def same(self) -> bool:
        return self.expected == self.actual

    @property
    def passed(self) -> Optional[bool]:
        if self.score is None or self.threshold is None:
            return None
        return self.score >= self.threshold


@dataclass(frozen=True)
class EventRow:
    kind: RowKind
    expected_index: Optional[int]
    actual_index: Optional[int]
    turn: int
    author: str
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class SessionDiff:
    changes: tuple[Change, ...]  # app_name, user_id and state.<key>: ADK's session comparison
    events: tuple[EventRow, ...]
    notes: tuple[str, ...] = ()

    @property
    def same(self) -> bool:
        return not self.changes and all(row.kind == "same" for row in self.events)


@dataclass(frozen=True)
class TurnDiff:
    index: int
    user_text: str
    requests: tuple[RequestRow, ...] = ()
    tool_calls: tuple[ToolCallRow, ...] = ()
    trajectory_matches: Optional[bool] = None
    response: Optional[ResponseDiff] = None
    missing: Optional[Literal["expected", "actual"]] = None  # a side that has no such turn
    nodes: tuple[NodeRow, ...] = ()
    actual_nodes: tuple[NodeStep, ...] = ()  # what ran, also when the baseline records no node path
    actual_llm: tuple[LlmExchange, ...] = ()  # the requests sent, when the baseline records none to compare
    error: Optional[str] = None  # the actual run broke in this turn


@dataclass(frozen=True)
class Divergence:
    """One place where the sides differ: one request path, one tool-call row, one turn's response,
    one session key or event."""

    layer: Layer
    turn: int  # 0-based
    index: Optional[int]  # the request / call row / event within the turn
    path: str  # inside the request, call, response or session
    kind: str  # changed | added | removed | inserted | deleted | moved | response
    summary: str
    expected: Any = None
    actual: Any = None
    counts: bool = True  # decides the verdict
    source: Optional[SourceLocation] = None
    seq: int = 0
    row: int = 0  # position of the row inside its layer and turn


@dataclass(frozen=True)
class LayerStatus:
    layer: Layer
    status: LayerState
    count: int = 0
    summary: Optional[str] = None  # the first divergence, "(+N more)"
    reason: Optional[str] = None  # why a layer is absent


@dataclass(frozen=True)
class CaseDiff:
    case_id: str
    criteria: DiffCriteria
    turns: tuple[TurnDiff, ...]
    session: Optional[SessionDiff]
    layers: tuple[LayerStatus, ...]
    divergences: tuple[Divergence, ...]  # in order: turn, then time within the turn, then layer
    error: Optional[str] = None  # the actual run's error
    notes: tuple[str, ...] = field(default=())
    lead: Optional[Divergence] = None  # what explains the verdict, set by `explain` (None: the earliest)

    @property
    def same(self) -> bool:
        return not self.divergences and self.error is None

    @property
    def unchanged(self) -> bool:
        """Same, and no layer shows a change (a new case's show what it did, with nothing expected to diverge from)."""
        return self.same and all(layer.status != "changed" for layer in self.layers)

    @property
    def first_divergence(self) -> Optional[Divergence]:
        """The divergence the case leads with: the one that explains its verdict when one was
        chosen (`diff.explain`), else the earliest."""
        if self.lead is not None:
            return self.lead
        return self.divergences[0] if self.divergences else None

    def layer(self, name: Layer) -> LayerStatus:
        """A layer's status (`nodes` is listed for workflows only: else it reads absent)."""
        found = next((status for status in self.layers if status.layer == name), None)
        return found if found is not None else LayerStatus(name, "absent", reason="not a workflow")


# --- one-line text ----------------------------------------------------------------------------------

SHORT_VALUE = 60


def short(value: Any, limit: int = SHORT_VALUE) -> str:
    """A value as compact JSON, cut to `limit` characters (a cut text keeps its closing quote)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) <= limit:
        return text
    if isinstance(value, str) and limit > 3:
        keep = limit - 3
        while keep > 0 and len(cut := json.dumps(value[:keep] + "…", ensure_ascii=False)) > limit:
            keep -= max(1, len(cut) - limit)
        return json.dumps(value[:max(0, keep)] + "…", ensure_ascii=False)
    return text[: limit - 1] + "…"


def display_path(change: Change, prefix_len: int = 0) -> str:
    """The change's path (without its first `prefix_len` parts), `[i→j]` where an element moved."""
    out = ""
    for a, b in list(zip(change.path, change.actual_path))[prefix_len:]:
        if isinstance(a, int):
            out += f"[{a}→{b}]" if isinstance(b, int) and a != b else f"[{a}]"
        else:
            out += render_path(("x", a))[1:]
    return out.lstrip(".")


def describe_change(change: Change, prefix_len: int = 0) -> str:
    """`args.order_id "A1" → "a1"`, `args.x extra 3`, `args.y missing (expected 1)`, `… "polite" → "terse"`."""
    try:
        return _describe_cached(change, prefix_len)
    except TypeError:  # a change holding a list or a dict
        return _describe(change, prefix_len)


@lru_cache(maxsize=1024)
def _describe_cached(change: Change, prefix_len: int) -> str:
    # one prompt edit repeats the same change in every request of a trace
    return _describe(change, prefix_len)


def _describe(change: Change, prefix_len: int) -> str:
    where = display_path(change, prefix_len) or "(value)"
    if change.kind == "added":
        return f"{where} extra {short(change.actual, 40)}"
    if change.kind == "removed":
        return f"{where} missing (expected {short(change.expected, 40)})"
    if change.words and isinstance(change.expected, str) and isinstance(change.actual, str) and (
            is_multiline(change.expected, change.actual) or _blocks(change.words) > 1):  # the first changed line, as it is
        row = first_changed_line(change.expected, change.actual)
        if row is not None:
            said = _line_said(row)
            return f"{where} {said if is_multiline(change.expected, change.actual) else said.split(': ', 1)[-1]}"
    if change.words:
        deleted = "".join(op.text for op in change.words if op.op == "delete").strip()  # one place changed: its exact text
        inserted = "".join(op.text for op in change.words if op.op == "insert").strip()
        if deleted and inserted:
            return f"{where} {short(deleted, 40)} → {short(inserted, 40)}"
        if inserted:
            return f"{where} + {short(inserted, 40)}"
        if deleted:
            return f"{where} − {short(deleted, 40)}"
        return f"{where} whitespace changed"
    return f"{where} {short(change.expected, 40)} → {short(change.actual, 40)}"


def _blocks(words: tuple[WordOp, ...]) -> int:
    """How many separate places a word diff changes (a run of deletes and inserts is one)."""
    count, inside = 0, False
    for op in words:
        if op.op != "equal" and not inside:
            count += 1
        inside = op.op != "equal"
    return count


def _line_said(row: LineRow, limit: int = 60) -> str:
    """`line 12 added: "…"`, `line 12 removed: "…"`; a line changed in one place, its exact words
    (`line 3: "invent" → "make up"`, `line 1: + "carefully"`); in several, the line quoted around its
    first change."""
    if row.kind == "inserted":
        return f"line {row.actual_number} added: {_quoted(row.actual or '', 0, limit)}"
    if row.kind == "deleted":
        return f"line {row.expected_number} removed: {_quoted(row.expected or '', 0, limit)}"
    if _blocks(row.words) == 1:
        deleted = "".join(op.text for op in row.words if op.op == "delete").strip()
        inserted = "".join(op.text for op in row.words if op.op == "insert").strip()
        if deleted and inserted:
            return f"line {row.actual_number}: {short(deleted, 40)} → {short(inserted, 40)}"
        if inserted or deleted:
            return f"line {row.actual_number}: {'+ ' + short(inserted, 40) if inserted else '− ' + short(deleted, 40)}"
    said = _blocks_said(row.words)
    if said is not None:
        return f"line {row.actual_number}: {said}"
    before = 0
    for op in row.words:
        if op.op != "equal":
            break
        before += len(op.text)
    return (f"line {row.actual_number}: {_quoted(row.expected or '', before, limit // 2 + 10)} → "
            f"{_quoted(row.actual or '', before, limit // 2 + 10)}")


def _blocks_said(words: tuple[WordOp, ...], most: int = 3, limit: int = 120) -> Optional[str]:
    """A line changed in a few places, each place's exact words (`"It's" → "Right now"; + ", enjoy!"`),
    when they fit in `limit` characters: a reader sees every word that changed, none dropped."""
    places: list[str] = []
    deleted: list[str] = []
    inserted: list[str] = []

    def close() -> None:
        gone, new = "".join(deleted).strip(), "".join(inserted).strip()
        if gone and new:
            places.append(f"{json.dumps(gone, ensure_ascii=False)} → {json.dumps(new, ensure_ascii=False)}")
        elif gone or new:
            places.append(f"+ {json.dumps(new, ensure_ascii=False)}" if new else f"− {json.dumps(gone, ensure_ascii=False)}")
        deleted.clear()
        inserted.clear()

    for op in words:
        if op.op == "equal":
            close()
        else:
            (deleted if op.op == "delete" else inserted).append(op.text)
    close()
    said = "; ".join(places)
    return said if places and len(places) <= most and len(said) <= limit else None


def _quoted(line: str, change_at: int, limit: int) -> str:
    """The line as JSON, cut to about `limit` characters around `change_at`."""
    line = line.strip() if len(line.strip()) <= limit else line
    if len(line) <= limit:
        return json.dumps(line, ensure_ascii=False)
    start = max(0, min(change_at - 12, len(line) - limit))
    text = line[start:start + limit]
    return json.dumps(("…" if start else "") + text + ("…" if start + limit < len(line) else ""), ensure_ascii=False)
