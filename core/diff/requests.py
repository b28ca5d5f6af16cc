"""The request layer: each LLM call paired with the recorded one of the same agent and index (as
ADK's replay pairs them), both normalised as ADK's replay compares them, then diffed by path."""

from __future__ import annotations

from typing import Sequence

from agentdiff.core.diff.model import (
    RequestRow,
)
from agentdiff.core.diff.request_normalize import diff_requests as compare_requests
from agentdiff.core.traces.model import (
    LlmExchange,
)


def diff_requests(expected: Sequence[LlmExchange], actual: Sequence[LlmExchange]) -> list[RequestRow]:
    by_agent_e: dict[str, list[LlmExchange]] = {}
    by_agent_a: dict[str, list[LlmExchange]] = {}
    for ex in expected:
        by_agent_e.setdefault(ex.agent, []).append(ex)
    for ex in actual:
        by_agent_a.setdefault(ex.agent, []).append(ex)
    rows: list[RequestRow] = []
    for agent in list(dict.fromkeys([*by_agent_e, *by_agent_a])):
        exp, act = by_agent_e.get(agent, []), by_agent_a.get(agent, [])
        for k in range(max(len(exp), len(act))):
            e = exp[k] if k < len(exp) else None
            a = act[k] if k < len(act) else None
            seq = min(x.seq for x in (e, a) if x is not None)
            if e is None:
                rows.append(RequestRow("inserted", agent, k, seq, None, a))
            elif a is None:
                rows.append(RequestRow("deleted", agent, k, seq, e, None))
            else:
                changes = tuple(compare_requests(e.request or {}, a.request or {}))
                rows.append(RequestRow("changed" if changes else "same", agent, k, seq, e, a, changes))
    rows.sort(key=lambda row: row.seq)
    return rows
