"""Our scores against ADK 2.13's own, on results ADK produced in this test run."""

from __future__ import annotations

import math
import statistics

import pytest
from agentdiff.core.formats.adk_results import EvalStatus, load_eval_set_result
from agentdiff.core.formats.eval_config import EvalConfig, eval_metrics
from agentdiff.core.reports.csv_report import render_csv
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.stored_results import rescore_result, stored_metrics
from agentdiff.core.scoring.verdicts import score_run
from conftest import REFERENCE_CASES, REFERENCE_CONFIGS

pytestmark = pytest.mark.adk

_STATUS = {
    EvalStatus.PASSED: MetricStatus.PASSED,
    EvalStatus.FAILED: MetricStatus.FAILED,
    EvalStatus.NOT_EVALUATED: MetricStatus.NOT_EVALUATED,
    EvalStatus.INFORMATIONAL: MetricStatus.INFORMATIONAL,
}


def same_score(ours, theirs) -> bool:
    if ours is None or theirs is None:
        return ours is None and theirs is None
    return math.isclose(ours, theirs, rel_tol=0, abs_tol=1e-9)


@pytest.fixture(params=sorted(REFERENCE_CONFIGS))
def reference(request, adk_reference_runs):
    results, csv_path = adk_reference_runs[request.param]
    loaded, errors = load_eval_set_result(results)
    assert errors == []
    return request.param, loaded, csv_path


def _runs(loaded):
    return loaded.result.eval_case_results


def test_every_case_of_every_run_was_scored_by_adk(reference):
    _, loaded, _ = reference
    assert sorted({r.eval_id for r in _runs(loaded)}) == sorted(eval_id for eval_id, _ in REFERENCE_CASES)
    assert len(_runs(loaded)) == 2 * len(REFERENCE_CASES)


@pytest.mark.parametrize("criteria_from", ["stored", "config"])
def test_each_run_scores_exactly_as_adk(reference, criteria_from):
    name, loaded, _ = reference
    configured = eval_metrics(EvalConfig.model_validate({"criteria": REFERENCE_CONFIGS[name]}))
    for stored in _runs(loaded):
        pairs = stored.eval_metric_result_per_invocation
        metrics = stored_metrics(stored) if criteria_from == "stored" else configured
        run = score_run(metrics, [p.actual_invocation for p in pairs], [p.expected_invocation for p in pairs])
        assert [m.name for m in run.metrics] == [m.metric_name for m in stored.overall_eval_metric_results]
        for ours, theirs in zip(run.metrics, stored.overall_eval_metric_results, strict=True):
            where = f"{name}/{stored.eval_id}/{ours.name}"
            assert same_score(ours.score, theirs.score), (where, ours.score, theirs.score)
            assert ours.status is _STATUS[theirs.eval_status], (where, ours.status, theirs.eval_status, ours.reason)
        for index, pair in enumerate(pairs):
            for ours, theirs in zip(run.metrics, pair.eval_metric_results, strict=True):
                scored = ours.per_invocation[index]
                assert same_score(scored.score, theirs.score), (name, stored.eval_id, ours.name, index)
                assert scored.status is _STATUS[theirs.eval_status]
        assert run.status.value == _STATUS[stored.final_eval_status].value, (name, stored.eval_id)


def test_runs_of_a_case_aggregate_as_agent_evaluator_does(reference):
    name, loaded, _ = reference
    for case in rescore_result(loaded):
        stored = [r for r in _runs(loaded) if r.eval_id == case.eval_id]
        for metric in case.metrics:
            per_invocation = [
                m.score
                for r in stored
                for pair in r.eval_metric_result_per_invocation
                for m in pair.eval_metric_results
                if m.metric_name == metric.name
            ]
            present = [s for s in per_invocation if s is not None]
            expected = statistics.mean(present) if present else None
            assert same_score(metric.score, expected), (name, case.eval_id, metric.name)
            assert metric.per_invocation == tuple(per_invocation)
            if metric.status in (MetricStatus.PASSED, MetricStatus.FAILED):
                assert (metric.status is MetricStatus.PASSED) == (expected >= metric.threshold)


def test_csv_report_equals_agent_evaluator_output_file(reference):
    _, loaded, csv_path = reference
    ours = render_csv(rescore_result(loaded))
    assert ours == csv_path.read_text(encoding="utf-8")


def test_known_verdicts_of_the_reference_cases(adk_reference_runs):
    loaded, _ = load_eval_set_result(adk_reference_runs["exact"][0])
    scores = {c.eval_id: {m.name: m.score for m in c.metrics} for c in rescore_result(loaded)}
    assert scores["same"]["tool_trajectory_avg_score"] == 1.0
    assert scores["swapped"]["tool_trajectory_avg_score"] == 0.0
    assert scores["empty_vs_empty"]["response_match_score"] == 0.0
    assert scores["three_turns"]["tool_trajectory_avg_score"] == pytest.approx(2 / 3)
    assert scores["thought_parts"]["response_match_score"] == pytest.approx(0.666667, abs=1e-6)
    assert scores["cjk"]["response_match_score"] == pytest.approx(0.857143, abs=1e-6)
    in_order, _ = load_eval_set_result(adk_reference_runs["in_order"][0])
    case = next(c for c in rescore_result(in_order) if c.eval_id == "same")
    by_name = {m.name: m for m in case.metrics}
    assert by_name["no_such_metric"].status is MetricStatus.NOT_EVALUATED
    assert by_name["tool_call_count_v1"].status is MetricStatus.NOT_EVALUATED
    assert "threshold" in by_name["tool_call_count_v1"].reason
