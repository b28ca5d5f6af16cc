"""What each case's last run took: seconds, tokens, tool calls and estimated cost, for the suite
view's slowest and most expensive cases and the detail's usage line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from agentdiff.core.run.case_run import CaseRun, measures
from agentdiff.core.run.usage import estimated_cost, total_tokens
from agentdiff.core.workbench.events import CaseState


@dataclass(frozen=True)
class CaseCost:
    case_id: str
    name: str
    status: str
    seconds: Optional[float]  # a run's mean over its repeats
    tokens: int  # every repeat's and every judge call's
    tool_calls: Optional[float]  # a run's mean over its repeats
    cost: Optional[float]  # US dollars, when every model that spent tokens has a price


def run_cost(run: CaseRun, prices: Mapping[str, Mapping[str, float]]) -> tuple[Optional[float], int, Optional[float], Optional[float]]:
    """(seconds, tokens, tool calls, cost) of a case's run."""
    if run.result.seconds is not None:  # the means over its repeats, as `measures` gives them (kept on its result)
        seconds, tools = run.result.seconds, run.result.tool_calls
    else:
        seconds, tools, _ = measures(run.outputs) if run.outputs else (None, None, None)
    usage = run.result.usage
    return seconds, total_tokens(usage), tools, estimated_cost(usage, prices) if prices else None


def case_costs(states: Iterable[CaseState], prices: Optional[Mapping[str, Mapping[str, float]]] = None) -> list[CaseCost]:
    out = []
    for state in states:
        if state.run is None:
            continue
        seconds, tokens, tools, cost = run_cost(state.run, prices or {})
        out.append(CaseCost(state.ref.id, state.ref.name, state.run.result.status.value, seconds, tokens, tools, cost))
    return out


def slowest(costs: Iterable[CaseCost], count: int = 10) -> list[CaseCost]:
    return sorted((c for c in costs if c.seconds is not None), key=lambda c: -(c.seconds or 0))[:count]


def most_expensive(costs: Iterable[CaseCost], count: int = 10) -> list[CaseCost]:
    """By cost when priced, else by tokens; cases that spent nothing are left out."""
    spent = [c for c in costs if c.tokens]
    return sorted(spent, key=lambda c: (-(c.cost or 0), -c.tokens))[:count]
