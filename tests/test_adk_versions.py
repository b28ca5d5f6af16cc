"""Each supported ADK version scored as it scores itself: the rules that changed between 1.19 and
2.13, one by one; then, on real project environments (the oldest supported ADK, made once by
`adk_envs.py`, and the newest, agentdiff's own), ADK's own scores and replay verdicts against
agentdiff's running the agents on that environment's Python."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from agentdiff.core.formats.adk_rules import RULES_NEWEST, rules_for, support_note
from agentdiff.core.formats.eval_config import EvalConfig, eval_metrics
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.project.discovery import discover
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.runner import run_case
from agentdiff.core.scoring.metrics import MetricStatus, evaluate_metric
from agentdiff.core.scoring.rouge import rouge1
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.traces.from_run import invocations_from_output
from agentdiff.core.worker.jobs import Message, RunOutput
from agentdiff.core.worker.pool import WorkerPool
from conftest import REF_AGENTS, REFERENCE_CONFIGS, TESTS, reference_eval_set
from test_cli import run

V119, V128, V129, V221, V233, V259, V260, V289, V299, V2100 = (
    rules_for(v) for v in ("1.19.0", "1.28.0", "1.29.0", "2.2.1", "2.3.3", "2.5.9", "2.6.0", "2.8.9", "2.9.9", "2.10.0"))


def invocation(text: str = "", calls=()) -> Invocation:
    return Invocation.model_validate({
        "user_content": {"role": "user", "parts": [{"text": "hi"}]},
        "final_response": {"role": "model", "parts": [{"text": text}]},
        "intermediate_data": {"tool_uses": [{"name": n, "args": a} for n, a in calls]},
    })


def metric(criteria: dict, name: str, rules):
    (found,) = [m for m in eval_metrics(EvalConfig.model_validate({"criteria": criteria}), rules) if m.metric_name == name]
    return found


# --- the rules, version by version ------------------------------------------------------------


def test_versions_are_read_and_ordered():
    assert rules_for("1.19.0").version == (1, 19, 0) and rules_for("2.13.0rc1").version == (2, 13, 0)
    assert rules_for("1.9.0").version < rules_for("1.19.0").version < rules_for("2.2.1").version  # numbers, not text
    assert rules_for(None) is RULES_NEWEST and rules_for("garbage") is RULES_NEWEST
    assert support_note("2.13.4") is None and support_note("1.19.0") is None
    assert support_note("1.2.1") == ("ADK 1.2.1 is older than the oldest version agentdiff scores exactly (1.19.0 to 2.13.x); "
                                     "it is scored as ADK 1.19.0 scores")


def test_rouge_before_2_6_counts_only_ascii_words():
    assert rouge1("天气好", "天气很好", unicode=False).fmeasure == 0.0
    assert rouge1("天气好", "天气很好").fmeasure == pytest.approx(0.857142857)
    assert rouge1("ＡＢＣ", "abc", unicode=False).fmeasure == 0.0 and rouge1("ＡＢＣ", "abc").fmeasure == 1.0
    assert rouge1("He was running fast", "He runs fast", unicode=False) == rouge1("He was running fast", "He runs fast")
    scores = [evaluate_metric(metric({"response_match_score": 0.5}, "response_match_score", r), [invocation("天气好")],
                              [invocation("天气很好")], r).score for r in (V259, V260)]
    assert scores == [0.0, pytest.approx(0.857142857)]


def test_match_type_names_arrived_in_1_22():
    criteria = {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"}}
    old = evaluate_metric(metric(criteria, "tool_trajectory_avg_score", V119), [invocation()], [invocation()], V119)
    assert old.status is MetricStatus.NOT_EVALUATED and "names arrived in ADK 1.22" in old.reason
    numbered = {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": 1}}
    assert evaluate_metric(metric(numbered, "tool_trajectory_avg_score", V119), [invocation()], [invocation()], V119).score == 1.0
    new = rules_for("1.22.0")
    assert evaluate_metric(metric(criteria, "tool_trajectory_avg_score", new), [invocation()], [invocation()], new).score == 1.0


def test_ignore_args_arrived_in_2_9():
    criteria = {"tool_trajectory_avg_score": {"threshold": 1.0, "ignore_args": True}}
    actual, expected = [invocation(calls=[("f", {"a": 1})])], [invocation(calls=[("f", {"a": 2})])]
    scores = [evaluate_metric(metric(criteria, "tool_trajectory_avg_score", r), actual, expected, r).score for r in (V289, V299)]
    assert scores == [0.0, 1.0]


def test_efficiency_metrics_arrived_in_2_10():
    config = EvalConfig.model_validate({"criteria": {"response_match_score": 0.5}})
    assert [m.metric_name for m in eval_metrics(config, V299)] == ["response_match_score"]
    assert len(eval_metrics(config, V2100)) == 5
    named = metric({"tool_call_count_v1": 1.0}, "tool_call_count_v1", V299)
    result = evaluate_metric(named, [invocation()], [invocation()], V299)
    assert result.status is MetricStatus.NOT_EVALUATED and result.reason.startswith("unknown metric `tool_call_count_v1`")


def _events(*events: dict) -> list[dict]:
    return [{"author": "user", "content": {"role": "user", "parts": [{"text": "hi"}]}}, *events]


CALL = {"author": "a", "content": {"role": "model", "parts": [{"function_call": {"name": "f", "args": {}}}]}}
LONG_RUNNING = {**CALL, "long_running_tool_ids": ["x"]}  # a final response that holds a function call
SUB_FINAL = {"author": "helper", "content": {"role": "model", "parts": [{"text": "from the helper"}]}}
IMAGE_FINAL = {"author": "a", "content": {"role": "model", "parts": [{"inline_data": {"mime_type": "image/png", "data": "AA=="}}]}}
TEXT_FINAL = {"author": "a", "content": {"role": "model", "parts": [{"text": "done"}]}}


def _built(events: list[dict], rules) -> Invocation:
    (inv,) = invocations_from_output(RunOutput(events=events), [Message(content={"role": "user", "parts": [{"text": "hi"}]})], rules)
    return inv


def test_which_final_events_count_changed_in_1_29_2_3_and_2_10():
    events = _events(SUB_FINAL, LONG_RUNNING)
    calls = {r.label: len(_built(events, r).tool_calls()) for r in (V128, V129, V221, V233, V2100)}
    assert calls == {"ADK 1.28.0": 0, "ADK 1.29.0": 0, "ADK 2.2.1": 0, "ADK 2.3.3": 1, "ADK 2.10.0": 1}
    authors = {r.label: [e.author for e in _built(events, r).intermediate_data.invocation_events] for r in (V128, V129, V233, V2100)}
    assert authors == {"ADK 1.28.0": [], "ADK 1.29.0": ["helper"], "ADK 2.3.3": ["helper", "a"], "ADK 2.10.0": ["helper", "a"]}


def test_the_final_response_prefers_text_from_2_6():
    events = _events(TEXT_FINAL, IMAGE_FINAL)
    assert _built(events, V259).final_response.parts[0].inline_data is not None
    assert _built(events, V260).final_response.parts[0].text == "done"


def test_inline_data_events_count_from_1_34_and_grounding_from_2_8():
    image = {"author": "a", "content": {"role": "model", "parts": [{"inline_data": {"mime_type": "image/png", "data": "AA=="}}]}}
    grounded = {"author": "a", "grounding_metadata": {"web_search_queries": ["q"]}}
    events = _events(image, grounded, TEXT_FINAL)
    shown = {r.label: [(e.author, e.grounding_metadata is not None) for e in _built(events, r).intermediate_data.invocation_events]
             for r in (rules_for("1.33.0"), rules_for("1.34.0"), rules_for("2.8.0"), V2100)}
    assert shown == {"ADK 1.33.0": [], "ADK 1.34.0": [("a", False)], "ADK 2.8.0": [("a", False), ("a", True)],
                     "ADK 2.10.0": [("a", False), ("a", True), ("a", False)]}


def test_an_error_code_event_is_a_final_response_from_2_9():
    failed = {"author": "a", "error_code": "MALFORMED", "content": {"role": "model", "parts": [
        {"function_response": {"name": "f", "response": {}}}, {"text": "the model failed"}]}}
    events = _events(TEXT_FINAL, failed)
    assert _built(events, rules_for("2.8.0")).final_response.parts[0].text == "done"
    assert _built(events, rules_for("2.9.0")).final_response.parts[-1].text == "the model failed"


# --- real project environments -----------------------------------------------------------------


def _project(root: Path) -> Path:
    """One folder per reference config: the reference eval set and its test_config.json."""
    for name, criteria in REFERENCE_CONFIGS.items():
        (root / name).mkdir(parents=True)
        (root / name / f"{name}.evalset.json").write_text(json.dumps(reference_eval_set()))
        (root / name / "test_config.json").write_text(json.dumps({"criteria": criteria}))
    return root


@pytest.fixture(params=["oldest", "newest"])
def adk_python(request) -> str:
    return str(request.getfixturevalue("oldest_adk_python")) if request.param == "oldest" else sys.executable


@pytest.mark.adk
def test_scores_equal_that_adk_versions_own(adk_python, tmp_path, monkeypatch):
    root = _project(tmp_path / "proj")
    (tmp_path / "set.json").write_text(json.dumps(reference_eval_set()))
    (tmp_path / "configs.json").write_text(json.dumps(REFERENCE_CONFIGS))
    subprocess.run([adk_python, str(TESTS / "adk_version_reference.py"), str(REF_AGENTS), "ref_agent", str(tmp_path / "set.json"),
                    str(tmp_path / "configs.json"), str(tmp_path / "adk.json")], check=True, capture_output=True, timeout=600)
    adk = json.loads((tmp_path / "adk.json").read_text())
    monkeypatch.chdir(root)
    code, out, err = run("run", "--json", "--python", adk_python, "--agents", str(REF_AGENTS), "--jobs", "8")
    assert f"ADK {adk['adk_version']}" in err.splitlines()[0], err
    ours = json.loads(out)["cases"]
    assert len(ours) == sum(len(cases) for cases in adk["configs"].values())
    for case in ours:
        config = case["source"].split("/")[0]
        theirs = adk["configs"][config][case["eval_id"]]
        where = f"{config}/{case['eval_id']} on ADK {adk['adk_version']}"
        assert case["scored_as"] == f"ADK {adk['adk_version']}", where
        assert [(m["name"], m["status"]) for m in case["metrics"]] == [(m["name"], m["status"]) for m in theirs["metrics"]], where
        for mine, their in zip(case["metrics"], theirs["metrics"]):
            if mine["name"] == "invocation_duration_v1":
                continue  # wall-clock seconds: no two runs agree
            assert mine["score"] == pytest.approx(their["score"], abs=1e-12) if their["score"] is not None else mine["score"] is None, (
                where, mine, their)
        assert case["status"] == theirs["status"], where


REPLAY_VARIANTS = ["unchanged", "instruction edited", "tool docstring changed", "tool returns something else", "tool writes state"]


@pytest.fixture(scope="module")
def replay_on_oldest(oldest_adk_python, tmp_path_factory):
    """A case recorded by the oldest ADK's RecordingsPlugin, and a pool whose agents run on it."""
    import yaml
    from test_replay_verdicts import SPEC, write_agent

    root = tmp_path_factory.mktemp("replay_oldest")
    case = root / "cases" / "weather" / "two_turns"
    case.mkdir(parents=True)
    (case / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    base = write_agent(root / "base", [])
    subprocess.run([str(oldest_adk_python), str(TESTS / "adk_conformance.py"), "record", str(base / "ref_agent" / "agent.py"), str(case)],
                   check=True, capture_output=True, timeout=300)
    pool = WorkerPool(jobs=2, timeout=60, python=str(oldest_adk_python))
    yield case, pool, oldest_adk_python
    pool.close()


@pytest.mark.adk
@pytest.mark.parametrize("variant", REPLAY_VARIANTS)
def test_replay_verdicts_agree_with_the_oldest_adks_own(variant, replay_on_oldest, tmp_path):
    from test_replay_verdicts import VARIANTS, write_agent

    case, pool, python = replay_on_oldest
    agents = write_agent(tmp_path / "agents", VARIANTS[variant])
    done = subprocess.run([str(python), str(TESTS / "adk_conformance.py"), "replay", str(agents / "ref_agent" / "agent.py"), str(case)],
                          check=True, capture_output=True, text=True, timeout=300)
    adk = json.loads(done.stdout.strip().splitlines()[-1])
    root = case.parents[2]
    (ref,) = discover([case], root).cases
    result = asyncio.run(run_case(ref, pool, RunOptions(agents_dirs=(agents,)), root)).result
    assert (result.status is CaseStatus.PASSED) == adk["passed"], (variant, adk["message"], result)


@pytest.mark.adk
def test_what_agentdiff_records_on_the_oldest_adk_it_replays(replay_on_oldest, tmp_path):
    import yaml
    from agentdiff.core.baselines.record import record_case
    from test_replay_verdicts import SPEC, write_agent

    _, pool, python = replay_on_oldest
    agents = write_agent(tmp_path / "agents", [])
    case = tmp_path / "cases" / "weather" / "two_turns"
    case.mkdir(parents=True)
    (case / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    (ref,) = discover([case], tmp_path).cases
    outcome = asyncio.run(record_case(ref, pool, RunOptions(agents_dirs=(agents,)), tmp_path))
    assert outcome.error is None
    assert "llm_response:" in (case / "generated-recordings.yaml").read_text()  # the form ADK before 1.28 reads
    done = subprocess.run([str(python), str(TESTS / "adk_conformance.py"), "replay", str(agents / "ref_agent" / "agent.py"), str(case)],
                          check=True, capture_output=True, text=True, timeout=300)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"passed": True, "message": ""}


@pytest.mark.adk
def test_score_rescores_stored_results_as_the_version_asked(adk_reference_runs, monkeypatch, tmp_path):
    results, _ = adk_reference_runs["exact"]
    monkeypatch.chdir(tmp_path)
    scored = {}
    for version in ("1.19.0", "2.13.0"):
        code, out, err = run("score", str(results), "--json", "--adk-version", version)
        cases = {c["eval_id"]: c for c in json.loads(out)["cases"]}
        assert {c["scored_as"] for c in cases.values()} == {f"ADK {version}"}, err
        scored[version] = {m["name"]: m["score"] for m in cases["cjk"]["metrics"]}
    assert scored["1.19.0"] == {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.0}  # no CJK tokens before 2.6
    assert scored["2.13.0"]["response_match_score"] == pytest.approx(0.857142857) and "token_usage_v1" in scored["2.13.0"]
    code, out, err = run("score", str(results), "--adk-version", "one")
    assert (code, err) == (2, "error: --adk-version 'one' is not a version (say 1.19.0)\n")


@pytest.mark.adk
def test_the_table_says_why_a_metric_was_not_evaluated(adk_reference_runs, monkeypatch, tmp_path):
    results, _ = adk_reference_runs["any_order"]
    monkeypatch.chdir(tmp_path)
    code, out, err = run("score", str(results), "--adk-version", "1.21.0", "--color", "never")
    assert ("    tool_trajectory_avg_score not evaluated: `tool_trajectory_avg_score` has an invalid criterion "
            "(match_type 'any-order': ADK 1.21.0 takes 0 for EXACT, 1 for IN_ORDER or 2 for ANY_ORDER; names arrived in ADK 1.22)") in out
    assert out.rstrip().endswith("· scored as ADK 1.21.0 scores")
