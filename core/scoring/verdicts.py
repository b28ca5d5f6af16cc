"""Scoring a case: every metric on every run, the runs aggregated, and the verdict.

* One run is scored as ADK's LocalEvalService scores it (`adk eval`): each metric's overall score
  is the mean of its per-invocation scores, and the verdict walks the metrics in config order —
  a FAILED metric fails the case, a PASSED one passes it, NOT_EVALUATED and INFORMATIONAL ones are
  skipped; a case with no gating metric scored is NOT_EVALUATED.
* Several runs of one case (`num_runs`) are aggregated as AgentEvaluator does: per metric, the
  mean of *all* per-invocation scores of *all* runs, compared inclusively with the threshold.
  When the runs' own verdicts disagree the case is FLAKY.
"""

from __future__ import annotations

import statistics
from typing import Any, Iterable, Mapping, Optional, Sequence

from agentdiff.core.formats.adk_rules import RULES_NEWEST, AdkRules
from agentdiff.core.formats.eval_config import EvalMetric
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.scoring.metrics import (
    MetricEvaluation,
    MetricStatus,
    evaluate_metric,
)
from agentdiff.core.scoring.results import CaseStatus, MetricResult, RunRecord


def final_status(statuses: Iterable[MetricStatus]) -> CaseStatus:
    status = CaseStatus.NOT_EVALUATED
    for metric_status in statuses:
        if metric_status is MetricStatus.PASSED:
            status = CaseStatus.PASSED
        elif metric_status is MetricStatus.FAILED:
            return CaseStatus.FAILED
    return status


def score_run(
    metrics: Sequence[EvalMetric], actual: Sequence[Invocation], expected: Optional[Sequence[Invocation]],
    rules: AdkRules = RULES_NEWEST, judged: Optional[Mapping[str, Any]] = None,
) -> RunRecord:
    evaluations = tuple(evaluate_metric(metric, actual, expected, rules, judged) for metric in metrics)
    return RunRecord(
        actual=tuple(actual),
        expected=tuple(expected) if expected is not None else None,
        metrics=evaluations,
        status=final_status(e.status for e in evaluations),
    )


def failed_run(actual: Sequence[Invocation], expected: Optional[Sequence[Invocation]], error: str) -> RunRecord:
    """A run that produced no metric results (the agent raised, hung or could not load)."""
    return RunRecord(
        actual=tuple(actual),
        expected=tuple(expected) if expected is not None else None,
        status=CaseStatus.ERROR,
        error=error,
    )


def _single(evaluation: MetricEvaluation) -> MetricResult:
    return MetricResult(
        name=evaluation.name,
        score=evaluation.score,
        threshold=evaluation.metric.threshold,
        status=evaluation.status,
        per_invocation=tuple(p.score for p in evaluation.per_invocation),
        reason=evaluation.reason,
        criterion=evaluation.metric.criterion,
        details=evaluation.details,
    )


def _across_runs(evaluations: Sequence[MetricEvaluation]) -> MetricResult:
    first = evaluations[0]
    metric = first.metric
    entries = [p for e in evaluations for p in e.per_invocation]
    scores = [p.score for p in entries if p.score is not None]
    overall = statistics.mean(scores) if scores else None
    reason = next((e.reason for e in evaluations if e.reason), None)
    per_invocation = tuple(p.score for p in entries)
    informational = (entries[0].status if entries else first.status) is MetricStatus.INFORMATIONAL or (
        metric.criterion is None and metric.threshold is None
    )
    if informational:
        status = MetricStatus.INFORMATIONAL
    elif overall is None:
        status = MetricStatus.NOT_EVALUATED
        reason = reason or "no score was produced"
    else:
        threshold = metric.criterion_threshold()
        # Which way the metric points, read off the runs' own (score, status) pairs; ">=" unless
        # they all agree otherwise (AgentEvaluator's rule, for metrics where lower is better).
        directions = {
            (p.score > threshold) == (p.status is MetricStatus.PASSED)
            for p in entries
            if p.score is not None and p.score != threshold and p.status in (MetricStatus.PASSED, MetricStatus.FAILED)
        }
        higher_is_better = directions.pop() if len(directions) == 1 else True
        passed = overall >= threshold if higher_is_better else overall <= threshold
        status = MetricStatus.PASSED if passed else MetricStatus.FAILED
    return MetricResult(
        name=first.name,
        score=overall,
        threshold=metric.threshold,
        status=status,
        per_invocation=per_invocation,
        reason=reason if status is MetricStatus.NOT_EVALUATED else None,
        criterion=metric.criterion,
    )


def aggregate(runs: Sequence[RunRecord]) -> tuple[MetricResult, ...]:
    """Per metric (in config order), the result over all scored runs."""
    scored = [run for run in runs if run.error is None]
    if not scored:
        return ()
    if len(scored) == 1:
        return tuple(_single(e) for e in scored[0].metrics)
    by_name: dict[str, list[MetricEvaluation]] = {}
    for run in scored:
        for evaluation in run.metrics:
            by_name.setdefault(evaluation.name, []).append(evaluation)
    return tuple(_across_runs(evaluations) for evaluations in by_name.values())


def case_verdict(runs: Sequence[RunRecord], metrics: Sequence[MetricResult]) -> tuple[CaseStatus, Optional[str]]:
    """The case's status and, when it is not a plain pass or fail, why."""
    errors = [run.error for run in runs if run.error is not None]
    if errors:
        prefix = "" if len(errors) == len(runs) == 1 else f"{len(errors)} of {len(runs)} runs failed: "
        return CaseStatus.ERROR, prefix + errors[0]
    verdicts = {run.status for run in runs}
    if len(runs) > 1 and {CaseStatus.PASSED, CaseStatus.FAILED} <= verdicts:
        passed = sum(run.status is CaseStatus.PASSED for run in runs)
        return CaseStatus.FLAKY, f"{passed} of {len(runs)} runs passed"
    status = final_status(m.status for m in metrics)
    if status is CaseStatus.NOT_EVALUATED:
        reasons = [f"{m.name}: {m.reason}" for m in metrics if m.status is MetricStatus.NOT_EVALUATED and m.reason]
        return status, "; ".join(reasons) or "no metric could produce a score"
    return status, None
