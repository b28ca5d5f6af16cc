"""Case verdicts and num_runs aggregation."""

from __future__ import annotations

import pytest
from agentdiff.core.formats.eval_config import EvalConfig, EvalMetric, eval_metrics
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.scoring.verdicts import (
    aggregate,
    case_verdict,
    failed_run,
    final_status,
    score_run,
)


def inv(text: str, calls: list[str] = ()) -> Invocation:
    return Invocation.model_validate(
        {"user_content": {"parts": [{"text": "q"}]}, "final_response": {"parts": [{"text": text}]},
         "intermediate_data": {"tool_uses": [{"name": c} for c in calls]}}
    )


def metrics(criteria) -> list[EvalMetric]:
    return eval_metrics(EvalConfig.model_validate({"criteria": criteria}))


def test_overall_is_the_mean_of_invocations_and_thresholds_are_inclusive():
    expected = [inv("a", ["A"]), inv("b", ["B"]), inv("c", ["C"])]
    actual = [inv("a", ["A"]), inv("b", ["X"]), inv("c", ["C"])]
    run = score_run(metrics({"tool_trajectory_avg_score": 0.5}), actual, expected)
    trajectory = run.metrics[0]
    assert trajectory.score == pytest.approx(2 / 3)
    assert trajectory.status is MetricStatus.PASSED
    assert [p.status for p in trajectory.per_invocation] == [MetricStatus.PASSED, MetricStatus.FAILED, MetricStatus.PASSED]
    exact = score_run(metrics({"tool_trajectory_avg_score": 2 / 3}), actual, expected)
    assert exact.metrics[0].status is MetricStatus.PASSED


@pytest.mark.parametrize(
    "statuses, verdict",
    [
        ([MetricStatus.PASSED, MetricStatus.NOT_EVALUATED], CaseStatus.PASSED),
        ([MetricStatus.FAILED, MetricStatus.PASSED], CaseStatus.FAILED),
        ([MetricStatus.PASSED, MetricStatus.FAILED], CaseStatus.FAILED),
        ([MetricStatus.NOT_EVALUATED, MetricStatus.INFORMATIONAL], CaseStatus.NOT_EVALUATED),
        ([MetricStatus.INFORMATIONAL], CaseStatus.NOT_EVALUATED),
    ],
)
def test_final_status_walks_metrics_in_order(statuses, verdict):
    assert final_status(statuses) is verdict


def test_a_case_with_only_unscorable_metrics_is_not_evaluated_and_says_why():
    run = score_run(metrics({"hallucinations_v1": 0.5}), [inv("a")], [inv("a")])
    result = aggregate([run])
    status, why = case_verdict([run], result)
    assert status is CaseStatus.NOT_EVALUATED
    assert "judge model" in why


def test_runs_aggregate_over_all_invocations_of_all_runs():
    expected = [inv("a", ["A"]), inv("b", ["B"])]
    first = score_run(metrics({"tool_trajectory_avg_score": 0.7}), [inv("a", ["A"]), inv("b", ["B"])], expected)
    second = score_run(metrics({"tool_trajectory_avg_score": 0.7}), [inv("a", ["A"]), inv("b", ["X"])], expected)
    [trajectory, *_] = aggregate([first, second])
    assert trajectory.per_invocation == (1.0, 1.0, 1.0, 0.0)
    assert trajectory.score == 0.75
    assert trajectory.status is MetricStatus.PASSED
    status, why = case_verdict([first, second], aggregate([first, second]))
    assert status is CaseStatus.FLAKY
    assert why == "1 of 2 runs passed"


def test_a_run_that_crashed_makes_the_case_an_error():
    ok = score_run(metrics({"response_match_score": 0.5}), [inv("a")], [inv("a")])
    crashed = failed_run([], [inv("a")], "agent raised RuntimeError")
    status, why = case_verdict([ok, crashed], aggregate([ok, crashed]))
    assert status is CaseStatus.ERROR
    assert "1 of 2 runs failed" in why


def _with_parts(parts) -> Invocation:
    return Invocation.model_validate({"user_content": {"parts": [{"text": "q"}]}, "final_response": {"parts": parts} if parts else None})


@pytest.mark.parametrize(
    "actual_parts, expected_parts, score",
    [
        ([{"text": "The weather"}, {"text": "is sunny"}], [{"text": "The weather is sunny"}], 1.0),
        ([{"text": "Let me think", "thought": True}, {"text": "It is sunny"}], [{"text": "It is sunny"}], 0.666667),
        (None, None, 0.0),  # null vs null final_response
        ([{"function_call": {"name": "f"}}], [{"text": "x"}], 0.0),  # no text parts → ""
    ],
)
def test_response_text_joins_text_parts_thoughts_included(actual_parts, expected_parts, score):
    run = score_run(metrics({"response_match_score": 0.5}), [_with_parts(actual_parts)], [_with_parts(expected_parts)])
    assert run.metrics[0].score == pytest.approx(score, abs=1e-6)
