"""What a fresh `agentdiff mcp` session knows before it runs anything: each case's newest verdict among
the kept runs (`agentdiff run`'s, the TUI's, earlier servers'), marked with when and what ran it, and
what each case's last live run cost, for the estimate of running it again."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from agentdiff.core.reports.estimate import Estimate, from_usages
from agentdiff.core.reports.kept_runs import kept_runs


@dataclass(frozen=True)
class KeptVerdict:
    status: str
    run: str  # the kept run's name (`compare` and `gate` take it)
    run_started: str  # when that run started, as its report says
    source: str  # what ran it: run, tui, mcp
    first_divergence: Optional[str] = None
    error: Optional[str] = None
    case: Optional[dict] = field(default=None, compare=False, repr=False)  # its entry in that run's report
    changed: Optional[str] = None  # a file it read (or its own) changed since that run: the verdict may be stale

    def said(self) -> dict[str, Any]:
        return {"run": self.run, "run_started": self.run_started, "by": self.source,
                **({"changed_since": self.changed} if self.changed else {})}


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


def _started(meta: Mapping[str, Any]) -> Optional[float]:
    try:
        return datetime.strptime(str(meta.get("started")), "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except ValueError:
        return None


def _changed(root: Path, files: Iterable[str], since: Optional[float]) -> Optional[str]:
    """The first of `files` (the project's, as a report shows them) changed after `since`, or gone."""
    for file in files:
        try:
            if since is None or (root / file).stat().st_mtime >= since + 1:  # the report's start is to the second
                return file
        except OSError:
            return file
    return None


def read_kept(root: Path, sources: Mapping[str, str]) -> Kept:
    """The newest kept verdict and live cost of each case of `sources` (case id → the file it is read from;
    newest runs first; unreadable runs are set aside as `compare` sets them aside). A verdict whose case
    file, or a file its agent read in that run, changed since the run is marked `changed`."""
    wanted = set(sources)
    verdicts: dict[str, KeptVerdict] = {}
    costs: dict[str, tuple[Optional[float], dict]] = {}
    for kept in kept_runs(root):
        if len(verdicts) == len(wanted) and len(costs) == len(wanted):
            break
        meta = kept.meta
        started = _started(meta)
        read = meta.get("files_read") if isinstance(meta.get("files_read"), dict) else {}
        for case in kept.report.get("cases") or ():
            if not isinstance(case, dict) or case.get("id") not in wanted:
                continue
            case_id = case["id"]
            if case_id not in verdicts and isinstance(case.get("status"), str):
                error = case.get("error")
                files = [sources[case_id], *(f for f in read.get(case_id) or () if isinstance(f, str))]
                verdicts[case_id] = KeptVerdict(case["status"], kept.name, str(meta.get("started") or "?"), str(meta.get("source") or "run"),
                                                _first(case), error if isinstance(error, str) else None, case, _changed(root, files, started))
            if case_id not in costs and case.get("mode") == "live" and case.get("model_calls") is not None:
                costs[case_id] = (case.get("model_calls"), case.get("usage") or {})
    return Kept(verdicts, costs)
