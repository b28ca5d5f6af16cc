"""What a fresh `agentdiff mcp` session knows before it runs anything: each case's newest verdict among
the kept runs (`agentdiff run`'s, the TUI's, earlier servers'), marked with when and what ran it, and
what each case's last live run cost, for the estimate of running it again."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from agentdiff.core.reports.estimate import Estimate, from_usages
from agentdiff.core.reports.kept_runs import kept_runs


@dataclass(frozen=True)
class KeptVerdict:
    status: str
    run: str  # the kept run's name (`compare` and `gate` take it)
    when: str  # when that run started, as its report says
    source: str  # what ran it: run, tui, mcp
    first_divergence: Optional[str] = None
    error: Optional[str] = None
    case: Optional[dict] = field(default=None, compare=False, repr=False)  # its entry in that run's report

    def said(self) -> dict[str, Any]:
        return {"run": self.run, "when": self.when, "by": self.source}


@dataclass
class Kept:
    verdicts: dict[str, KeptVerdict]
    live_costs: dict[str, tuple[Optional[float], dict]]  # case → (model calls, usage) of its newest live run

    def estimate(self, case_ids: Iterable[str], session_costs: Mapping[str, tuple[Optional[float], dict]],
                 prices: Optional[Mapping] = None) -> Estimate:
        """What running `case_ids` live would take: each case's last live run in this session, else in a
        kept run; a case that never ran live counts as unknown."""
        case_ids = list(case_ids)
        known = [cost for i in case_ids if (cost := session_costs.get(i) or self.live_costs.get(i)) is not None]
        return from_usages(len(case_ids), known, prices)


def _first(case: Mapping[str, Any]) -> Optional[str]:
    for layer in case.get("layers") or ():
        if isinstance(layer, dict) and isinstance(layer.get("first_divergence"), str):
            return layer["first_divergence"]
    return None


def read_kept(root: Path, case_ids: Iterable[str]) -> Kept:
    """The newest kept verdict and live cost of each of `case_ids` (newest runs first; unreadable runs
    are set aside as `compare` sets them aside)."""
    wanted = set(case_ids)
    verdicts: dict[str, KeptVerdict] = {}
    costs: dict[str, tuple[Optional[float], dict]] = {}
    for kept in kept_runs(root):
        if len(verdicts) == len(wanted) and len(costs) == len(wanted):
            break
        meta = kept.meta
        for case in kept.report.get("cases") or ():
            if not isinstance(case, dict) or case.get("id") not in wanted:
                continue
            case_id = case["id"]
            if case_id not in verdicts and isinstance(case.get("status"), str):
                error = case.get("error")
                verdicts[case_id] = KeptVerdict(case["status"], kept.name, str(meta.get("started") or "?"), str(meta.get("source") or "run"),
                                                _first(case), error if isinstance(error, str) else None, case)
            if case_id not in costs and case.get("mode") == "live" and case.get("model_calls") is not None:
                costs[case_id] = (case.get("model_calls"), case.get("usage") or {})
    return Kept(verdicts, costs)
