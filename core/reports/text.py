"""Plain-text pieces shared by the reports: scores, and why a case did not pass."""

from __future__ import annotations

from typing import Optional

from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus


def format_score(score: Optional[float]) -> str:
    if score is None:
        return "n/a"
    return f"{score:.4f}".rstrip("0").rstrip(".") if score != int(score) else f"{score:.1f}"


def case_problem(case: CaseResult) -> str:
    """What went wrong with a case, one finding a line ("" for a pass)."""
    if case.status is CaseStatus.PASSED:
        return ""
    lines: list[str] = []
    if case.error:
        lines.append(case.error)
    for metric in case.metrics:
        if metric.status is MetricStatus.FAILED:
            lines.append(f"{metric.name}: {format_score(metric.score)} < threshold {format_score(metric.threshold)}")
        elif metric.status is MetricStatus.NOT_EVALUATED and case.status is not CaseStatus.NOT_EVALUATED:
            lines.append(f"{metric.name}: not evaluated ({metric.reason})")
    for layer in case.layers:
        if layer.status == "changed" and layer.first_divergence:
            lines.append(f"{layer.layer}: {layer.first_divergence}")
    return "\n".join(lines) or case.status.value
