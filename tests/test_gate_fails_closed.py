"""The release gate fails closed: a run whose files did not load, a configuration that does not load,
a report whose cases cannot be told apart (an id twice, a verdict missing) — never a pass. And two
cases that would share an id are a load error, never one of them silently dropped."""

from __future__ import annotations

import json

import pytest
from test_cli import run

CONVERSATION = [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]


def _project(root):
    (root / "agents" / "echo").mkdir(parents=True)
    (root / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (root / "agents" / "echo" / "x.evalset.json").write_text(json.dumps(
        {"eval_set_id": "s", "eval_cases": [{"eval_id": e, "conversation": CONVERSATION} for e in ("a", "b")]}))


def test_a_run_whose_eval_sets_did_not_load_fails_the_gate(tmp_path, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert run("run", "--report", "json=base.json")[0] == 0
    (tmp_path / "agents" / "echo" / "x.evalset.json").write_text("[")
    code, _, _ = run("run", "--report", "json=head.json")
    assert code == 2
    head = json.loads((tmp_path / "head.json").read_text())
    assert head["cases"] == [] and head["load_errors"][0]["file"] == "agents/echo/x.evalset.json"
    code, out, _ = run("gate", "--baseline", "base.json", "head.json")
    assert code == 1 and "every case file loads" in out and "agents/echo/x.evalset.json:1: invalid JSON" in out, out
    code, out, _ = run("gate")  # the kept runs: the broken one is kept too, and is the latest
    assert code == 1 and "1 file(s) of the run did not load" in out, out
    (tmp_path / "pyproject.toml").write_text("[tool.agentdiff.gate]\nmax_pass_rate_drop = 2\n")
    code, out, _ = run("gate", "--baseline", "base.json", "head.json")
    assert code == 1 and "max_pass_rate_drop = 2: cannot be checked: the run has no cases" in out, out


@pytest.mark.parametrize("config", ["[tool.agentdiff]\njobs = 4\njobs = 5\n[tool.agentdiff.gate]\nmax_case_tool_calls = 12\n",
                                    "\ufeff[tool.agentdiff.gate]\nmax_case_tool_calls = 12\n"])
def test_a_configuration_that_does_not_load_fails_the_gate_closed(tmp_path, monkeypatch, config):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert run("run", "--report", "json=r.json")[0] == 0
    (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
    code, out, err = run("gate", "--baseline", "r.json", "r.json")
    assert code == 2 and "the gate's rules cannot be told from a configuration that does not load" in err and "passed" not in out, err


@pytest.mark.parametrize("cases, said", [
    ([{"id": "a", "status": "failed"}, {"id": "a", "status": "passed"}], "the case 'a' is in it twice"),
    ([{"id": "a", "status": None}], "cases[0].status"),
])
def test_a_report_whose_cases_cannot_be_told_apart_is_refused(tmp_path, monkeypatch, cases, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base.json").write_text(json.dumps({"cases": [{"id": "a", "status": "passed"}]}))
    (tmp_path / "head.json").write_text(json.dumps({"cases": cases}))
    for command in ("gate", "compare"):
        code, out, err = run(command, "--baseline" if command == "gate" else "base.json", *(["base.json"] if command == "gate" else []), "head.json")
        assert code == 2 and said in err, (command, err)


def test_two_cases_that_would_share_an_id_are_a_load_error_never_one_silently_dropped(tmp_path, monkeypatch):
    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    folder = tmp_path / "agents" / "echo"
    (folder / "p.evalset.json").write_text(json.dumps({"eval_set_id": "p", "eval_cases": [
        {"eval_id": "q.evalset.json::r", "conversation": CONVERSATION}, {"eval_id": "case_1", "conversation": CONVERSATION}]}))
    failing = [{**CONVERSATION[0], "final_response": {"role": "model", "parts": [{"text": "something else entirely"}]}}]
    (folder / "p.evalset.json::q.evalset.json").write_text(json.dumps({"eval_set_id": "q", "eval_cases": [{"eval_id": "r", "conversation": failing}]}))
    monkeypatch.chdir(tmp_path)
    code, out, err = run("list")
    assert code == 2 and "which agents/echo/" in err and "rename one" in err, err
    code, _, err = run("run")
    assert code == 2 and "rename one" in err


def test_a_run_where_every_case_errored_fails_the_gate_and_errors_show_in_the_verdict(tmp_path, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base.json").write_text(json.dumps({"cases": [{"id": i, "status": "error", "error": "boom"} for i in ("a", "b")]}))
    (tmp_path / "head.json").write_text(json.dumps({"cases": [{"id": i, "status": "error", "error": "boom"} for i in ("a", "b")]}))
    code, out, _ = run("gate", "--baseline", "base.json", "head.json")
    assert code == 1 and "✗ the run's cases ran: every case of the run errored (2): nothing was checked (a, b)" in out, out
    (tmp_path / "head.json").write_text(json.dumps({"cases": [{"id": "a", "status": "error", "error": "boom"}, {"id": "b", "status": "passed"}]}))
    code, out, _ = run("gate", "--baseline", "base.json", "head.json", "--markdown")
    assert "1 case(s) of this run errored (a)" in out, out


def test_a_run_of_some_paths_is_not_the_whole_run_compare_and_gate_pick_by_default(tmp_path, monkeypatch):
    _project(tmp_path)
    (tmp_path / "agents" / "other").mkdir()
    (tmp_path / "agents" / "other" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (tmp_path / "agents" / "other" / "y.evalset.json").write_text(json.dumps({"eval_set_id": "y", "eval_cases": [{"eval_id": "c", "conversation": CONVERSATION}]}))
    monkeypatch.chdir(tmp_path)
    assert run("run")[0] == 0 and run("run")[0] == 0  # two whole runs: 3 cases each
    assert run("run", "agents/other")[0] == 0  # one folder: 1 case, kept, but not a whole run
    code, out, _ = run("gate")
    assert code == 0 and "not in this run" not in out, out  # the two whole runs were compared, not the folder's run
    code, out, err = run("compare", "--json")
    assert len(json.loads(out)["cases"]) == 3, out + err
