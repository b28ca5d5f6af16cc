"""test_config.json: criterion values, match types, defaults, and metrics ADK cannot score here."""

from __future__ import annotations

import json

import pytest
from agentdiff.core.formats.eval_config import (
    EFFICIENCY_METRICS,
    EvalConfig,
    EvalMetric,
    MatchType,
    eval_metrics,
)
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.formats.eval_set_files import load_eval_config
from agentdiff.core.scoring.metrics import (
    MetricStatus,
    evaluate_metric,
    trajectory_criterion,
)


def config(criteria) -> EvalConfig:
    return EvalConfig.model_validate({"criteria": criteria})


@pytest.mark.parametrize("value", [1, 0.5, "0.8", True])
def test_a_plain_value_is_a_threshold(value):
    [metric, *_] = eval_metrics(config({"response_match_score": value}))
    assert metric.threshold == float(value)
    assert metric.criterion == {"threshold": float(value), "include_intermediate_responses_in_final": False}


def test_a_criterion_object_needs_a_threshold():
    with pytest.raises(ValueError):
        config({"tool_trajectory_avg_score": {"match_type": "EXACT"}})


def test_criterion_extras_are_kept_verbatim():
    [metric, *_] = eval_metrics(config({"tool_trajectory_avg_score": {"threshold": 1, "matchType": "in-order"}}))
    assert metric.criterion["matchType"] == "in-order"


@pytest.mark.parametrize(
    "given, expected",
    [("EXACT", MatchType.EXACT), ("in-order", MatchType.IN_ORDER), ("In Order", MatchType.IN_ORDER),
     (" any_order ", MatchType.ANY_ORDER), (1, MatchType.IN_ORDER), (2, MatchType.ANY_ORDER)],
)
def test_match_type_normalisation(given, expected):
    [metric, *_] = eval_metrics(config({"tool_trajectory_avg_score": {"threshold": 1, "match_type": given}}))
    assert trajectory_criterion(metric).match_type is expected


def test_efficiency_metrics_are_always_appended_once():
    names = [m.metric_name for m in eval_metrics(config({"tool_call_count_v1": 1.0}))]
    assert names == ["tool_call_count_v1", *[n for n in EFFICIENCY_METRICS if n != "tool_call_count_v1"]]


def _invocation() -> Invocation:
    return Invocation.model_validate({"user_content": {"parts": [{"text": "q"}]}, "final_response": {"parts": [{"text": "a"}]}})


@pytest.mark.parametrize(
    "criteria, reason",
    [
        ({"tool_trajectory_avg_score": {"threshold": 1, "match_type": "FUZZY"}}, "invalid criterion"),
        ({"tool_call_count_v1": 1.0}, "does not support a threshold"),
        ({"no_such_metric": 0.5}, "unknown metric"),
        ({"final_response_match_v2": 0.5}, "judge model"),
        ({"safety_v1": 0.5}, "Vertex AI"),
    ],
)
def test_metrics_that_cannot_be_scored_are_not_evaluated_with_a_reason(criteria, reason):
    metric = eval_metrics(config(criteria))[0]
    result = evaluate_metric(metric, [_invocation()], [_invocation()])
    assert result.status is MetricStatus.NOT_EVALUATED
    assert result.score is None
    assert reason in result.reason
    assert [p.status for p in result.per_invocation] == [MetricStatus.NOT_EVALUATED]


def test_metrics_that_need_expected_invocations_say_so():
    metric = EvalMetric(metric_name="response_match_score", threshold=0.5, criterion={"threshold": 0.5})
    result = evaluate_metric(metric, [_invocation()], None)
    assert result.status is MetricStatus.NOT_EVALUATED
    assert "expected invocations" in result.reason


def test_config_is_read_beside_the_eval_file_only(tmp_path):
    (tmp_path / "test_config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.3}}))
    nested = tmp_path / "sub"
    nested.mkdir()
    here, errors = load_eval_config(tmp_path / "a.test.json")
    assert errors == [] and here.config.criteria == {"response_match_score": 0.3}
    below, _ = load_eval_config(nested / "a.test.json")
    assert below.file is None
    assert below.config.criteria == {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


def test_a_malformed_config_is_a_located_error(tmp_path):
    (tmp_path / "test_config.json").write_text('{"criteria": {"response_match_score": {"match": 1}}}')
    loaded, [error] = load_eval_config(tmp_path / "a.test.json")
    assert error.file.endswith("test_config.json")
    assert error.line == 1
    assert "criteria.response_match_score" in error.path
