"""The node layer of an ADK 2 workflow: per turn, the node runs of both sides aligned by node path,
each pair compared on its route and its output; a node that ran in place of another is one row
(`node: refund_desk → status_desk`). Parallel branches are compared in branch order, not in the
order they happened to finish (`strict_order` keeps that order)."""

from __future__ import annotations

from typing import Optional, Sequence

from agentdiff.core.diff.model import NodeRow
from agentdiff.core.diff.sequence import align
from agentdiff.core.diff.tree import Change, diff_trees, pair_block
from agentdiff.core.traces.model import NodeStep
from agentdiff.core.traces.nodes import parallel_canonical


def _changes(expected: NodeStep, actual: NodeStep) -> tuple[Change, ...]:
    changes = list(diff_trees(expected.route, actual.route, ("route",)))
    if not (expected.message_output or actual.message_output):  # an LLM node's answer is the response layer's
        changes += diff_trees(expected.output if expected.has_output else None, actual.output if actual.has_output else None, ("output",))
    return tuple(changes)


def diff_nodes(expected: Sequence[NodeStep], actual: Sequence[NodeStep], strict_order: bool = False) -> list[NodeRow]:
    if not strict_order:
        expected, actual = parallel_canonical(expected), parallel_canonical(actual)
    rows: list[NodeRow] = []

    def pair(i: int, j: int) -> None:
        e, a = expected[i], actual[j]
        if e.path != a.path:
            rows.append(NodeRow("changed", i, j, e, a, (Change("changed", ("node",), ("node",), e.path, a.path),)))
            return
        changes = _changes(e, a)
        rows.append(NodeRow("changed" if changes else "same", i, j, e, a, changes))

    for tag, i1, i2, j1, j2 in align([s.path for s in expected], [s.path for s in actual]):
        if tag == "equal":
            for k in range(i2 - i1):
                pair(i1 + k, j1 + k)
            continue
        pending_deleted: list[int] = []
        for i, j in pair_block(expected[i1:i2], actual[j1:j2], key=lambda step: step.path):
            if i is not None and j is not None:
                pair(i1 + i, j1 + j)
            elif i is not None:
                pending_deleted.append(i1 + i)
            else:
                assert j is not None
                if pending_deleted:  # ran in place of a node that did not: one row, the node changed
                    pair(pending_deleted.pop(0), j1 + j)
                else:
                    rows.append(NodeRow("inserted", None, j1 + j, None, actual[j1 + j]))
        rows += [NodeRow("deleted", i, None, expected[i], None) for i in pending_deleted]
    return rows


def _route(route: object) -> str:
    """A route as written in the workflow's edges: `refund`, `["a", "b"]`, `none`."""
    from agentdiff.core.diff.model import short

    if route is None:
        return "none"
    return route if isinstance(route, str) and route.isprintable() and " " not in route else short(route, 30)


def node_summary(row: NodeRow) -> Optional[str]:
    """`route: classify refund → status`, `node: refund_desk → status_desk`, `extra node audit ran`,
    `node refund_desk did not run`, `merge output …`: one row's divergence, None when the same."""
    from agentdiff.core.diff.model import describe_change

    if row.kind == "inserted":
        return f"node {row.actual.path} ran (not in the baseline)" if row.actual else None
    if row.kind == "deleted":
        return f"node {row.expected.path} did not run" if row.expected else None
    if row.kind == "same" or row.expected is None or row.actual is None:
        return None
    first = row.changes[0]
    if first.path == ("node",):
        return f"node: {row.expected.path} → {row.actual.path}"
    if first.path[:1] == ("route",):
        return f"route: {row.expected.name} {_route(row.expected.route)} → {_route(row.actual.route)}"
    return f"{row.expected.name} {describe_change(first)}"
