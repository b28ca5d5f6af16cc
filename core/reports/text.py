"""Plain-text pieces shared by the reports: scores, and why a case did not pass."""

from __future__ import annotations

from typing import Optional, Sequence

from agentdiff.core.reports.judge_text import judge_lines
from agentdiff.core.reports.values import format_score, single_line  # noqa: F401 - the reports' words
from agentdiff.core.run.usage import estimated_cost, merge, total_tokens
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus, MetricResult


def case_problem(case: CaseResult) -> str:
    """What went wrong with a case, one finding a line ("" for a pass)."""
    if case.status is CaseStatus.PASSED:
        return ""
    lines: list[str] = []
    if case.error:
        lines.append(case.error)  # a report keeps an error's lines (a traceback); the command line shows it on one
    for metric in case.metrics:  # in config order
        if metric.status is MetricStatus.FAILED:
            lines.append(failing_metric_line(case, metric))
            lines += ["  " + single_line(line) for line in judge_lines(case, metric)]
        elif metric.status is MetricStatus.NOT_EVALUATED and case.status is not CaseStatus.NOT_EVALUATED:
            lines.append(single_line(f"{metric.name}: not evaluated ({metric.reason})"))
    if case.status is CaseStatus.ERROR:
        return "\n".join(lines) or case.status.value  # an error is its own explanation: no diff summary
    for layer in case.layers:
        if layer.status == "changed" and layer.first_divergence:
            lines.append(single_line(f"{layer.layer}: {layer.first_divergence}"))
    return "\n".join(lines) or case.status.value


def failing_metric_lines(case: CaseResult) -> list[str]:
    """Each failing metric with its worst turn, e.g.
    `response_match_score: 0.58 < threshold 0.7 · worst turn 3: 0.0`."""
    return [failing_metric_line(case, metric) for metric in case.metrics if metric.status is MetricStatus.FAILED]


def failing_metric_line(case: CaseResult, metric: MetricResult) -> str:
    return f"{single_line(metric.name)}: {format_score(metric.score)} < threshold {format_score(metric.threshold)}" + _worst_turn(case, metric)


def _worst_turn(case: CaseResult, metric: MetricResult) -> str:
    """` · worst turn N: score` (with the run when several were scored), "" when no turn has a score.
    Every gating metric ADK scores per turn is higher-is-better, so the worst is the lowest."""
    scored_runs = [run for run in case.runs if run.error is None]
    per_run: list[tuple[Optional[float], ...]] = []
    if scored_runs:
        for run in scored_runs:
            evaluation = next((e for e in run.metrics if e.name == metric.name), None)
            per_run.append(tuple(p.score for p in evaluation.per_invocation) if evaluation else ())
    else:  # results read back without their runs: the per-invocation scores of the one run
        per_run.append(metric.per_invocation)
    found = [(score, r, t) for r, scores in enumerate(per_run) for t, score in enumerate(scores) if score is not None]
    if not found:
        return ""
    score, run, turn = min(found)
    where = f"turn {turn + 1}" + (f" of run {run + 1}" if len(per_run) > 1 else "")
    return f" · worst {where}: {format_score(score)}"


def usage_line(cases: Sequence[CaseResult], prices=None) -> str:
    """`tokens: 12,345 agent + 2,100 judge · est. cost $0.0123` ("" when no call spent any)."""
    usage = merge([case.usage for case in cases])
    agent, judge = total_tokens(usage, "agent"), total_tokens(usage, "judge")
    if not agent and not judge and "judge" not in usage:
        return ""
    line = f"tokens: {agent:,} agent" + (f" + {judge:,} judge" if judge else " + judge answers from the cache" if "judge" in usage else "")
    cost = estimated_cost(usage, prices) if prices else None
    if cost is not None:
        line += f" · est. cost ${cost:.4f}"
    elif prices:
        unpriced = sorted(m for models in usage.values() for m in models if m not in prices)
        line += f" · no price for {', '.join(unpriced)}"
    return line
