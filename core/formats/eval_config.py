"""`test_config.json`: ADK 2.13's EvalConfig, its criteria and the metric list built from it."""

from __future__ import annotations

from enum import Enum
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from agentdiff.core.formats.adk_rules import RULES_NEWEST, AdkRules

TOOL_TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE_MATCH = "response_match_score"

#: Reported on every eval, never gating; a threshold on one makes it NOT_EVALUATED.
EFFICIENCY_METRICS = (
    "tool_call_count_v1",
    "inference_call_count_v1",
    "token_usage_v1",
    "invocation_duration_v1",
)

#: Metrics that need an LLM judge; agentdiff reports them NOT_EVALUATED rather than guess.
JUDGE_METRICS = frozenset(
    {
        "final_response_match_v2",
        "rubric_based_final_response_quality_v1",
        "hallucinations_v1",
        "rubric_based_tool_use_quality_v1",
        "per_turn_user_simulator_quality_v1",
        "rubric_based_multi_turn_trajectory_quality_v1",
    }
)

#: Metrics computed by Vertex AI's evaluation service (Google Cloud credentials).
VERTEX_METRICS = frozenset(
    {
        "response_evaluation_score",
        "safety_v1",
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
    }
)


class BaseCriterion(BaseModel):
    """A criterion object: `threshold` is required, every other key is kept verbatim. A threshold
    must be a finite number (JSON's `NaN`, `Infinity` and `1e999` are not thresholds)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", allow_inf_nan=False)

    threshold: float
    include_intermediate_responses_in_final: bool = False


class MatchType(Enum):
    EXACT = 0
    IN_ORDER = 1
    ANY_ORDER = 2


class ToolTrajectoryCriterion(BaseCriterion):
    match_type: MatchType = MatchType.EXACT
    ignore_args: bool = False

    @field_validator("match_type", mode="before")
    @classmethod
    def _normalise_match_type(cls, value: object) -> object:
        # "in-order", "In Order" and " IN_ORDER " all mean IN_ORDER; numbers are enum values.
        if isinstance(value, str):
            key = value.strip().upper().replace("-", "_").replace(" ", "_")
            if key in MatchType.__members__:
                return MatchType[key]
        return value


class CodeConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    name: str


class CustomMetricConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    code_config: CodeConfig
    metric_info: Any = None
    description: Optional[str] = None


class EvalConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", allow_inf_nan=False)

    criteria: dict[str, Union[float, BaseCriterion]] = {}
    custom_metrics: Optional[dict[str, CustomMetricConfig]] = None
    user_simulator_config: Any = None
    live_model_config: Any = None
    # agentdiff's own (ADK ignores keys it does not know): the pass rate its live repeats must show
    min_pass_rate: Optional[float] = Field(default=None, ge=0, le=1)
    confidence: Optional[float] = Field(default=None, ge=0.5, lt=1)


DEFAULT_CRITERIA: dict[str, Union[float, BaseCriterion]] = {TOOL_TRAJECTORY: 1.0, RESPONSE_MATCH: 0.8}


def default_eval_config() -> EvalConfig:
    """What ADK uses when there is no `test_config.json`."""
    return EvalConfig(criteria=dict(DEFAULT_CRITERIA))


class EvalMetric(BaseModel):
    """One metric to compute: ADK's EvalMetric (name, threshold, criterion, custom path)."""

    model_config = ConfigDict(frozen=True)

    metric_name: str
    threshold: Optional[float] = None
    criterion: Optional[dict[str, Any]] = None
    custom_function_path: Optional[str] = None

    def criterion_threshold(self) -> float:
        if self.criterion is not None and self.criterion.get("threshold") is not None:
            return float(self.criterion["threshold"])
        if self.threshold is not None:
            return self.threshold
        raise ValueError(f"Evaluation metric {self.metric_name!r} requires a threshold.")


#: The metrics of the configs seen lately: a suite's cases share their file's config, so its metrics are
#: made once and every case's scores refer to the same (frozen) ones, not a copy per case.
_MADE: dict[tuple[int, AdkRules], tuple[EvalConfig, tuple[EvalMetric, ...]]] = {}


def eval_metrics(config: EvalConfig, rules: AdkRules = RULES_NEWEST) -> list[EvalMetric]:
    made = _MADE.get((id(config), rules))
    if made is None or made[0] is not config:
        if len(_MADE) >= 256:
            _MADE.clear()
        made = _MADE[(id(config), rules)] = (config, tuple(_made(config, rules)))
    return list(made[1])


def _made(config: EvalConfig, rules: AdkRules) -> list[EvalMetric]:
    """The metrics of a config, in its order, then (from ADK 2.10) the efficiency metrics it did not name."""
    metrics: list[EvalMetric] = []
    for name, criterion in config.criteria.items():
        custom = (config.custom_metrics or {}).get(name)
        path = custom.code_config.name if custom else None
        if isinstance(criterion, BaseCriterion):
            metrics.append(
                EvalMetric(
                    metric_name=name,
                    threshold=criterion.threshold,
                    criterion=criterion.model_dump(),
                    custom_function_path=path,
                )
            )
        else:
            metrics.append(
                EvalMetric(
                    metric_name=name,
                    threshold=criterion,
                    criterion=BaseCriterion(threshold=criterion).model_dump(),
                    custom_function_path=path,
                )
            )
    named = {metric.metric_name for metric in metrics}
    if rules.efficiency_metrics:
        metrics.extend(EvalMetric(metric_name=name) for name in EFFICIENCY_METRICS if name not in named)
    return metrics
