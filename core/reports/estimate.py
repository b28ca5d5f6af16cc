"""Before a costly re-run: the model calls, tokens and cost a set of cases took the last time they
ran live (the workbench's last results, or the kept runs), so many live runs are not started blind."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from agentdiff.core.reports.kept_runs import kept_runs
from agentdiff.core.run.usage import estimated_cost, merge, total_tokens


@dataclass(frozen=True)
class Estimate:
    cases: int  # to run
    known: int  # of them, with an earlier live run to go by
    model_calls: float
    tokens: int
    cost: Optional[float]  # None without prices, or with a model that has none

    def line(self) -> str:
        if not self.known:
            return f"{self.cases} case(s) to run live; none ran live before, so their cost is unknown"
        said = f"≈ {self.model_calls:,.0f} model calls, {self.tokens:,} tokens"
        if self.cost is not None:
            said += f", est. ${self.cost:.2f}"
        unknown = self.cases - self.known
        return (f"{self.cases} case(s) to run live: {said} (from the last live run of {self.known}"
                + (f"; {unknown} never ran live" if unknown else "") + ")")


def from_usages(count: int, known: Sequence[tuple[Optional[float], dict]], prices: Optional[Mapping] = None) -> Estimate:
    """`count` cases, of which `known` are each one's (model calls, usage) of its last live run."""
    usage = merge([u for _, u in known])
    calls = sum(c or 0 for c, _ in known)
    return Estimate(count, len(known), calls, total_tokens(usage), estimated_cost(usage, prices) if prices else None)


def from_results(results: Iterable[Optional[Any]], prices: Optional[Mapping] = None) -> Estimate:
    """From each case's last result (None: never ran); only live results count."""
    results = list(results)
    known = [(r.model_calls, r.usage) for r in results if r is not None and r.mode == "live" and r.model_calls is not None]
    return from_usages(len(results), known, prices)


def from_kept(root: Path, case_ids: Sequence[str], prices: Optional[Mapping] = None) -> Estimate:
    """From the newest kept run in which each case ran live."""
    wanted, found = set(case_ids), {}
    for run in kept_runs(root):
        if len(found) == len(wanted):
            break
        for case in run.report["cases"]:
            if isinstance(case, dict) and case.get("id") in wanted and case.get("id") not in found and case.get("mode") == "live" \
                    and case.get("model_calls") is not None:
                found[case["id"]] = (case.get("model_calls"), case.get("usage") or {})
    return from_usages(len(wanted), list(found.values()), prices)
