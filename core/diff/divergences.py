"""Divergences: every difference of a case as one located, ordered entry (turn, layer, row, path),
with its summary text and the file and line of the expected value."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from agentdiff.core.diff.model import (
    Divergence,
    Layer,
    SessionDiff,
    SourceLocation,
    ToolCallRow,
    TurnDiff,
    describe_change,
    short,
)
from agentdiff.core.diff.sequence import word_diff
from agentdiff.core.diff.tree import Change, render_path
from agentdiff.core.traces.from_files import FINAL_SEQ
from agentdiff.core.traces.model import (
    Origin,
    SessionSnapshot,
    ToolCall,
)

Locator = Callable[[Origin], Optional[SourceLocation]]


def _where(locate: Optional[Locator], origin: Optional[Origin], *parts: str | int) -> Optional[SourceLocation]:
    if locate is None or origin is None:
        return None
    return locate(origin.child(*parts))


def _prefix(turn: int, layer: Layer) -> str:
    return f"turn {turn + 1} · {layer} · "


def node_divergences(turn: TurnDiff) -> list[Divergence]:
    """The node layer's divergences: what ran differently. Shown, never the verdict (ADK scores a
    workflow by its events, as any agent); journey checks on nodes make them gate."""
    from agentdiff.core.diff.nodes import node_summary

    out = []
    for r, row in enumerate(turn.nodes):
        summary = node_summary(row)
        if summary is None:
            continue
        first = row.changes[0] if row.changes else None
        path = render_path(first.path) if first else ""
        expected = first.expected if first else (row.expected.path if row.expected else None)
        actual = first.actual if first else (row.actual.path if row.actual else None)
        out.append(Divergence("nodes", turn.index, r, path, first.kind if first else row.kind, _prefix(turn.index, "nodes") + summary,
                              expected, actual, False, None, 0, r))
    return out


def turn_divergences(turn: TurnDiff, final_origin: Optional[Origin], locate: Optional[Locator]) -> list[Divergence]:
    out: list[Divergence] = []
    t = turn.index
    for r, row in enumerate(turn.requests):
        label = f"{row.agent} call {row.index + 1}"
        if row.kind == "inserted":
            out.append(Divergence("request", t, r, "", "inserted", _prefix(t, "request") + f"{label} ran past the recording", None, row.actual_request, True, None, row.seq, r))
        elif row.kind == "deleted":
            out.append(Divergence("request", t, r, "", "deleted", _prefix(t, "request") + f"{label} was recorded but never made", row.expected_request, None, True, _where(locate, row.expected.origin if row.expected else None), row.seq, r))
        for change in row.changes:
            path = render_path(change.path)
            source = _where(locate, row.expected.origin if row.expected else None, *_existing(change))
            out.append(Divergence("request", t, r, path, change.kind, _prefix(t, "request") + f"{label} {describe_change(change)}", change.expected, change.actual, True, source, row.seq, r))
    for r, row in enumerate(turn.tool_calls):
        if not row.differs:
            continue
        out.append(_tool_divergence(t, r, row, turn.tool_calls, locate))
    if turn.response is not None and not turn.response.same:
        resp = turn.response
        score = ""
        if resp.score is not None:
            score = f"ROUGE-1 {resp.score:.2f}"
            if resp.threshold is not None:
                score += f" {'≥' if resp.passed else '<'} {resp.threshold:g}"
            score += " · "
        out.append(
            Divergence(
                "response", t, None, "final_response", "changed",
                _prefix(t, "response") + score + _text_change(resp.expected, resp.actual),
                resp.expected, resp.actual, resp.passed is False, _where(locate, final_origin), FINAL_SEQ, 0,
            )
        )
    return out


def _existing(change: Change) -> tuple[str | int, ...]:
    """The path of the nearest expected-side value (an added key lives in its parent)."""
    return change.path[:-1] if change.kind == "added" else change.path


def _text_change(expected: Optional[str], actual: Optional[str]) -> str:
    if expected is None:
        return f"unexpected answer {short(actual)}"
    if actual is None:
        return f"no answer (expected {short(expected)})"
    change = Change("changed", (), (), expected, actual, tuple(word_diff(expected, actual)))
    return describe_change(change).removeprefix("(value) ")


def _tool_divergence(t: int, r: int, row: ToolCallRow, rows: Sequence[ToolCallRow], locate: Optional[Locator]) -> Divergence:
    prefix = _prefix(t, "tool_calls")
    e, a = row.expected, row.actual
    if row.kind == "inserted":
        anchor = next((x.expected for x in reversed(rows[:r]) if x.expected is not None), None)
        return Divergence("tool_calls", t, r, "", "inserted", prefix + f"extra call {_call_text(a)}", None, _call_dict(a), row.counts, _where(locate, anchor.origin if anchor else None), row.seq, r)
    if row.kind == "deleted":
        return Divergence("tool_calls", t, r, "", "deleted", prefix + f"missing call {_call_text(e)}", _call_dict(e), None, row.counts, _where(locate, e.origin if e else None), row.seq, r)
    if row.kind == "moved":
        return Divergence(
            "tool_calls", t, r, "", "moved",
            prefix + f"{row.name} moved from call {row.expected_index + 1} to {row.actual_index + 1}",  # type: ignore[operator]
            _call_dict(e), _call_dict(a), row.counts, _where(locate, e.origin if e else None), row.seq, r,
        )
    changes = row.changes or row.response_changes
    first = changes[0]
    more = f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""
    if first.path[0] == "args" and e is not None:
        source = _where(locate, e.args_origin, *_existing(first)[1:])
    elif first.path[0] == "response" and e is not None:
        source = _where(locate, e.response_origin, *_existing(first)[1:])
    else:
        source = _where(locate, e.origin if e else None, "name")
    name = e.name if e is not None and first.path[0] == "name" else row.name
    kind = "changed" if row.changes else "response"
    summary = prefix + (f"{describe_change(first)}{more}" if first.path[0] == "name" else f"{name} {describe_change(first)}{more}")
    return Divergence("tool_calls", t, r, render_path(first.path), kind, summary, first.expected, first.actual, row.counts and bool(row.changes), source, row.seq, r)


def _call_dict(call: Optional[ToolCall]) -> Optional[dict[str, Any]]:
    return None if call is None else {"name": call.name, "args": call.args}


def _call_text(call: Optional[ToolCall]) -> str:
    return "" if call is None else f"{call.name}({short(call.args, 50)})"


def session_divergences(session: SessionDiff, expected: SessionSnapshot, last_turn: int, locate: Optional[Locator]) -> list[Divergence]:
    out: list[Divergence] = []
    for r, row in enumerate(session.events):
        if row.kind == "same":
            continue
        label = f"event {(row.expected_index if row.expected_index is not None else row.actual_index) + 1} ({row.author})"  # type: ignore[operator]
        if row.kind == "changed":
            first = row.changes[0]
            more = f" (+{len(row.changes) - 1} more)" if len(row.changes) > 1 else ""
            summary = f"{label} {describe_change(first)}{more}"
            source = _where(locate, expected.origin, "events", row.expected_index, *_existing(first))  # type: ignore[arg-type]
            path = render_path(first.path)
        elif row.kind == "moved":
            summary = f"{label} moved to event {row.actual_index + 1}"  # type: ignore[operator]
            source = _where(locate, expected.origin, "events", row.expected_index)
            path = ""
        else:
            summary = f"{label} {'extra' if row.kind == 'inserted' else 'missing'}"
            source = _where(locate, expected.origin, "events", row.expected_index) if row.expected_index is not None else None
            path = ""
        out.append(Divergence("session", row.turn, r, path, row.kind, _prefix(row.turn, "session") + summary, None, None, True, source, FINAL_SEQ + 1, r))
    for r, change in enumerate(session.changes):
        source = _where(locate, expected.origin, *_existing(change))
        out.append(
            Divergence("session", last_turn, None, render_path(change.path), change.kind, f"session · {describe_change(change)}", change.expected, change.actual, True, source, FINAL_SEQ + 2, r)
        )
    return out
