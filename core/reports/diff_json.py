"""One case's layered diff as JSON: the schema of `docs/diff-json.md`."""

from __future__ import annotations

import json
import math
from typing import Any, Optional

from agentdiff.core import __version__
from agentdiff.core.diff.model import CaseDiff, Divergence, NodeRow, SourceLocation, ToolCallRow
from agentdiff.core.diff.tree import Change, render_path
from agentdiff.core.traces.model import NodeStep, ToolCall

SCHEMA_VERSION = 1


def _change(change: Change) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": change.kind, "path": render_path(change.path)}
    if change.actual_path != change.path:
        out["actual_path"] = render_path(change.actual_path)
    if change.kind != "added":
        out["expected"] = change.expected
    if change.kind != "removed":
        out["actual"] = change.actual
    if change.words is not None:
        out["words"] = [[op.op, op.text] for op in change.words]
    return out


def _source(source: Optional[SourceLocation]) -> Optional[dict[str, Any]]:
    if source is None:
        return None
    return {"file": source.file, "line": source.line, "column": source.column, "path": source.path}


def divergence_to_dict(divergence: Divergence) -> dict[str, Any]:
    return {
        "layer": divergence.layer,
        "turn_index": divergence.turn,
        "index": divergence.index,
        "path": divergence.path,
        "kind": divergence.kind,
        "summary": divergence.summary,
        "expected": divergence.expected,
        "actual": divergence.actual,
        "counts": divergence.counts,
        "source": _source(divergence.source),
    }


def _call(call: Optional[ToolCall]) -> Optional[dict[str, Any]]:
    if call is None:
        return None
    out: dict[str, Any] = {"name": call.name, "args": call.args}
    if call.agent:
        out["agent"] = call.agent
    if call.has_response:
        out["response"] = call.response
    if call.simulated:
        out["simulated"] = True  # answered without the tool running
    return out


def _row(row: ToolCallRow) -> dict[str, Any]:
    return {
        "kind": row.kind,
        "expected_index": row.expected_index,
        "actual_index": row.actual_index,
        "expected": _call(row.expected),
        "actual": _call(row.actual),
        "changes": [_change(c) for c in row.changes],
        "response_changes": [_change(c) for c in row.response_changes],
        "counts": row.counts,
    }


def diff_to_dict(diff: CaseDiff, case: Optional[dict[str, Any]] = None, actual_source: Optional[str] = None) -> dict[str, Any]:
    turns = []
    for turn in diff.turns:
        response = turn.response
        turns.append(
            {
                "turn_index": turn.index,
                "user_text": turn.user_text,
                "missing": turn.missing,
                "request": [
                    {
                        "agent": row.agent,
                        "index": row.index,
                        "kind": row.kind,
                        "changes": [_change(c) for c in row.changes],
                        "notes": list(row.notes),
                    }
                    for row in turn.requests
                ],
                "tool_calls": {"matches": turn.trajectory_matches, "rows": [_row(row) for row in turn.tool_calls]},
                **({"nodes": {"rows": [_node_row(row) for row in turn.nodes], "ran": [_step(step) for step in turn.actual_nodes]}}
                   if turn.nodes or turn.actual_nodes else {}),
                "response": None
                if response is None
                else {
                    "expected": response.expected,
                    "actual": response.actual,
                    "score": response.score,
                    "threshold": response.threshold,
                    "passed": response.passed,
                    "words": [[op.op, op.text] for op in response.words],
                    "expected_intermediate": [{"author": r.author, "text": r.text} for r in response.expected_intermediate],
                    "actual_intermediate": [{"author": r.author, "text": r.text} for r in response.actual_intermediate],
                    **({"expected_workflow_output": response.expected_output, "actual_workflow_output": response.actual_output}
                       if any(response.has_output) else {}),
                },
            }
        )
    session = None
    if diff.session is not None:
        session = {
            "changes": [_change(c) for c in diff.session.changes],
            "events": [
                {
                    "kind": row.kind,
                    "expected_index": row.expected_index,
                    "actual_index": row.actual_index,
                    "turn_index": row.turn,
                    "author": row.author,
                    "changes": [_change(c) for c in row.changes],
                }
                for row in diff.session.events
            ],
        }
    first = diff.first_divergence
    return {
        "schema_version": SCHEMA_VERSION,
        "agentdiff_version": __version__,
        "case": case or {"id": diff.case_id},
        "actual_source": actual_source,
        "criteria": {
            "match_type": diff.criteria.match_type.name,
            "ignore_args": diff.criteria.ignore_args,
            "response_threshold": diff.criteria.response_threshold,
            "trajectory_judged": diff.criteria.trajectory_judged,
        },
        "same": diff.unchanged,
        "error": diff.error,
        "first_divergence": divergence_to_dict(first) if first else None,
        "layers": [
            {"layer": s.layer, "status": s.status, "count": s.count, "summary": s.summary, "reason": s.reason}
            for s in diff.layers
        ],
        "divergences": [divergence_to_dict(d) for d in diff.divergences],
        "turns": turns,
        "session": session,
    }


def _step(step: Optional[NodeStep]) -> Optional[dict[str, Any]]:
    if step is None:
        return None
    out: dict[str, Any] = {"path": step.path, "run": step.run, "route": step.route, "branch": step.branch}
    if step.has_output:
        out["output"] = step.output
    return out


def _node_row(row: NodeRow) -> dict[str, Any]:
    return {"kind": row.kind, "expected_index": row.expected_index, "actual_index": row.actual_index,
            "expected": _step(row.expected), "actual": _step(row.actual), "changes": [_change(c) for c in row.changes]}


def render_diff_json(diff: CaseDiff, case: Optional[dict[str, Any]] = None, actual_source: Optional[str] = None,
                     more: Optional[dict[str, Any]] = None) -> str:
    """The document; `more`: keys added at its end (a repeated case's `variants`)."""
    return json.dumps(json_safe({**diff_to_dict(diff, case, actual_source), **(more or {})}), indent=2, ensure_ascii=False, default=str, allow_nan=False) + "\n"


def json_safe(value: Any) -> Any:
    """`value` with the floats JSON has no words for (NaN, ±Infinity, which an eval set's args may
    hold) written as the strings Python reads them from, so the document is standard JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value
