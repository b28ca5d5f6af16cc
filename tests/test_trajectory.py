"""Tool-trajectory matching: adk-formats.md §3.1, row by row, plus properties against ADK's own."""

from __future__ import annotations

import pytest
from agentdiff.core.formats.eval_config import MatchType
from agentdiff.core.formats.genai_types import FunctionCall
from agentdiff.core.scoring.trajectory import trajectory_matches
from hypothesis import given, settings
from hypothesis import strategies as st

A = FunctionCall(name="A", args={"x": 1})
B = FunctionCall(name="B", args={"y": "b"})
X = FunctionCall(name="X", args={})


@pytest.mark.parametrize(
    "actual, expected, verdicts",
    [
        ([A, B], [A, B], (1, 1, 1)),
        ([B, A], [A, B], (0, 0, 1)),
        ([A, X, B], [A, B], (0, 1, 1)),
        ([A], [A, A], (0, 0, 0)),
        ([A, A], [A], (0, 1, 1)),
        ([], [], (1, 1, 1)),
        ([A], [], (0, 1, 1)),
        ([], [A], (0, 0, 0)),
        ([FunctionCall(name="A", args={})], [FunctionCall(name="A")], (0, 0, 0)),
    ],
)
def test_reference_table(actual, expected, verdicts):
    got = tuple(int(trajectory_matches(actual, expected, m)) for m in (MatchType.EXACT, MatchType.IN_ORDER, MatchType.ANY_ORDER))
    assert got == verdicts


def test_empty_args_match_null_args_only_when_args_are_ignored():
    assert trajectory_matches([FunctionCall(name="A", args={})], [FunctionCall(name="A")], MatchType.EXACT, ignore_args=True)


@pytest.mark.parametrize(
    "left, right, equal",
    [
        ({"n": 1}, {"n": 1.0}, True),
        ({"n": 1}, {"n": True}, True),
        ({"n": 1}, {"n": "1"}, False),
        ({"l": [1, 2]}, {"l": [2, 1]}, False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
    ],
)
def test_args_compare_with_python_equality(left, right, equal):
    assert trajectory_matches([FunctionCall(name="f", args=left)], [FunctionCall(name="f", args=right)]) is equal


def test_call_ids_are_ignored():
    assert trajectory_matches([FunctionCall(id="adk-1", name="A", args={"x": 1})], [A])


_CALL = st.builds(
    FunctionCall,
    name=st.sampled_from(["A", "B", "C"]),
    args=st.one_of(st.none(), st.fixed_dictionaries({}, optional={"k": st.sampled_from([0, 1, 1.0, "1", True])})),
)
_CALLS = st.lists(_CALL, max_size=6)


@settings(max_examples=300, deadline=None)
@given(actual=_CALLS, expected=_CALLS)
def test_properties(actual, expected):
    exact = trajectory_matches(actual, expected, MatchType.EXACT)
    in_order = trajectory_matches(actual, expected, MatchType.IN_ORDER)
    any_order = trajectory_matches(actual, expected, MatchType.ANY_ORDER)
    assert not exact or in_order  # an exact match is an in-order match
    assert not in_order or any_order  # an in-order match is an any-order match
    assert trajectory_matches(actual, actual, MatchType.EXACT)
    assert trajectory_matches(actual + expected, expected, MatchType.IN_ORDER)


@pytest.mark.adk
@settings(max_examples=300, deadline=None)
@given(actual=_CALLS, expected=_CALLS, ignore_args=st.booleans(), match=st.sampled_from(list(MatchType)))
def test_same_verdict_as_adks_trajectory_evaluator(actual, expected, ignore_args, match):
    trajectory_evaluator = pytest.importorskip("google.adk.evaluation.trajectory_evaluator")
    from google.adk.evaluation.eval_case import IntermediateData, Invocation
    from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
    from google.genai import types

    def invocation(calls):
        return Invocation(
            user_content=types.Content(parts=[types.Part(text="q")]),
            intermediate_data=IntermediateData(tool_uses=[types.FunctionCall(name=c.name, args=c.args) for c in calls]),
        )

    criterion = ToolTrajectoryCriterion(threshold=1.0, match_type=match.name, ignore_args=ignore_args)
    evaluator = trajectory_evaluator.TrajectoryEvaluator(
        eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score", threshold=1.0, criterion=criterion)
    )
    theirs = evaluator.evaluate_invocations([invocation(actual)], [invocation(expected)]).overall_score
    assert float(trajectory_matches(actual, expected, match, ignore_args)) == theirs
