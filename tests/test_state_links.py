"""A cloned repository can commit anything under `.agentdiff/`: symlinks for its folders, planted journal
entries. agentdiff never follows them out (nothing outside is pruned, written or deleted) and never
lets an entry write into `.git` (whose config is code git runs)."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
from test_cli import run

CONVERSATION = [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]


def _project(root):
    (root / "agents" / "echo").mkdir(parents=True)
    (root / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (root / "agents" / "echo" / "x.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": CONVERSATION}]}))


def _victim(folder):
    """Another place's files, old enough that every pruning rule would take them."""
    (folder / "old" / "docs").mkdir(parents=True)
    (folder / "old" / "docs" / "thesis.txt").write_text("precious")
    (folder / "loose.txt").write_text("precious too")
    old = time.time() - 3 * 86400
    for path in [folder / "old", folder / "old" / "docs", folder / "old" / "docs" / "thesis.txt", folder / "loose.txt"]:
        os.utime(path, (old, old))
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("linked", [".agentdiff", ".agentdiff/journal", ".agentdiff/runs", ".agentdiff/blobs", ".agentdiff/judge-cache",
                                    ".agentdiff/set-aside"])
def test_a_symlinked_state_folder_is_never_followed(tmp_path, monkeypatch, linked):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    before = _victim(elsewhere)
    _project(project)
    (project / linked).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere, project / linked)
    monkeypatch.chdir(project)
    for argv in (["list"], ["run"], ["accept", "agents/echo/x.evalset.json::a", "--yes"], ["undo"]):
        code, _, err = run(*argv)
        assert "Traceback" not in err, (argv, err)
    assert sorted(str(p.relative_to(elsewhere)) for p in elsewhere.rglob("*")) == before
    assert (elsewhere / "old" / "docs" / "thesis.txt").read_text() == "precious"


def test_a_planted_entry_never_writes_into_git(tmp_path, monkeypatch):
    _project(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    config = (tmp_path / ".git" / "config").read_text()
    planted = tmp_path / ".agentdiff" / "journal" / "00000001"
    planted.mkdir(parents=True)
    (planted / "0-before").write_text('[core]\n\tfsmonitor = "touch pwned; false"\n')
    for path in (".git/config", "agents/../.git/config"):
        (planted / "entry.json").write_text(json.dumps({"id": "00000001", "reason": "accept", "time": 1.0, "seq": 1, "state": "pending",
                                                        "files": [{"path": path, "before": "0000", "after": "1111", "backup": "0-before", "linked": True}]}))
        monkeypatch.chdir(tmp_path)
        code, _, err = run("list")
        assert "rolled back" not in err and (tmp_path / ".git" / "config").read_text() == config, err
    assert not (tmp_path / "pwned").exists()


def test_the_gate_fails_a_run_with_no_cases_or_none_of_the_baselines(tmp_path, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert run("run", "--report", "json=base.json")[0] == 0
    assert run("run", "nonexist", "--report", "json=empty.json")[0] == 2
    code, out, _ = run("gate", "--baseline", "base.json", "empty.json")
    assert code == 1 and "the run has no cases: nothing was checked" in out, out
    other = json.loads((tmp_path / "base.json").read_text())
    other["cases"] = [{**case, "id": "elsewhere/" + case["id"]} for case in other["cases"]]
    (tmp_path / "moved.json").write_text(json.dumps(other))
    code, out, _ = run("gate", "--baseline", "base.json", "moved.json")
    assert code == 1 and "none of the baseline's 1 case(s) are in the run" in out, out


def test_merged_shards_keep_their_load_errors_and_the_gate_fails_on_them(tmp_path, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert run("run", "--report", "json=base.json")[0] == 0
    (tmp_path / "agents" / "echo" / "y.evalset.json").write_text("{broken")
    for k in (1, 2):
        run("run", "--shard", f"{k}/2", "--report", f"json=s{k}.json")
    code, _, err = run("merge", "s1.json", "s2.json", "--report", "json=merged.json")
    assert code == 2 and "agents/echo/y.evalset.json" in err
    assert json.loads((tmp_path / "merged.json").read_text())["load_errors"]
    code, out, _ = run("gate", "--baseline", "base.json", "merged.json")
    assert code == 1 and "every case file loads" in out


@pytest.mark.parametrize("patch, said", [({"seconds": float("nan")}, "cases[0].seconds"), ({"tool_calls": float("inf")}, "cases[0].tool_calls"),
                                         ({"usage": {"agent": {"m": {"input": 1e308}}}}, "cases[0].usage"), ({"seconds": -1}, "cases[0].seconds")])
def test_a_report_with_measures_that_are_not_finite_counts_is_refused(tmp_path, monkeypatch, patch, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base.json").write_text(json.dumps({"cases": [{"id": "a", "status": "passed", "seconds": 1}]}))
    (tmp_path / "head.json").write_text(json.dumps({"cases": [{"id": "a", "status": "passed", **patch}]}))
    code, _, err = run("gate", "--baseline", "base.json", "head.json")
    assert code == 2 and said in err, err


def test_per_case_rules_on_a_run_that_reports_none_of_it_cannot_be_checked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agentdiff.toml").write_text("[gate]\nmax_case_tool_calls = 3\n")
    (tmp_path / "r.json").write_text(json.dumps({"cases": [{"id": "a", "status": "passed", "tool_calls": None}]}))
    code, out, _ = run("gate", "--baseline", "r.json", "r.json")
    assert code == 1 and "max_case_tool_calls = 3: cannot be checked: the run reports no tool calls" in out, out


def test_gate_junit_and_reports_are_never_written_over_the_projects_files(tmp_path, monkeypatch):
    _project(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "eval" / "data").mkdir(parents=True)
    evalset = tmp_path / "eval" / "data" / "simple_eval.json"
    evalset.write_text(json.dumps({"eval_set_id": "simple", "eval_cases": [{"eval_id": "b", "conversation": CONVERSATION}]}))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_echo.py").write_text('AgentEvaluator.evaluate("echo", "eval/data/simple_eval.json")\n')
    monkeypatch.chdir(tmp_path)
    assert run("run", "--report", "json=r.json")[0] in (0, 1)
    config = (tmp_path / ".git" / "config").read_text()
    for target in (".git/config", "agents/echo/x.evalset.json"):
        code, _, err = run("gate", "--baseline", "r.json", "r.json", "--junit", target)
        assert code == 2 and "cannot write the junit report" in err, err
    assert (tmp_path / ".git" / "config").read_text() == config
    before = evalset.read_text()
    code, _, err = run("run", "--report", "json=eval/data/simple_eval.json")
    assert code == 2 and "it is one of the project's own files" in err, err
    assert evalset.read_text() == before


def test_a_kept_run_agentdiff_did_not_make_is_never_latest(tmp_path, monkeypatch):
    import shutil

    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert run("run")[0] == 0
    (made,) = (tmp_path / ".agentdiff" / "runs").iterdir()
    for planted in ("99991231-000000-000aaaa", "zz-planted"):  # a name from the future, a name agentdiff never gives
        shutil.copytree(made, made.parent / planted)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(made, elsewhere)
    os.symlink(elsewhere, made.parent / "20000101-000000-000bbbb")
    from agentdiff.core.reports.kept_runs import kept

    assert kept(tmp_path) == [made]


def test_a_merge_missing_a_shard_is_refused(tmp_path, monkeypatch):
    _project(tmp_path)
    (tmp_path / "agents" / "echo" / "y.evalset.json").write_text(json.dumps({"eval_set_id": "y", "eval_cases": [{"eval_id": "b", "conversation": CONVERSATION}]}))
    monkeypatch.chdir(tmp_path)
    for k in (1, 2):
        run("run", "--shard", f"{k}/2", "--report", f"json=s{k}.json")
    assert json.loads((tmp_path / "s1.json").read_text())["shard"] == "1/2"
    code, _, err = run("merge", "s1.json")
    assert code == 2 and "shard 2/2 is missing" in err, err
    assert run("merge", "s1.json", "s2.json")[0] == 0


def test_adk_results_are_never_written_through_a_committed_link(tmp_path, monkeypatch):
    _project(tmp_path)
    (tmp_path / "agents" / "echo" / "x.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": CONVERSATION}]}))
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, tmp_path / "agents" / "echo" / ".adk")
    monkeypatch.chdir(tmp_path)
    code, _, err = run("run", "agents", "--report", "adk=agents")
    assert code == 2 and "is a symlink" in err, err
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("rename", ["file", "eval_id"])
def test_a_baseline_changed_under_a_new_name_still_needs_its_sign_off(tmp_path, monkeypatch, rename):
    _project(tmp_path)
    evalset = tmp_path / "agents" / "echo" / "x.evalset.json"
    evalset.write_text(json.dumps(json.loads(evalset.read_text()), indent=2))  # as files are written: a line a value
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "main"], cwd=tmp_path, check=True)
    subprocess.run(["git", "checkout", "-qb", "feature"], cwd=tmp_path, check=True)
    data = json.loads(evalset.read_text())
    data["eval_cases"][0]["conversation"][0]["final_response"]["parts"][0]["text"] = "bye"  # the expectation rewritten
    if rename == "eval_id":
        data["eval_cases"][0]["eval_id"] = "renamed"
    evalset.write_text(json.dumps(data, indent=2))
    if rename == "file":
        subprocess.run(["git", "mv", "agents/echo/x.evalset.json", "agents/echo/x2.evalset.json"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qam", "renamed"], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("baselines", "--since", "main")
    assert "no baseline was re-recorded" not in out and ("renamed" in out or "x2.evalset.json" in out), out


def test_two_configurations_and_a_report_over_a_script_are_refused(tmp_path, monkeypatch):
    _project(tmp_path)
    (tmp_path / "agentdiff.toml").write_text("jobs = 2\n")
    (tmp_path / "pyproject.toml").write_text("[tool.agentdiff.gate]\nrequire_signoff = true\n")
    (tmp_path / "build.sh").write_text("echo build\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run("gate", "--baseline", "x", "y")
    assert code == 2 and "pyproject.toml's [tool.agentdiff] configures agentdiff too" in err, err
    (tmp_path / "pyproject.toml").unlink()
    code, _, err = run("run", "--report", "json=build.sh")
    assert code == 2 and "one of the project's own files" in err and (tmp_path / "build.sh").read_text() == "echo build\n"
