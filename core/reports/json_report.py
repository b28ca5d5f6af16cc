"""The JSON report: the documented, stable schema of `docs/json-report.md`."""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from agentdiff.core import __version__
from agentdiff.core.scoring.results import CaseResult, MetricResult, summarize

SCHEMA_VERSION = 1


def _metric(metric: MetricResult) -> dict[str, Any]:
    return {
        "name": metric.name,
        "score": metric.score,
        "threshold": metric.threshold,
        "status": metric.status.value,
        "per_invocation": list(metric.per_invocation),
        "reason": metric.reason,
        "criterion": metric.criterion,
        "details": metric.details,
    }


def case_to_dict(case: CaseResult) -> dict[str, Any]:
    return {
        "id": case.id,
        "source": case.source,
        "eval_set_id": case.eval_set_id,
        "eval_id": case.eval_id,
        "agent": case.agent,
        "mode": case.mode,
        "status": case.status.value,
        "metrics": [_metric(m) for m in case.metrics],
        "layers": [
            {"layer": layer.layer, "status": layer.status, "first_divergence": layer.first_divergence}
            for layer in case.layers
        ],
        "error": case.error,
        "runs": len(case.runs),
        "scored_as": case.scored_as,
    }


def report_dict(cases: Sequence[CaseResult], agents_python: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """The report; `agents_python` (what ran the agents: python, interpreter, chosen_by, adk) when known."""
    summary = summarize(cases)
    return {
        "schema_version": SCHEMA_VERSION,
        "agentdiff_version": __version__,
        **({"agents_python": agents_python} if agents_python is not None else {}),
        "cases": [case_to_dict(case) for case in cases],
        "summary": {
            "passed": summary.passed,
            "failed": summary.failed,
            "error": summary.error,
            "not_evaluated": summary.not_evaluated,
            "flaky": summary.flaky,
            "total": summary.total,
        },
    }


def render_json(cases: Sequence[CaseResult], agents_python: Optional[dict[str, Any]] = None) -> str:
    return json.dumps(report_dict(cases, agents_python), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
