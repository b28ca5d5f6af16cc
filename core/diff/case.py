"""`diff_case(expected, actual)` → `CaseDiff`: every layer of every turn, the session, the layer
statuses, and the divergences ordered by turn, then time within the turn, then layer, so the first
one is the earliest thing that went differently."""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

from agentdiff.core.diff.divergences import (
    Locator,
    node_divergences,
    session_divergences,
    turn_divergences,
)
from agentdiff.core.diff.model import (
    LAYERS,
    CaseDiff,
    DiffCriteria,
    Divergence,
    Layer,
    LayerStatus,
    TurnDiff,
)
from agentdiff.core.diff.nodes import diff_nodes
from agentdiff.core.traces.nodes import without_transfers
from agentdiff.core.diff.requests import diff_requests
from agentdiff.core.diff.response import diff_response
from agentdiff.core.diff.session import diff_session
from agentdiff.core.diff.tool_calls import align_tool_calls, mark_counting_rows
from agentdiff.core.traces.model import (
    Trace,
    Turn,
)

_LAYER_RANK = {layer: rank for rank, layer in enumerate(LAYERS)}


def diff_case(
    expected: Trace,
    actual: Trace,
    criteria: DiffCriteria = DiffCriteria(),
    case_id: str = "",
    locate: Optional[Locator] = None,
) -> CaseDiff:
    expected, actual = without_transfers(expected, actual.transfer_parents), without_transfers(actual, actual.transfer_parents)
    turn_count = max(len(expected.turns), len(actual.turns))
    compare_requests_layer = expected.has_requests  # an EvalSet baseline records no requests
    compare_nodes = any(turn.nodes for turn in expected.turns)  # nor node paths: then only what ran is shown
    turns: list[TurnDiff] = []
    divergences: list[Divergence] = []
    for t in range(turn_count):
        e = expected.turns[t] if t < len(expected.turns) else Turn(index=t)
        a = actual.turns[t] if t < len(actual.turns) else Turn(index=t)
        missing = "expected" if t >= len(expected.turns) else "actual" if t >= len(actual.turns) else None
        requests = diff_requests(e.llm, a.llm) if compare_requests_layer else []
        rows = align_tool_calls(e.tool_calls, a.tool_calls)
        rows, matches = mark_counting_rows(rows, e.tool_calls, a.tool_calls, criteria)
        response = diff_response(e, a, criteria)
        nodes = diff_nodes(e.nodes, a.nodes, criteria.strict_node_order) if compare_nodes else []
        turn = TurnDiff(t, e.user_text or a.user_text, tuple(requests), tuple(rows), matches, response, missing, tuple(nodes), a.nodes,  # type: ignore[arg-type]
                        () if compare_requests_layer else a.llm, a.error)
        turns.append(turn)
        divergences += node_divergences(turn) + turn_divergences(turn, e.final_origin, locate)
    session = None
    if expected.session is not None and actual.session is not None:
        session = diff_session(expected.session, actual.session)
        divergences += session_divergences(session, expected.session, max(turn_count - 1, 0), locate)
    divergences.sort(key=lambda d: (d.turn, d.seq, _LAYER_RANK[d.layer], d.row))
    layers = _layer_statuses(expected, actual, divergences)
    return CaseDiff(case_id, criteria, tuple(turns), session, layers, tuple(divergences), error=actual.error)


def _layer_statuses(expected: Trace, actual: Trace, divergences: Sequence[Divergence]) -> tuple[LayerStatus, ...]:
    out = []
    for layer in LAYERS:
        if layer == "nodes" and not any(t.nodes for t in (*expected.turns, *actual.turns)):
            continue  # not a workflow: no such layer
        mine = [d for d in divergences if d.layer == layer]
        reason = _absent_reason(layer, expected, actual)
        if reason and not mine:
            out.append(LayerStatus(layer, "absent", reason=reason))
            continue
        if not mine:
            out.append(LayerStatus(layer, "same"))
            continue
        more = f" (+{len(mine) - 1} more)" if len(mine) > 1 else ""
        out.append(LayerStatus(layer, "changed", len(mine), mine[0].summary + more))
    return tuple(out)


def _absent_reason(layer: Layer, expected: Trace, actual: Trace) -> Optional[str]:
    if layer == "nodes":
        if not any(t.nodes for t in expected.turns):
            return "the baseline records no node path (what ran is shown)"
    if layer == "request" and not expected.has_requests:
        return "the baseline has no recorded LLM requests"
    if layer == "session" and (expected.session is None or actual.session is None):
        return "no session to compare" if expected.session is not None else "the baseline has no session"
    if layer == "response" and not any(t.final_response is not None for t in (*expected.turns, *actual.turns)):
        return "no final responses"
    if layer == "tool_calls" and not any(t.tool_calls for t in (*expected.turns, *actual.turns)):
        return "no tool calls on either side"
    return None


def with_strict_node_order(diff: CaseDiff, expected: Trace, actual: Trace) -> CaseDiff:
    """The diff with its node layer compared in the order the nodes ran (`strict_node_order`); node
    divergences never decide a verdict, so nothing else changes."""
    expected, actual = without_transfers(expected, actual.transfer_parents), without_transfers(actual, actual.transfer_parents)
    if not any(turn.nodes for turn in expected.turns):
        return diff
    turns = []
    for t, turn in enumerate(diff.turns):
        e = expected.turns[t].nodes if t < len(expected.turns) else ()
        a = actual.turns[t].nodes if t < len(actual.turns) else ()
        turns.append(dataclasses.replace(turn, nodes=tuple(diff_nodes(e, a, strict_order=True))))
    others = [d for d in diff.divergences if d.layer != "nodes"]
    divergences = sorted([*others, *(d for turn in turns for d in node_divergences(turn))], key=lambda d: (d.turn, d.seq, _LAYER_RANK[d.layer], d.row))
    layers = {status.layer: status for status in _layer_statuses(expected, actual, divergences)}
    return dataclasses.replace(diff, turns=tuple(turns), divergences=tuple(divergences),
                               layers=tuple(layers.get(status.layer, status) if status.layer == "nodes" else status for status in diff.layers),
                               criteria=dataclasses.replace(diff.criteria, strict_node_order=True))
