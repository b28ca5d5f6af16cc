"""The session layer: app name, user and state by key, and the events aligned after ADK's exclusions."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from agentdiff.core.diff.model import (
    EventRow,
    SessionDiff,
)
from agentdiff.core.diff.sequence import align
from agentdiff.core.diff.tree import Change, diff_trees, freeze, pair_block
from agentdiff.core.traces.model import (
    SessionSnapshot,
)
from agentdiff.core.traces.nodes import node_path

SESSION_EXCLUDED_STATE = ("_adk_recordings_config", "_adk_replay_config")
_EVENT_EXCLUDED = ("id", "timestamp", "invocation_id", "long_running_tool_ids", "node_info")
_EMPTY_DEFAULT_ACTIONS = ("state_delta", "artifact_delta")


def normalize_event(event: dict[str, Any]) -> dict[str, Any]:
    """An event as ADK's replay compares it: ids, timestamps and replay bookkeeping removed."""
    out = {key: value for key, value in event.items() if key not in _EVENT_EXCLUDED and value is not None}
    content = out.get("content")
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        parts = []
        for part in content["parts"]:
            if isinstance(part, dict):
                part = {k: v for k, v in part.items() if k != "thought_signature" and v is not None}
                for key in ("function_call", "function_response"):
                    if isinstance(part.get(key), dict):
                        part[key] = {k: v for k, v in part[key].items() if k != "id" and v is not None}
            parts.append(part)
        out["content"] = {**content, "parts": parts}
    actions = out.get("actions")
    if isinstance(actions, dict):
        actions = {k: v for k, v in actions.items() if k not in ("requested_auth_configs", "requested_tool_confirmations")}
        if isinstance(actions.get("state_delta"), dict):
            actions["state_delta"] = {k: v for k, v in actions["state_delta"].items() if k not in SESSION_EXCLUDED_STATE}
        # empty maps and nulls are EventActions' defaults: a file that spells them out says nothing more
        actions = {k: v for k, v in actions.items() if v is not None and not (k in _EMPTY_DEFAULT_ACTIONS and v == {})}
        if actions:
            out["actions"] = actions
        else:
            out.pop("actions")
    return out


def _label(event: dict[str, Any]) -> str:
    """Who an event is from: its workflow node's path (`inner/writer`) where it has one, else its author."""
    return node_path(event) or str(event.get("author", ""))


def _event_turns(events: Sequence[dict[str, Any]]) -> list[int]:
    turns, turn, seen = [], 0, False
    for event in events:
        if event.get("author") == "user":
            if seen:
                turn += 1
            seen = True
        turns.append(turn)
    return turns


def diff_session(expected: SessionSnapshot, actual: SessionSnapshot) -> SessionDiff:
    changes: list[Change] = []
    for key in ("app_name", "user_id"):
        changes += diff_trees(getattr(expected, key), getattr(actual, key), (key,))
    state_e = {k: v for k, v in expected.state.items() if k not in SESSION_EXCLUDED_STATE}
    state_a = {k: v for k, v in actual.state.items() if k not in SESSION_EXCLUDED_STATE}
    changes += diff_trees(state_e, state_a, ("state",))
    norm_e = [normalize_event(e) for e in expected.events]
    norm_a = [normalize_event(e) for e in actual.events]
    turns_e, turns_a = _event_turns(expected.events), _event_turns(actual.events)
    rows: list[EventRow] = []
    frozen_e, frozen_a = [freeze(e) for e in norm_e], [freeze(e) for e in norm_a]
    for tag, i1, i2, j1, j2 in align(frozen_e, frozen_a):
        if tag == "equal":
            rows += [EventRow("same", i1 + k, j1 + k, turns_e[i1 + k], _label(expected.events[i1 + k])) for k in range(i2 - i1)]
            continue
        rows += _replaced(expected.events, actual.events, norm_e, norm_a, (i1, i2, j1, j2), turns_e, turns_a)
    return SessionDiff(tuple(changes), tuple(_moves(rows, frozen_e, frozen_a)))


def _replaced(events_e, events_a, norm_e, norm_a, block, turns_e, turns_a) -> list[EventRow]:
    """The rows of one replaced block: events paired by who wrote them (a node's path, else the
    author) are changed; the others deleted and inserted."""
    i1, i2, j1, j2 = block
    rows = []
    for i, j in pair_block([_label(e) for e in events_e[i1:i2]], [_label(e) for e in events_a[j1:j2]], key=lambda label: label):
        if i is not None and j is not None:
            ie, ja = i1 + i, j1 + j
            rows.append(EventRow("changed", ie, ja, turns_e[ie], _label(events_a[ja]), tuple(diff_trees(norm_e[ie], norm_a[ja]))))
        elif i is not None:
            rows.append(EventRow("deleted", i1 + i, None, turns_e[i1 + i], _label(events_e[i1 + i])))
        else:
            assert j is not None
            rows.append(EventRow("inserted", None, j1 + j, turns_a[j1 + j], _label(events_a[j1 + j])))
    return rows


def _moves(rows: list[EventRow], frozen_e: list, frozen_a: list) -> list[EventRow]:
    """A deleted event that is inserted unchanged elsewhere moved (parallel branches that ended in
    another order): one row, where it was expected."""
    inserted: dict[Any, list[int]] = {}
    for r, row in enumerate(rows):
        if row.kind == "inserted":
            inserted.setdefault(frozen_a[row.actual_index], []).append(r)
    gone: set[int] = set()
    out: list[Optional[EventRow]] = list(rows)
    for r, row in enumerate(rows):
        if row.kind == "deleted" and inserted.get(frozen_e[row.expected_index]):
            partner = inserted[frozen_e[row.expected_index]].pop(0)
            out[r] = EventRow("moved", row.expected_index, rows[partner].actual_index, row.turn, row.author)
            gone.add(partner)
    return [row for r, row in enumerate(out) if row is not None and r not in gone]
