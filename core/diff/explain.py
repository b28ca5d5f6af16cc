"""Which divergence a case leads with, so the explanation is true.

* A scored case that failed leads with the earliest divergence that makes a failing metric fail:
  for `response_match_score`, the response of the first turn whose ROUGE-1 is below the threshold;
  for `tool_trajectory_avg_score`, the first tool-call row that counts against the match type in
  the first turn whose trajectory fails. Which turns fail is read off the shown repeat's own
  per-invocation verdicts (ADK's), not recomputed here.
* A replay that failed leads with its first counted request, tool-call or session divergence.
* Otherwise (a pass, or a failure of a metric no layer explains) the first counted divergence
  leads, else none is chosen and `CaseDiff.first_divergence` stays the earliest one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional, Sequence

from agentdiff.core.diff.model import CaseDiff, Divergence, Layer, LayerStatus
from agentdiff.core.formats.eval_config import RESPONSE_MATCH, TOOL_TRAJECTORY
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import MetricResult, RunRecord

METRIC_LAYERS: dict[str, Layer] = {RESPONSE_MATCH: "response", TOOL_TRAJECTORY: "tool_calls"}
REPLAY_LAYERS: tuple[Layer, ...] = ("request", "tool_calls", "session")


def failing_turns(metrics: Sequence[MetricResult], record: Optional[RunRecord]) -> dict[str, frozenset[int]]:
    """Per failing metric (over all repeats), the turns of the shown repeat on which it failed."""
    out: dict[str, frozenset[int]] = {}
    for metric in metrics:
        if metric.status is not MetricStatus.FAILED:
            continue
        evaluation = next((e for e in record.metrics if e.name == metric.name), None) if record else None
        if evaluation is not None:
            out[metric.name] = frozenset(i for i, p in enumerate(evaluation.per_invocation) if p.status is MetricStatus.FAILED)
        else:
            out[metric.name] = frozenset()
    return out


def metric_lead(diff: CaseDiff, failing: Mapping[str, frozenset[int]]) -> Optional[Divergence]:
    """The earliest divergence that makes a failing metric fail (see the module's docstring)."""
    for divergence in diff.divergences:
        for name, turns in failing.items():
            if METRIC_LAYERS.get(name) != divergence.layer or divergence.turn not in turns:
                continue
            # a turn has one response divergence; a failing trajectory's counted rows are its reasons
            if divergence.layer == "response" or divergence.counts:
                return divergence
    return None


def first_counted(diff: CaseDiff, layers: Sequence[Layer] = ("request", "tool_calls", "response", "session")) -> Optional[Divergence]:
    return next((d for d in diff.divergences if d.counts and d.layer in layers), None)


def with_lead(diff: CaseDiff, lead: Optional[Divergence]) -> CaseDiff:
    """The diff leading with `lead`: its `first_divergence`, and the summary of the lead's layer."""
    if lead is None or lead is diff.lead:
        return diff
    layers = []
    for status in diff.layers:
        if status.layer == lead.layer and status.count:
            more = f" (+{status.count - 1} more)" if status.count > 1 else ""
            status = LayerStatus(status.layer, status.status, status.count, lead.summary + more, status.reason)
        layers.append(status)
    return replace(diff, layers=tuple(layers), lead=lead)


def explain_scored(diff: CaseDiff, metrics: Sequence[MetricResult], record: Optional[RunRecord]) -> CaseDiff:
    """A scored case's diff leading with what made it fail (unchanged when nothing failed)."""
    failing = failing_turns(metrics, record)
    if not failing:
        return diff
    return with_lead(diff, metric_lead(diff, failing) or first_counted(diff))


def explain_replay(diff: CaseDiff) -> CaseDiff:
    """A replay's diff leading with its first counted request, tool-call or session divergence."""
    return with_lead(diff, first_counted(diff, REPLAY_LAYERS))
