"""Computing one metric over one run of a case, as ADK's evaluators do (those of the version whose
`AdkRules` are given; ADK 2.13's by default).

A metric that cannot be computed (unknown name, bad criterion, a threshold on an efficiency
metric, a judge model needed, no expected invocations) is NOT_EVALUATED with the reason, never
a failure and never a crash, as in ADK's LocalEvalService.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Mapping, Optional, Sequence

from agentdiff.core.formats import eval_config as names
from agentdiff.core.formats.adk_rules import RULES_NEWEST, AdkRules
from agentdiff.core.formats.eval_config import EvalMetric, ToolTrajectoryCriterion
from agentdiff.core.formats.eval_set import Invocation, InvocationEvents
from agentdiff.core.formats.genai_types import content_text
from agentdiff.core.formats.usage import TOKEN_FIELDS, token_usage
from agentdiff.core.scoring.rouge import rouge1
from agentdiff.core.scoring.trajectory import trajectory_matches
from pydantic import ValidationError


class MetricStatus(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_EVALUATED = "not_evaluated"
    INFORMATIONAL = "informational"


@dataclass(frozen=True, slots=True)
class InvocationScore:
    score: Optional[float]
    status: MetricStatus
    details: Optional[dict[str, Any]] = None


@dataclass(frozen=True, slots=True)
class MetricEvaluation:
    """One metric computed over one run: overall and per invocation."""

    metric: EvalMetric
    score: Optional[float]
    status: MetricStatus
    per_invocation: tuple[InvocationScore, ...] = ()
    reason: Optional[str] = None  # why it was not evaluated
    details: Optional[dict[str, Any]] = field(default=None)

    @property
    def name(self) -> str:
        return self.metric.metric_name


class MetricNotEvaluated(Exception):
    """The metric cannot produce a score here; the message says why."""


def evaluate_metric(
    metric: EvalMetric, actual: Sequence[Invocation], expected: Optional[Sequence[Invocation]], rules: AdkRules = RULES_NEWEST,
    judged: Optional[Mapping[str, Any]] = None,
) -> MetricEvaluation:
    """`judged`: what ADK's evaluators made of this run's judged metrics, in the worker (see
    `core/run/judging.py`); a judged metric without it is NOT_EVALUATED."""
    try:
        judged_here = names.JUDGE_METRICS | names.VERTEX_METRICS
        if metric.metric_name in judged_here and judged is not None and (metric.metric_name in judged or "error" in judged):
            return judged_evaluation(metric, judged, len(actual))
        return _evaluate(metric, actual, expected, rules)
    except (MetricNotEvaluated, ValueError) as exc:
        placeholders = tuple(InvocationScore(None, MetricStatus.NOT_EVALUATED) for _ in actual)
        return MetricEvaluation(metric, None, MetricStatus.NOT_EVALUATED, placeholders, reason=str(exc))


def _evaluate(metric: EvalMetric, actual: Sequence[Invocation], expected: Optional[Sequence[Invocation]], rules: AdkRules) -> MetricEvaluation:
    name = metric.metric_name
    if name in names.EFFICIENCY_METRICS and not rules.efficiency_metrics:
        raise MetricNotEvaluated(f"unknown metric `{name}` (the efficiency metrics arrived in ADK 2.10; this is {rules.label})")
    if name in names.EFFICIENCY_METRICS:
        if metric.threshold is not None or metric.criterion is not None:
            raise MetricNotEvaluated(
                f"`{name}` does not support a threshold: it reports a value and never passes or fails; "
                "remove it from `criteria` (it is reported on every eval)"
            )
        return _EFFICIENCY[name](metric, actual)
    if name == names.TOOL_TRAJECTORY:
        return _tool_trajectory(metric, actual, expected, rules)
    if name == names.RESPONSE_MATCH:
        return _response_match(metric, actual, expected, rules)
    if metric.custom_function_path:
        raise MetricNotEvaluated(f"custom metric `{name}` ({metric.custom_function_path}) is not run by agentdiff")
    if name in names.JUDGE_METRICS:
        raise MetricNotEvaluated(f"`{name}` is scored by a judge model, and this run was not judged")
    if name in names.VERTEX_METRICS:
        raise MetricNotEvaluated(
            f"`{name}` is computed by Vertex AI's evaluation service: set GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION "
            "and Google Cloud credentials (`gcloud auth application-default login`, or GOOGLE_APPLICATION_CREDENTIALS)"
        )
    raise MetricNotEvaluated(f"unknown metric `{name}`")


def judged_evaluation(metric: EvalMetric, judged: Mapping[str, Any], invocations: int) -> MetricEvaluation:
    """A judged metric's result as the worker sent it: ADK's scores and statuses, with the judge's
    reasons (rubric rationales, each sample's answer) kept as details."""
    if "error" in judged:
        raise MetricNotEvaluated(f"the judge could not run: {judged['error']}")
    data = judged.get(metric.metric_name)
    if data is None:
        raise MetricNotEvaluated(f"`{metric.metric_name}` was not judged")
    status = MetricStatus(data["status"])
    per_invocation = tuple(
        InvocationScore(p.get("score"), MetricStatus(p.get("status", "not_evaluated")),
                        {"rubric_scores": p.get("rubric_scores") or [], "samples": p.get("samples") or []})
        for p in data.get("per_invocation") or []
    )
    if status not in (MetricStatus.NOT_EVALUATED, MetricStatus.INFORMATIONAL) and len(per_invocation) != invocations:
        raise MetricNotEvaluated(f"the judge returned {len(per_invocation)} results for {invocations} invocations")
    if len(per_invocation) != invocations:  # as ADK: results that cannot be aligned are empty placeholders
        per_invocation = tuple(InvocationScore(None, MetricStatus.NOT_EVALUATED) for _ in range(invocations))
    reason = _NOT_APPLICABLE.get(str(data.get("reason") or ""), data.get("reason"))
    if status is MetricStatus.NOT_EVALUATED and not reason:
        reason = _unscored_reason(data)
    details = {key: data[key] for key in ("rubric_scores", "calls", "judge_calls", "cache_hits", "prompt_tokens", "output_tokens")
               if data.get(key) not in (None, [])}
    return MetricEvaluation(metric, data.get("score"), status, per_invocation, reason=reason if status is MetricStatus.NOT_EVALUATED else None,
                            details={"judge": details, "per_invocation": [p.details or {} for p in per_invocation]})


#: ADK's way of saying a judged metric does not apply to a case, said plainly.
_NOT_APPLICABLE = {
    "ValueError: conversation_scenario is needed by this metric.": "applies only to conversation_scenario cases",
    "ValueError: expected_invocations is needed by this metric.": "needs expected turns; a simulated conversation has none",
}


def _unscored_reason(data: Mapping[str, Any]) -> str:
    """Why a judged metric has no score: the judge's calls failed, or its answers were not in the form
    ADK reads (with the first answer, so the user sees what the judge said)."""
    samples = [s for p in data.get("per_invocation") or [] for s in p.get("samples") or []]
    calls = [c for c in data.get("calls") or []]
    answers = [s.get("text") for s in samples if s.get("text")] + [c.get("text") for c in calls if c.get("text")]
    if answers:
        first = " ".join(str(answers[0]).split())
        first = first if len(first) <= 120 else first[:119] + "…"
        return f"the judge's answers were not in the form ADK reads (the first: {first!r})"
    return "the judge produced no score (every judge call failed, or none was made)"


def _paired(metric: EvalMetric, actual: Sequence[Invocation], expected: Optional[Sequence[Invocation]]) -> Sequence[Invocation]:
    if expected is None:
        raise MetricNotEvaluated(f"`{metric.metric_name}` needs expected invocations (the case has none)")
    if len(actual) != len(expected):
        raise MetricNotEvaluated(
            f"actual and expected invocations must have the same length; got {len(actual)} and {len(expected)}"
        )
    return expected


def _gate(score: float, threshold: float) -> MetricStatus:
    return MetricStatus.PASSED if score >= threshold else MetricStatus.FAILED


def _scored(metric: EvalMetric, scores: list[float], threshold: float) -> MetricEvaluation:
    per_invocation = tuple(InvocationScore(score, _gate(score, threshold)) for score in scores)
    if not scores:
        return MetricEvaluation(metric, None, MetricStatus.NOT_EVALUATED, (), reason="the case has no invocations")
    total = 0.0
    for score in scores:  # summed in order, as ADK does, so the mean is bit-identical
        total += score
    overall = total / len(scores)
    return MetricEvaluation(metric, overall, _gate(overall, threshold), per_invocation)


def trajectory_criterion(metric: EvalMetric, rules: AdkRules = RULES_NEWEST) -> ToolTrajectoryCriterion:
    if metric.criterion is None:
        return ToolTrajectoryCriterion(threshold=metric.criterion_threshold())
    raw = metric.criterion.get("match_type", metric.criterion.get("matchType"))
    if isinstance(raw, str) and not rules.match_type_names:
        raise MetricNotEvaluated(
            f"`{metric.metric_name}` has an invalid criterion (match_type {raw!r}: {rules.label} takes 0 for EXACT, "
            "1 for IN_ORDER or 2 for ANY_ORDER; names arrived in ADK 1.22)"
        )
    try:
        criterion = ToolTrajectoryCriterion.model_validate(metric.criterion)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False))
        raise MetricNotEvaluated(f"`{metric.metric_name}` has an invalid criterion ({problems})") from None
    if not rules.ignore_args and criterion.ignore_args:  # before ADK 2.9 the key was kept and never read
        criterion = criterion.model_copy(update={"ignore_args": False})
    return criterion


def _tool_trajectory(metric: EvalMetric, actual: Sequence[Invocation], expected: Optional[Sequence[Invocation]], rules: AdkRules) -> MetricEvaluation:
    criterion = trajectory_criterion(metric, rules)
    expected = _paired(metric, actual, expected)
    scores = [
        1.0 if trajectory_matches(a.tool_calls(), e.tool_calls(), criterion.match_type, criterion.ignore_args) else 0.0
        for a, e in zip(actual, expected)
    ]
    return _scored(metric, scores, criterion.threshold)


def _response_match(metric: EvalMetric, actual: Sequence[Invocation], expected: Optional[Sequence[Invocation]], rules: AdkRules) -> MetricEvaluation:
    threshold = metric.criterion_threshold()
    expected = _paired(metric, actual, expected)
    scores = [
        rouge1(content_text(a.final_response), content_text(e.final_response), unicode=rules.unicode_tokenizer).fmeasure
        for a, e in zip(actual, expected)
    ]
    return _scored(metric, scores, threshold)


# --- informational efficiency metrics ---------------------------------------------------------


def _informational(
    metric: EvalMetric, actual: Sequence[Invocation], value: Callable[[Invocation], Optional[float]]
) -> MetricEvaluation:
    values = [value(invocation) for invocation in actual]
    per_invocation = tuple(InvocationScore(v, MetricStatus.INFORMATIONAL) for v in values)
    present = [v for v in values if v is not None]
    overall = sum(present) / len(present) if present else None
    return MetricEvaluation(metric, overall, MetricStatus.INFORMATIONAL, per_invocation)


def _tool_call_count(metric: EvalMetric, actual: Sequence[Invocation]) -> MetricEvaluation:
    return _informational(metric, actual, lambda inv: float(len(inv.tool_calls())))


def _inference_call_count(metric: EvalMetric, actual: Sequence[Invocation]) -> MetricEvaluation:
    def count(inv: Invocation) -> Optional[float]:
        if not isinstance(inv.intermediate_data, InvocationEvents):
            return None
        return float(
            sum(1 for e in inv.intermediate_data.invocation_events if e.usage_metadata is not None or e.model_version is not None)
        )

    return _informational(metric, actual, count)


def _token_usage(metric: EvalMetric, actual: Sequence[Invocation]) -> MetricEvaluation:
    details = [token_usage(inv) for inv in actual]
    per_invocation = tuple(InvocationScore(d["total_tokens"], MetricStatus.INFORMATIONAL, d) for d in details)
    if not details:
        return MetricEvaluation(metric, None, MetricStatus.INFORMATIONAL)
    averaged: dict[str, Optional[float]] = {}
    for key in TOKEN_FIELDS:  # one shared denominator: a turn that did not report a count spent none
        present = [d[key] for d in details if d[key] is not None]
        averaged[key] = sum(present) / len(details) if present else None
    return MetricEvaluation(metric, averaged["total_tokens"], MetricStatus.INFORMATIONAL, per_invocation, details=averaged)


_DURATION_FIELDS = ("total_seconds", "model_seconds", "tool_seconds", "framework_seconds")


def duration_details(inv: Invocation) -> dict[str, Optional[float]]:
    if inv.duration is None:
        return dict.fromkeys(_DURATION_FIELDS)
    model, tool = inv.model_duration, inv.tool_duration
    framework = None if model is None or tool is None else round(max(inv.duration - model - tool, 0.0), 3)
    return {"total_seconds": inv.duration, "model_seconds": model, "tool_seconds": tool, "framework_seconds": framework}


def _invocation_duration(metric: EvalMetric, actual: Sequence[Invocation]) -> MetricEvaluation:
    details = [duration_details(inv) for inv in actual]
    per_invocation = tuple(InvocationScore(d["total_seconds"], MetricStatus.INFORMATIONAL, d) for d in details)
    if not details:
        return MetricEvaluation(metric, None, MetricStatus.INFORMATIONAL)
    averaged: dict[str, Optional[float]] = {}
    for key in _DURATION_FIELDS:  # untimed turns are left out, not counted as zero
        present = [d[key] for d in details if d[key] is not None]
        averaged[key] = round(sum(present) / len(present), 3) if present else None
    return MetricEvaluation(metric, averaged["total_seconds"], MetricStatus.INFORMATIONAL, per_invocation, details=averaged)


_EFFICIENCY: dict[str, Callable[[EvalMetric, Sequence[Invocation]], MetricEvaluation]] = {
    "tool_call_count_v1": _tool_call_count,
    "inference_call_count_v1": _inference_call_count,
    "token_usage_v1": _token_usage,
    "invocation_duration_v1": _invocation_duration,
}
