"""The app's side of judged metrics: what the worker's judge answers become, and how they read."""

from __future__ import annotations

import pytest

from agentdiff.core.formats.eval_config import EvalMetric
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.reports.judge_text import reasoning, sample_split
from agentdiff.core.run.judging import vertex_configured
from agentdiff.core.scoring.metrics import MetricStatus, evaluate_metric

FRM = EvalMetric(metric_name="final_response_match_v2", threshold=0.5, criterion={"threshold": 0.5})
TURN = Invocation.model_validate({"user_content": {"role": "user", "parts": [{"text": "hi"}]},
                                  "final_response": {"role": "model", "parts": [{"text": "hello"}]}})


def _judged(score, status, samples):
    return {"final_response_match_v2": {"score": score, "status": status, "per_invocation": [
        {"score": score, "status": status, "rubric_scores": [], "samples": samples}], "judge_calls": len(samples), "cache_hits": 0}}


def test_the_workers_answer_is_the_metric_with_each_samples_verdict_kept():
    samples = [{"score": 1.0, "text": '{"reasoning": "It matches.", "is_the_agent_response_valid": "valid"}'}, {"score": 0.0, "text": "no"},
               {"score": 1.0, "text": "yes"}]
    result = evaluate_metric(FRM, [TURN], [TURN], judged=_judged(1.0, "passed", samples))
    assert (result.score, result.status) == (1.0, MetricStatus.PASSED)
    assert result.per_invocation[0].details["samples"] == samples
    assert result.details["judge"]["judge_calls"] == 3
    assert sample_split(samples) == "2/3 valid" and reasoning(samples[0]["text"]) == "It matches."


def test_a_judge_that_could_not_run_or_answered_unreadably_says_so():
    failed = evaluate_metric(FRM, [TURN], [TURN], judged={"error": "timed out after 120 s (the agent's process was stopped)"})
    assert failed.status is MetricStatus.NOT_EVALUATED and failed.reason == "the judge could not run: timed out after 120 s (the agent's process was stopped)"
    unread = evaluate_metric(FRM, [TURN], [TURN], judged=_judged(None, "not_evaluated", [{"score": None, "text": "I think so"}]))
    assert unread.reason == "the judge's answers were not in the form ADK reads (the first: 'I think so')"
    short = evaluate_metric(FRM, [TURN, TURN], [TURN, TURN], judged=_judged(1.0, "passed", []))
    assert short.status is MetricStatus.NOT_EVALUATED and short.reason == "the judge returned 1 results for 2 invocations"


def test_an_unjudged_run_and_vertex_metrics_without_google_cloud_are_not_evaluated_with_what_to_do():
    assert evaluate_metric(FRM, [TURN], [TURN]).reason == "`final_response_match_v2` is scored by a judge model, and this run was not judged"
    safety = evaluate_metric(EvalMetric(metric_name="safety_v1", threshold=0.8, criterion={"threshold": 0.8}), [TURN], [TURN])
    assert safety.status is MetricStatus.NOT_EVALUATED and "set GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION" in safety.reason


def test_vertex_needs_a_project_a_location_and_credentials(tmp_path):
    project = {"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"}
    assert not vertex_configured({})
    assert not vertex_configured(project | {"CLOUDSDK_CONFIG": str(tmp_path)})
    assert vertex_configured(project | {"GOOGLE_APPLICATION_CREDENTIALS": "/keys/sa.json"})
    (tmp_path / "application_default_credentials.json").write_text("{}")
    assert vertex_configured(project | {"CLOUDSDK_CONFIG": str(tmp_path)})
    assert not vertex_configured({"GOOGLE_CLOUD_PROJECT": "p", "CLOUDSDK_CONFIG": str(tmp_path)})


def test_tokens_are_counted_per_model_for_the_agent_and_the_judge_and_priced():
    from agentdiff.core.reports.text import usage_line
    from agentdiff.core.run.usage import case_usage, estimated_cost
    from agentdiff.core.scoring.results import CaseResult, CaseStatus
    from agentdiff.core.worker.jobs import ExchangeOut, RunOutput

    def exchange(model, tokens_in, tokens_out):
        return ExchangeOut(agent="a", turn=0, index=0, seq=0, request={"model": model},
                           responses=[{"usage_metadata": {"prompt_token_count": tokens_in, "candidates_token_count": tokens_out}}])

    runs = [RunOutput(exchanges=[exchange("m1", 100, 10), exchange("m2", 5, 5)]), RunOutput(exchanges=[exchange("m1", 100, 10)])]
    judged = [{"final_response_match_v2": {"usage": {"judge-m": {"input": 1000, "output": 100}}}}, {"error": "no judge"}]
    usage = case_usage(runs, judged)
    assert usage == {"agent": {"m1": {"input": 200, "output": 20}, "m2": {"input": 5, "output": 5}},
                     "judge": {"judge-m": {"input": 1000, "output": 100}}}
    prices = {"m1": {"input": 1.0, "output": 10.0}, "m2": {"input": 0.0, "output": 0.0}, "judge-m": {"input": 0.5, "output": 1.0}}
    assert abs(estimated_cost(usage, prices) - (200e-6 + 200e-6 + 500e-6 + 100e-6)) < 1e-12
    assert estimated_cost(usage, {"m1": {"input": 1.0, "output": 1.0}}) is None  # m2 and the judge have no price
    case = CaseResult("x", "x", None, "x", None, "live", CaseStatus.PASSED, usage=usage)
    assert usage_line([case], prices) == "tokens: 230 agent + 1,100 judge · est. cost $0.0010"
    assert usage_line([case], {"m1": {"input": 1.0}}) == "tokens: 230 agent + 1,100 judge · no price for judge-m, m2"


def test_a_price_table_in_the_configuration(tmp_path):
    from agentdiff.core.project.config import load_project_config

    (tmp_path / "agentdiff.toml").write_text('[prices]\n"gemini-2.5-flash" = { input = 0.30, output = 2.50 }\n"bad" = { input = -1 }\n')
    config, errors = load_project_config(tmp_path)
    assert config.prices == {"gemini-2.5-flash": {"input": 0.30, "output": 2.50}}
    assert [e.message for e in errors] == ["`prices.bad` must be { input = dollars, output = dollars } per million tokens"]


def test_judge_lines_read_a_turn_the_judge_gave_no_result_for():
    from agentdiff.core.reports.judge_text import judge_lines
    from agentdiff.core.scoring.results import CaseResult, CaseStatus, MetricResult

    metric = MetricResult("final_response_match_v2", None, 0.5, MetricStatus.NOT_EVALUATED, per_invocation=(None, None),
                          details={"judge": {}, "per_invocation": [None, {"samples": [{"score": None, "text": "hmm"}]}]})
    case = CaseResult("x", "x", None, "x", None, "live", CaseStatus.NOT_EVALUATED, metrics=(metric,))
    assert judge_lines(case, metric, only_failing=False) == ["turn 1: n/a", "turn 2: n/a · judge: hmm"]


def test_numbers_in_the_configuration_are_checked_not_trusted(tmp_path):
    from agentdiff.core.project.config import load_project_config

    (tmp_path / "agentdiff.toml").write_text('num_runs = 100000000\njobs = 0\ntimeout = -1\nmemory_mb = "x"\n')
    config, errors = load_project_config(tmp_path)
    assert (config.num_runs, config.jobs, config.timeout, config.memory_mb) == (1, None, 120.0, 4096)
    assert [e.message for e in errors] == [
        "`num_runs` must be a whole number from 1 to 1000, not 100000000", "`jobs` must be a whole number from 1 to 100000, not 0",
        "`timeout` must be a number from 0.001 to 86400, not -1", "`memory_mb` must be a whole number from 64 to 1048576, not 'x'"]


def test_a_case_row_shows_the_failing_metrics_score_the_worst_or_a_flaky_pass_fraction():
    from agentdiff.core.scoring.results import CaseResult, CaseStatus, MetricResult, RunRecord
    from agentdiff.tui.widgets.case_tree import score_text

    def metric(name, score, status):
        return MetricResult(name, score, 0.8, status)

    trajectory, response = metric("tool_trajectory_avg_score", 1.0, MetricStatus.PASSED), metric("response_match_score", 0.58, MetricStatus.FAILED)
    failed = CaseResult("x", "x", None, "x", None, "live", CaseStatus.FAILED, metrics=(trajectory, response))
    assert score_text(failed) == "0.58"  # not the trajectory's 1.00
    passed = CaseResult("x", "x", None, "x", None, "live", CaseStatus.PASSED,
                        metrics=(trajectory, metric("response_match_score", 0.9, MetricStatus.PASSED)))
    assert score_text(passed) == "0.90"
    runs = tuple(RunRecord((), None, status=s) for s in (CaseStatus.PASSED, CaseStatus.FAILED, CaseStatus.PASSED))
    flaky = CaseResult("x", "x", None, "x", None, "live", CaseStatus.FLAKY, metrics=(trajectory,), runs=runs)
    assert score_text(flaky) == "2/3 runs"
    assert score_text(CaseResult("x", "x", None, "x", None, "replay", CaseStatus.PASSED)) == ""
    assert score_text(CaseResult("x", "x", None, "x", None, "live", CaseStatus.NEW, metrics=(trajectory,))) == ""  # nothing expected yet


@pytest.mark.parametrize("threshold", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_threshold_that_is_no_finite_number_is_a_located_config_error(tmp_path, monkeypatch, capsys, threshold):
    import json as _json

    from test_cli import run

    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (tmp_path / "agents" / "echo" / "test_config.json").write_text(
        '{\n  "criteria": {\n    "response_match_score": %s,\n    "tool_trajectory_avg_score": {"threshold": %s}\n  }\n}\n' % (threshold, threshold))
    conversation = [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]
    (tmp_path / "agents" / "echo" / "s.evalset.json").write_text(_json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": conversation}]}))
    (tmp_path / "agentdiff.toml").write_text('[prices.m]\ninput = inf\n[gate]\nmax_total_cost = nan\n')
    monkeypatch.chdir(tmp_path)
    for argv in (["run"], ["run", "--json"]):
        code, out, err = run(*argv)
        assert code in (1, 2) and "Traceback" not in err, err
        assert "agents/echo/test_config.json:3:" in err and "finite number" in err, err
        assert "`prices.m` must be" in err and "`gate.max_total_cost` must be a finite number" in err
        if "--json" in argv:
            _json.loads(out)  # the report is JSON still
    for flag, said in (("--jobs", "must be at most 100,000"), ("--num-runs", "must be at most 1,000")):
        with pytest.raises(SystemExit) as ended:  # argparse's usage error, before anything runs
            run("run", flag, "1" + "0" * 20)
        assert ended.value.code == 2 and said in capsys.readouterr().err


def test_a_judge_request_key_leaves_out_event_times_only_never_a_time_the_agent_said():
    from agentdiff.core.worker.genai_cache import GenaiCalls, _key

    def key(text: str) -> str:
        return _key(GenaiCalls(None), "post", "models/m:generateContent", {"contents": [{"parts": [{"text": text}]}]})

    trace = "Trace: {'event_time': '%s', 'text': 'Your flight leaves %s.'}"
    assert key(trace % ("2026-12-02T00:09:34.424721Z", "2025-03-01T10:00:00")) == key(trace % ("2026-12-06T08:00:01Z", "2025-03-01T10:00:00"))
    assert key(trace % ("2026-12-02T00:09:34Z", "2025-03-01T10:00:00")) != key(trace % ("2026-12-02T00:09:34Z", "2025-03-01T11:00:00"))
