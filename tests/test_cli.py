"""`agentdiff score` and `agentdiff list` through the real entry point."""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ET

import pytest
from agentdiff.tui.cli import main
from conftest import ROOT

SAMPLE_RESULTS = ROOT / "sample_agents" / "home_automation" / ".adk" / "eval_history"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_score_of_the_sample_results_prints_a_table_and_fails_for_the_failing_case(monkeypatch):
    monkeypatch.chdir(ROOT)  # the eval set is found under the current directory: the case has its `run` id
    code, out, err = run("score", str(SAMPLE_RESULTS))
    assert code == 1, err
    assert "✗ failed        sample_agents/home_automation/home_automation.evalset.json::dim_living_room" in out
    assert "4 cases: 3 passed, 1 failed" in out


def test_score_json_follows_the_documented_schema():
    code, out, _ = run("score", str(SAMPLE_RESULTS), "--json")
    report = json.loads(out)
    assert code == 1
    assert report["summary"] == {"passed": 3, "failed": 1, "error": 0, "not_evaluated": 0, "flaky": 0, "new": 0, "total": 4, "usage": {}, "clusters": []}
    case = next(c for c in report["cases"] if c["eval_id"] == "dim_living_room")
    assert {k for k in case} >= {"id", "source", "eval_set_id", "eval_id", "agent", "mode", "status", "metrics", "layers", "error"}
    assert case["agent"] == "home_automation" and case["mode"] == "score" and case["status"] == "failed"
    trajectory = case["metrics"][0]
    assert trajectory == {**trajectory, "name": "tool_trajectory_avg_score", "score": 0.0, "threshold": 1.0, "status": "failed",
                          "per_invocation": [0.0, 0.0]}


def test_score_with_a_config_rescores_with_its_criteria(tmp_path):
    config = tmp_path / "test_config.json"
    config.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "ignore_args": True}}}))
    code, out, _ = run("score", str(SAMPLE_RESULTS), "--config", str(config), "--json")
    assert code == 0
    assert json.loads(out)["summary"]["passed"] == 4


def test_score_writes_every_report_kind(tmp_path):
    paths = {kind: tmp_path / f"out.{kind}" for kind in ("json", "junit", "markdown", "csv")}
    args = [a for kind, path in paths.items() for a in ("--report", f"{kind}={path}")]
    code, _, _ = run("score", str(SAMPLE_RESULTS), *args)
    assert code == 1
    assert json.loads(paths["json"].read_text())["summary"]["failed"] == 1
    suites = ET.fromstring(paths["junit"].read_text())
    assert (suites.get("tests"), suites.get("failures")) == ("4", "1")
    assert suites.find(".//testcase[@name='dim_living_room']/failure") is not None
    markdown = paths["markdown"].read_text()
    assert "| Mode | Total Tests | Passed | Failed | Success Rate |" in markdown
    assert "| score | 4 | 3 | 1 | 75.0% |" in markdown
    assert "### home_automation/dim_living_room (score)" in markdown
    first = paths["csv"].read_text()
    assert first.splitlines()[0].startswith("eval_set_id,eval_id,metric_name,threshold,score,eval_status")
    run("score", str(SAMPLE_RESULTS), "--report", f"csv={paths['csv']}")
    second = paths["csv"].read_text()
    assert second.count("eval_set_id,eval_id") == 1  # appended without a second header
    assert len(second.splitlines()) == 2 * len(first.splitlines()) - 1


def test_score_reports_a_bad_file_and_still_scores_the_good_one(tmp_path):
    shutil.copytree(SAMPLE_RESULTS, tmp_path / "history")
    (tmp_path / "history" / "broken.evalset_result.json").write_text('{"eval_set_id": ')
    code, out, err = run("score", str(tmp_path / "history"))
    assert code == 2
    assert "broken.evalset_result.json:1:" in err and "invalid JSON" in err
    assert "4 cases" in out


def test_score_of_a_missing_file_is_a_usage_error(tmp_path):
    code, _, err = run("score", str(tmp_path / "missing.json"))
    assert code == 2 and "no such file" in err


def test_list_shows_cases_and_load_errors(tmp_path):
    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "home", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "home" / "broken.test.json").write_text("[{\"reference\": 1}]")
    code, out, err = run("list", str(tmp_path))
    assert code == 2
    assert "dim_living_room  [1 turn; config" in out
    assert "broken.test.json" in err and "query" in err


def test_no_command_opens_the_tui_on_the_paths(monkeypatch):
    from agentdiff.tui.cli import watch

    opened = {}
    monkeypatch.setattr(watch, "command", lambda args, out, err: opened.setdefault("paths", args.paths) and 0)
    assert run("sample_agents")[0] == 0
    assert [p.name for p in opened["paths"]] == ["sample_agents"]


def test_watch_takes_the_run_flags_and_builds_its_options_with_the_shared_builder():
    from agentdiff.core.project.config import ProjectConfig
    from agentdiff.tui.cli import build_parser
    from agentdiff.tui.cli.options import run_options

    args = build_parser().parse_args(["watch", "sample_agents", "--streaming-mode", "sse", "--run-tools", "--num-runs", "3",
                                      "--mode", "live", "--timeout", "7", "--agents", "agents"])
    options = run_options(args, ProjectConfig(root=ROOT, num_runs=2, timeout=60.0))
    assert (options.streaming, options.run_tools, options.num_runs, options.mode, options.timeout) == ("sse", True, 3, "live", 7.0)
    assert options.agents_dirs[0].name == "agents"
    defaults = run_options(build_parser().parse_args(["watch"]), ProjectConfig(root=ROOT, num_runs=2, timeout=60.0))
    assert (defaults.streaming, defaults.run_tools, defaults.num_runs, defaults.timeout) == (None, False, 2, 60.0)


def test_watch_passes_the_built_options_to_the_app(monkeypatch):
    """`watch` opens the app with the options of the shared builder (a fake app module: no TUI opens)."""
    import sys
    import types

    from agentdiff.tui.cli import watch

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(watch, "has_terminal", lambda *streams: True)  # pytest has no TTY
    opened = {}

    class FakeApp:
        async def run_async(self):
            opened["ran"] = True

    def create_app(root, paths, *, pool=None, options=None, **_):
        opened.update(paths=paths, pool=pool, options=options)
        return FakeApp()

    monkeypatch.setitem(sys.modules, "agentdiff.tui.app", types.SimpleNamespace(create_app=create_app))
    assert run("watch", "sample_agents", "--streaming-mode", "sse", "--run-tools", "--num-runs", "2", "--jobs", "3")[0] == 0
    options = opened["options"]
    assert opened["ran"] and [p.name for p in opened["paths"]] == ["sample_agents"]
    assert (options.streaming, options.run_tools, options.num_runs) == ("sse", True, 2)
    assert opened["pool"].jobs == 3


def test_help_lists_every_command():
    with pytest.raises(SystemExit) as exit_info:
        run("--help")
    assert exit_info.value.code == 0


def test_bad_report_spec_is_a_usage_error():
    with pytest.raises(SystemExit) as exit_info:
        run("score", str(SAMPLE_RESULTS), "--report", "pdf=x")
    assert exit_info.value.code == 2
