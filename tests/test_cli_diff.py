"""`agentdiff diff CASE` through the real entry point, on the sample agent's stored ADK runs."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT
from test_cli import SAMPLE_RESULTS, run
from test_diff_locations import write_conformance_case

CASE = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"


@pytest.fixture(autouse=True)
def in_repo(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_text_diff_names_the_first_divergence_and_where_to_fix_it():
    code, out, err = run("diff", "dim_living_room")
    assert code == 1, err
    assert out.splitlines()[0] == CASE
    assert "first divergence: turn 1 · tool_calls · set_device_state args.brightness missing (expected 40)" in out
    assert "expected value at sample_agents/home_automation/home_automation.evalset.json:40" in out
    assert "The living room lamp is now on[- at 40%-]." in out
    assert "  tool_calls  changed  " in out and "  request     absent   " in out


def test_json_diff_follows_the_documented_schema():
    code, out, _ = run("diff", CASE, "--json")
    assert code == 1
    data = json.loads(out)
    assert {k for k in data} == {
        "schema_version", "agentdiff_version", "case", "actual_source", "criteria", "same", "error",
        "first_divergence", "layers", "divergences", "turns", "session",
    }
    assert data["case"] == {"id": CASE, "source": "sample_agents/home_automation/home_automation.evalset.json", "kind": "eval_set"}
    assert data["criteria"] == {"match_type": "EXACT", "ignore_args": False, "response_threshold": 0.6, "trajectory_judged": True}
    first = data["first_divergence"]
    assert (first["layer"], first["turn_index"], first["path"], first["counts"]) == ("tool_calls", 0, "args.brightness", True)
    assert first["source"]["line"] == 40
    (row,) = data["turns"][0]["tool_calls"]["rows"]
    assert row["changes"] == [{"kind": "removed", "path": "args.brightness", "expected": 40}]
    response = data["turns"][0]["response"]
    assert response["passed"] is True and response["words"][-2:] == [["delete", " at 40%"], ["equal", "."]]
    assert [layer["status"] for layer in data["layers"]] == ["absent", "changed", "changed", "absent"]


def test_judged_by_names_only_the_metrics_the_config_gives():
    from agentdiff.core.diff.criteria import criteria_from_config
    from agentdiff.core.diff.model import CaseDiff
    from agentdiff.core.formats.eval_config import EvalConfig
    from agentdiff.core.reports.diff_text import render_diff_text

    def judged(criteria: dict) -> str:
        text = render_diff_text(CaseDiff("c", criteria_from_config(EvalConfig(criteria=criteria)), (), None, (), ()))
        return next(line for line in text.splitlines() if line.startswith("judged by: "))

    assert judged({"response_match_score": 0.7}) == "judged by: response ROUGE-1 ≥ 0.7"
    assert judged({"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}) == "judged by: tool calls EXACT · response ROUGE-1 ≥ 0.8"
    assert judged({"safety_v1": 0.8}) == "judged by: neither tool calls nor a response match (its other metrics decide)"


def test_a_case_whose_run_matches_exits_zero():
    code, out, _ = run("diff", "turn_on_kitchen_light")
    assert code == 0
    assert "no divergences" in out


def test_unknown_and_ambiguous_cases_are_usage_errors(tmp_path):
    code, _, err = run("diff", "no_such_case")
    assert code == 2 and "no case matches 'no_such_case'" in err
    for name in ("a", "b"):
        (tmp_path / f"{name}.evalset.json").write_text(json.dumps({"eval_set_id": name, "eval_cases": [{"eval_id": "same", "conversation": []}]}))
    code, _, err = run("diff", "same", str(tmp_path))
    assert code == 2 and "matches 2 cases" in err


def test_an_explicit_results_file_must_hold_the_case(tmp_path):
    other = tmp_path / "other.evalset_result.json"
    other.write_text(json.dumps({"eval_set_result_id": "x", "eval_set_id": "home_automation", "eval_case_results": []}))
    code, _, err = run("diff", "dim_living_room", "--actual", str(other))
    assert code == 2 and "has no run of 'dim_living_room'" in err
    stored = sorted(SAMPLE_RESULTS.glob("*.evalset_result.json"))[0]
    code, out, _ = run("diff", "dim_living_room", "--actual", str(stored))
    assert code == 1 and "args.brightness" in out


def test_a_conformance_case_whose_agent_cannot_be_found_says_what_was_tried(tmp_path, monkeypatch):
    write_conformance_case(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, err = run("diff", "orders/status")
    assert code == 2
    assert "no agent found for this case; tried agent 'support' (from spec.yaml) in orders/status, orders, ." in err


def test_diff_json_stays_standard_json_when_an_arg_is_nan(tmp_path, monkeypatch):
    import json as _json

    from test_cli import run

    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (tmp_path / "agents" / "echo" / "s.evalset.json").write_text(
        '{"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]},'
        ' "intermediate_data": {"tool_uses": [{"name": "t", "args": {"x": NaN}}]}}]}]}')
    monkeypatch.chdir(tmp_path)
    code, out, err = run("diff", "a", "--run", "--json")
    assert code in (0, 1), err
    def bare(name):  # NaN, Infinity: not JSON
        raise ValueError(f"a bare {name} in diff --json")

    document = _json.loads(out, parse_constant=bare)
    assert document["first_divergence"]["expected"]["args"] == {"x": "NaN"}


def test_a_query_that_names_no_case_offers_the_ids_that_hold_it_or_the_nearest(monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, err = run("diff", "kitchen", "sample_agents/home_automation")
    assert code == 2 and err.splitlines() == [
        "error: no case matches 'kitchen'; did you mean one of these?",
        "  sample_agents/home_automation/home_automation.evalset.json::turn_on_kitchen_light",
        "  sample_agents/home_automation/conformance/lights/kitchen_on_then_check"], err
    code, out, err = run("diff", "dim_livng_room", "sample_agents/home_automation")
    assert "  sample_agents/home_automation/home_automation.evalset.json::dim_living_room" in err.splitlines()
    code, out, err = run("diff", "zzz", "sample_agents/home_automation")
    assert err.strip() == "error: no case matches 'zzz' (see `agentdiff list`)"
