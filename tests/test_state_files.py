"""agentdiff's own state under `.agentdiff/` that cannot be read — a history nested past reading, cut
short or of another shape; a kept run's report that is not a report — is set aside whole (never
overwritten with this session's cases), said once, and fails no command: `run`, the TUI, `compare`,
`gate`, `run --shard`, `run --changed-since` go on."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from agentdiff.core.formats.set_aside import SET_ASIDE_DIR
from agentdiff.core.workbench.history import HISTORY_FILE
from test_cli import run
from fake_pool import CannedPool
from tui_support import copy_samples, make_app, settle
from workbench_support import history_rows

AGENT = "async def run_turn(ctx):\n    return ctx.message\n"


def _project(root, cases=("a", "b")):
    (root / "agents" / "echo").mkdir(parents=True)
    (root / "agents" / "echo" / "agent.py").write_text(AGENT)
    (root / "agents" / "echo" / "test_config.json").write_text('{"criteria": {"response_match_score": 0.5}}')
    conversation = [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]
    (root / "agents" / "echo" / "s.evalset.json").write_text(json.dumps(
        {"eval_set_id": "s", "eval_cases": [{"eval_id": c, "conversation": conversation} for c in cases]}))


HISTORIES = {
    "nested 50,000 deep": "[" * 50_000 + "]" * 50_000,
    "cut short": '{"agents/echo/s.evalset.json::zzz": [{"time": 1, "status": "passed"',
    "a list": "[1, 2, 3]",
}


@pytest.mark.parametrize("kind", HISTORIES)
def test_a_history_that_cannot_be_read_is_set_aside_said_once_and_the_run_goes_on(tmp_path, monkeypatch, kind):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    history = tmp_path / ".agentdiff" / "history.json"
    history.parent.mkdir()
    history.write_text(HISTORIES[kind])
    code, out, err = run("run")
    assert code == 0, out + err
    assert err.count("warning: .agentdiff/history.json cannot be read (") == 1, err
    (aside,) = (tmp_path / SET_ASIDE_DIR).iterdir()
    assert aside.read_text() == HISTORIES[kind]  # kept whole, never written over with this run's cases
    assert set(history_rows(tmp_path / HISTORY_FILE)) == {"agents/echo/s.evalset.json::a", "agents/echo/s.evalset.json::b"}
    code, _, err = run("run")
    assert code == 0 and "warning" not in err  # said once: the new history reads


def test_history_entries_of_another_shape_are_dropped_one_by_one(tmp_path, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    history = tmp_path / ".agentdiff" / "history.json"
    history.parent.mkdir()
    keep = {"time": 5.0, "status": "passed", "score": 1.0}
    history.write_text(json.dumps({"other::case": [keep, "x", 7, {"time": "soon"}, {"time": 6, "batch": "b"}], "x::y": 3}))
    code, _, err = run("run")
    assert code == 0 and "warning" not in err, err
    assert history_rows(tmp_path / HISTORY_FILE)["other::case"] == [keep]  # another case's history is kept, moved into the database
    assert not history.exists()


async def test_the_tui_starts_on_a_history_nested_past_reading_and_says_so(tmp_path):
    copy_samples(tmp_path)
    history = tmp_path / ".agentdiff" / "history.json"
    history.parent.mkdir()
    history.write_text(HISTORIES["nested 50,000 deep"])
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        said = [n.message for n in app._notifications]
        assert any(".agentdiff/history.json cannot be read (nested too deeply): set aside" in message for message in said), said
    assert list((tmp_path / SET_ASIDE_DIR).iterdir())


REPORTS = {
    "a list": "[]",
    "a number for its summary": '{"summary": 7}',
    "cases of another shape": '{"cases": [1, "x", {"id": 5}], "run": 7}',
    "a score that is text": '{"cases": [{"id": "a", "status": "passed", "metrics": [{"name": "m", "score": "x"}]}]}',
    "an unknown verdict": '{"cases": [{"id": "a", "status": "fine"}]}',
    "nested past reading": "[" * 50_000 + "]" * 50_000,
}


@pytest.mark.parametrize("kind", REPORTS)
def test_a_kept_report_of_any_other_shape_is_set_aside_with_one_notice(tmp_path, kind):
    from agentdiff.core.formats.set_aside import take_notices
    from agentdiff.core.reports.kept_runs import kept_runs

    take_notices()
    good = {"cases": [{"id": "a", "status": "passed"}]}
    for name, text in (("20000101-000000-000aaaa", REPORTS[kind]), ("20000101-000001-000bbbb", json.dumps(good))):
        (tmp_path / ".agentdiff" / "runs" / name).mkdir(parents=True)
        (tmp_path / ".agentdiff" / "runs" / name / "report.json").write_text(text)
    assert [run.name for run in kept_runs(tmp_path)] == ["20000101-000001-000bbbb"]
    (notice,) = take_notices()
    assert notice.startswith(".agentdiff/runs/20000101-000000-000aaaa cannot be read (not ") and "set aside as" in notice


@pytest.mark.parametrize("kind", ["a list", "cases of another shape"])
def test_a_kept_report_that_is_not_a_report_is_set_aside_and_every_command_goes_on(tmp_path, monkeypatch, kind):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "agents"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "agents"], cwd=tmp_path, check=True)
    assert run("run")[0] == 0
    (first,) = (tmp_path / ".agentdiff" / "runs").iterdir()
    for name in ("20000101-000000-000aaaa", "20000101-000001-000bbbb"):  # two older kept runs: copies of the one made
        shutil.copytree(first, first.parent / name)
    runs = sorted((tmp_path / ".agentdiff" / "runs").iterdir())
    (runs[0] / "report.json").write_text(REPORTS[kind])
    commands = [("compare",), ("gate",), ("run", "--shard", "1/2"), ("run", "--changed-since", "HEAD")]
    said = ""
    for argv in commands:
        code, out, err = run(*argv)
        assert code in (0, 1), (argv, err)
        said += err
    assert said.count(f"warning: .agentdiff/runs/{runs[0].name} cannot be read (not ") == 1, said
    assert not runs[0].exists() and len(list((tmp_path / SET_ASIDE_DIR).iterdir())) == 1
    code, _, err = run("compare", str(tmp_path / SET_ASIDE_DIR / next((tmp_path / SET_ASIDE_DIR).iterdir()).name))
    assert code == 2 and "error: " in err and "Traceback" not in err  # named by the user: an error, one line


def test_the_state_folder_agentdiff_makes_ignores_itself_and_one_a_team_made_is_left_as_it_is(tmp_path):
    """As pytest, ruff and mypy do with their caches: `git add -A` after a first run stages nothing of it."""
    import subprocess
    import sys

    from agentdiff.core.formats.set_aside import made_state_dir
    from workbench_support import echo_project

    echo_project(tmp_path, {"echo": ["hello"]})
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run([sys.executable, "-m", "agentdiff.tui.cli", "run"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".agentdiff" / "runs").is_dir()  # a kept run, and the history, are there …
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path, capture_output=True, text=True)
    assert ".agentdiff" not in status.stdout and "agents/echo" in status.stdout  # … and git does not see them
    kept = tmp_path / "kept" / ".agentdiff"
    kept.mkdir(parents=True)
    made_state_dir(kept / "runs" / "x")
    assert not (kept / ".gitignore").exists()  # a folder the team made (and may commit) is theirs
