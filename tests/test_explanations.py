"""A failed case leads with the divergence that made it fail, not merely the earliest one; each
failing metric names its worst turn; an errored case shows its error and no diff summary."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Optional

from agentdiff.core.diff.case import diff_case
from agentdiff.core.diff.explain import explain_replay, explain_scored
from agentdiff.core.diff.model import CaseDiff, DiffCriteria
from agentdiff.core.formats.eval_config import RESPONSE_MATCH, TOOL_TRAJECTORY, EvalMetric, MatchType
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.project.discovery import discover
from agentdiff.core.reports.text import case_problem, failing_metric_lines
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.runner import run_case
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus, MetricResult
from agentdiff.core.scoring.rouge import rouge1
from agentdiff.core.scoring.verdicts import aggregate, case_verdict, score_run
from agentdiff.core.traces.from_files import trace_from_invocations
from agentdiff.core.worker.jobs import Job, RunOutput
from hypothesis import given, settings
from hypothesis import strategies as st
from workbench_support import EchoPool, case_id, echo_project, write_set


def invocation(user: str, final: str, tools: tuple[tuple[str, dict], ...] = ()) -> Invocation:
    return Invocation.model_validate(
        {
            "user_content": {"role": "user", "parts": [{"text": user}]},
            "final_response": {"role": "model", "parts": [{"text": final}]},
            "intermediate_data": {"tool_uses": [{"name": n, "args": a} for n, a in tools], "intermediate_responses": []},
        }
    )


def scored(expected: list[Invocation], actual: list[Invocation], metrics: list[EvalMetric], criteria: DiffCriteria) -> tuple[CaseStatus, tuple[MetricResult, ...], CaseDiff]:
    """As `scored_case_run` does for one repeat: score, verdict, diff, explained."""
    record = score_run(metrics, actual, expected)
    results = aggregate([record])
    status, _ = case_verdict([record], results)
    diff = diff_case(trace_from_invocations(expected), trace_from_invocations(actual), criteria, "case")
    return status, results, explain_scored(diff, results, record)


RESPONSE_07 = [EvalMetric(metric_name=RESPONSE_MATCH, threshold=0.7)]


def test_a_response_failure_leads_with_the_turn_below_the_threshold_not_an_earlier_whitespace_change():
    expected = [invocation("a", "hello  there"), invocation("b", "all  good"), invocation("c", "your order shipped")]
    actual = [invocation("a", "hello there"), invocation("b", "all good"), invocation("c", "nope")]
    status, results, diff = scored(expected, actual, RESPONSE_07, DiffCriteria(response_threshold=0.7))
    assert status is CaseStatus.FAILED
    assert diff.divergences[0].turn == 0  # the earliest divergence: turn 1's whitespace
    lead = diff.first_divergence
    assert (lead.layer, lead.turn) == ("response", 2)
    assert lead.summary.startswith("turn 3 · response · ROUGE-1 0.00 < 0.7")
    assert diff.layer("response").summary == lead.summary + " (+2 more)"


def test_a_passing_case_keeps_the_earliest_divergence():
    expected = [invocation("a", "hello  there")]
    actual = [invocation("a", "hello there")]
    status, _, diff = scored(expected, actual, RESPONSE_07, DiffCriteria(response_threshold=0.7))
    assert status is CaseStatus.PASSED and diff.lead is None
    assert diff.first_divergence is diff.divergences[0]


def test_a_trajectory_failure_leads_with_its_counted_tool_row():
    metrics = [EvalMetric(metric_name=TOOL_TRAJECTORY, criterion={"threshold": 1.0, "match_type": "IN_ORDER"})]
    expected = [
        invocation("a", "ok", (("lookup", {"id": "A1"}),)),
        invocation("b", "done", (("lookup", {"id": "A1"}), ("ship", {"id": "A1"}))),
    ]
    # turn 1: an extra call IN_ORDER allows (a divergence that does not count, and it is earlier);
    # turn 2: `ship` is missing, which fails the trajectory
    actual = [
        invocation("a", "ok", (("log", {}), ("lookup", {"id": "A1"}))),
        invocation("b", "done", (("lookup", {"id": "A1"}),)),
    ]
    status, _, diff = scored(expected, actual, metrics, DiffCriteria(MatchType.IN_ORDER))
    assert status is CaseStatus.FAILED
    assert not diff.divergences[0].counts and diff.divergences[0].turn == 0
    lead = diff.first_divergence
    assert (lead.layer, lead.turn, lead.kind, lead.counts) == ("tool_calls", 1, "deleted", True)
    assert "missing call ship" in lead.summary


def test_replay_leads_with_its_first_counted_divergence():
    expected = [invocation("a", "hello", (("lookup", {"id": "A1"}),))]
    actual = [invocation("a", "hello!", (("lookup", {"id": "a1"}),))]
    diff = diff_case(trace_from_invocations(expected), trace_from_invocations(actual), DiffCriteria(), "case")
    explained = explain_replay(diff)
    assert explained.first_divergence.layer == "tool_calls" and explained.first_divergence.counts


def test_each_failing_metric_names_its_worst_turn():
    expected = [invocation("a", "hello  there"), invocation("b", "your order shipped")]
    actual = [invocation("a", "hello there"), invocation("b", "nope")]
    record = score_run(RESPONSE_07, actual, expected)
    result = CaseResult("c", "s", None, "c", None, "live", CaseStatus.FAILED, metrics=aggregate([record]), runs=(record,))
    assert case_problem(result) == "response_match_score: 0.5 < threshold 0.7 · worst turn 2: 0.0"


# --- through the runner, with an in-process echo pool ------------------------------------------------


def three_turn_project(root: Path) -> str:
    sets = echo_project(root, {"echo": ["x"]})
    turns = [("hello there", "hello  there"), ("all good", "all  good"), ("zzz", "your order has shipped")]
    sets["echo"]["eval_cases"][0]["conversation"] = [
        {
            "user_content": {"role": "user", "parts": [{"text": user}]},
            "final_response": {"role": "model", "parts": [{"text": expected}]},
        }
        for user, expected in turns
    ]
    write_set(root, "echo", sets["echo"])
    return case_id("echo", "case_0")


def run_one(root: Path, pool: EchoPool) -> CaseRun:
    (ref,) = discover([root / "agents"], root).cases
    return asyncio.run(run_case(ref, pool, RunOptions(agents_dirs=(root / "agents",)), root))


def test_a_run_case_failing_on_turn_3_leads_with_turn_3(tmp_path):
    three_turn_project(tmp_path)
    run = run_one(tmp_path, EchoPool())
    assert run.result.status is CaseStatus.FAILED
    lead = run.diff.first_divergence
    assert (lead.layer, lead.turn) == ("response", 2)
    response = next(layer for layer in run.result.layers if layer.layer == "response")
    assert response.first_divergence.startswith("turn 3 · response · ROUGE-1 0.00")
    assert "response_match_score: 0.6667 < threshold 0.8 · worst turn 3: 0.0" in case_problem(run.result)


class CrashingPool(EchoPool):
    async def run(self, job: Job, timeout: Optional[float] = None) -> RunOutput:
        self.jobs.append(job)
        return RunOutput(events=[], app_name=job.app_name, user_id=job.user_id, error="agent crashed: boom")


def test_an_errored_case_shows_its_error_and_no_diff_summary_but_keeps_its_expected_side(tmp_path):
    three_turn_project(tmp_path)
    run = run_one(tmp_path, CrashingPool())
    assert run.result.status is CaseStatus.ERROR
    assert run.result.layers == () and run.diff is not None and run.diff.error == "agent crashed: boom"
    assert all(turn.response is not None and turn.response.expected for turn in run.diff.turns)  # what was expected, each turn
    assert case_problem(run.result) == "agent crashed: boom"


# --- property: the lead of a response failure is a turn below the threshold ------------------------

WORDS = st.sampled_from(["order", "shipped", "your", "has", "the", "A1", "late", "ok"])
TEXT = st.lists(WORDS, min_size=1, max_size=5).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(
    turns=st.lists(st.tuples(TEXT, TEXT, st.booleans()), min_size=1, max_size=4),
    threshold=st.sampled_from([0.3, 0.5, 0.7, 0.9, 1.0]),
)
def test_a_response_failure_always_leads_with_a_turn_below_the_threshold(turns, threshold):
    expected = [invocation(f"u{i}", e) for i, (e, _, _) in enumerate(turns)]
    # same words, other whitespace: a divergence that scores 1.0
    actual = [invocation(f"u{i}", e.replace(" ", "  ") if same else a) for i, (e, a, same) in enumerate(turns)]
    metrics = [EvalMetric(metric_name=RESPONSE_MATCH, threshold=threshold)]
    status, results, diff = scored(expected, actual, metrics, DiffCriteria(response_threshold=threshold))
    if results[0].status is not MetricStatus.FAILED:
        return
    lead = diff.first_divergence
    assert lead is not None and lead.layer == "response"
    assert rouge1(content(actual[lead.turn]), content(expected[lead.turn])).fmeasure < threshold
    # and it is the first such turn
    below = [i for i in range(len(turns)) if rouge1(content(actual[i]), content(expected[i])).fmeasure < threshold]
    assert lead.turn == below[0]


def content(inv: Invocation) -> str:
    return inv.final_response.parts[0].text  # type: ignore[union-attr, index]


def test_failing_metric_lines_list_every_failing_metric_with_its_worst_turn():
    expected = [invocation("a", "fine", (("lookup", {}),)), invocation("b", "your order shipped")]
    actual = [invocation("a", "fine"), invocation("b", "nope")]
    metrics = [EvalMetric(metric_name=TOOL_TRAJECTORY, threshold=1.0), *RESPONSE_07]
    record = score_run(metrics, actual, expected)
    result = CaseResult("c", "s", None, "c", None, "live", CaseStatus.FAILED, metrics=aggregate([record]), runs=(record,))
    assert failing_metric_lines(result) == [
        "tool_trajectory_avg_score: 0.5 < threshold 1.0 · worst turn 1: 0.0",
        "response_match_score: 0.5 < threshold 0.7 · worst turn 2: 0.0",
    ]
