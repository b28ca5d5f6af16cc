"""Meeting ADK users where they are: `agentdiff.core.testing.AgentEvaluator` against ADK's own on the
same agent and eval set (same pass/fail and scores, both directions), an ADK-style test file run
unchanged but for its import, and `run --report adk=DIR` read back by ADK's own results manager."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from adk_reference import run_agent_evaluator
from conftest import ROOT

pytestmark = pytest.mark.adk
SAMPLES = ROOT / "sample_agents"


def project(tmp_path: Path) -> Path:
    """The home automation sample as an ADK project: agents/home_automation, agents/demo_model.py."""
    agents = tmp_path / "agents"
    shutil.copytree(SAMPLES / "home_automation", agents / "home_automation", ignore=shutil.ignore_patterns("__pycache__", ".adk", "conformance"))
    shutil.copy(SAMPLES / "demo_model.py", agents / "demo_model.py")
    return agents


def by_case(result) -> dict[str, list[tuple[int, dict[str, float]]]]:
    """eval_id → each run's (final status, {metric: score}), in ADK's result objects."""
    out: dict[str, list] = {}
    for case in result.eval_case_results:
        scores = {m.metric_name: round(m.score, 6) for m in case.overall_eval_metric_results
                  if m.score is not None and m.metric_name != "invocation_duration_v1"}  # wall time differs run to run
        out.setdefault(case.eval_id, []).append((case.final_eval_status.value, scores))
    return {k: sorted(v, key=lambda run: json.dumps(run)) for k, v in out.items()}


def test_the_drop_in_passes_fails_and_scores_as_adk_s_own_agent_evaluator(tmp_path, monkeypatch):
    from agentdiff.core.testing import AgentEvaluator
    from google.adk.evaluation.eval_set import EvalSet
    from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager

    agents = project(tmp_path)
    monkeypatch.syspath_prepend(str(agents))
    eval_set = json.loads((agents / "home_automation" / "home_automation.evalset.json").read_text())
    criteria = json.loads((agents / "home_automation" / "test_config.json").read_text())["criteria"]
    theirs = run_agent_evaluator("home_automation", eval_set, criteria, agents, "home_automation", num_runs=2)
    manager = LocalEvalSetResultsManager(agents_dir=str(tmp_path / "ours"))
    with pytest.raises(AssertionError) as failed:
        asyncio.run(AgentEvaluator.evaluate_eval_set(
            "home_automation", EvalSet.model_validate(eval_set), criteria=criteria, num_runs=2, print_detailed_results=False,
            app_name="home_automation", eval_set_results_manager=manager))
    message = str(failed.value)
    assert message.startswith("1 of 4 eval case(s) of home_automation did not pass:") and "✗ dim_living_room (failed)" in message
    assert "set_device_state args.brightness missing (expected 40)" in message and "[- at 40%-]" in message
    theirs_loaded = LocalEvalSetResultsManager(agents_dir=str(agents)).get_eval_set_result("home_automation", theirs.name.removesuffix(".evalset_result.json"))
    (ours_id,) = manager.list_eval_set_results("home_automation")  # written by ADK's own manager from our results
    ours = manager.get_eval_set_result("home_automation", ours_id)
    expected = by_case(theirs_loaded)
    assert by_case(ours) == expected
    assert {status for runs in expected.values() for status, _ in runs} == {1, 2}  # both directions: passes and a failure


def test_an_adk_style_test_file_runs_unchanged_but_for_its_import(tmp_path):
    agents = project(tmp_path)
    tests = agents.parent / "tests"
    tests.mkdir()
    shutil.copy(agents / "home_automation" / "home_automation.evalset.json", tests / "home.test.json")
    shutil.copy(agents / "home_automation" / "test_config.json", tests / "test_config.json")
    adk_style = (
        "import pytest\n"
        "from google.adk.evaluation.agent_evaluator import AgentEvaluator\n\n\n"
        "@pytest.mark.asyncio\n"
        "async def test_home_automation():\n"
        '    await AgentEvaluator.evaluate("home_automation", "tests", num_runs=2)\n'
    )
    (tests / "test_agent.py").write_text(adk_style.replace("from google.adk.evaluation.agent_evaluator import", "from agentdiff.core.testing import"))
    (tests / "conftest.py").write_text(f"import sys\nsys.path.insert(0, {str(agents)!r})\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tests), str(tests)],
                          cwd=agents.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "AssertionError: 1 of 4 eval case(s) of tests/home.test.json did not pass:" in done.stdout
    assert "✗ dim_living_room (failed): tool_trajectory_avg_score: 0.0 < threshold 1.0" in done.stdout
    assert "runs = [CaseRun(" not in done.stdout  # the message, not agentdiff's frames


def test_run_writes_results_adk_s_own_manager_reads(tmp_path, monkeypatch):
    from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
    from test_cli import run

    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    out_dir = tmp_path / "history_root"
    code, _, err = run("run", "agents", "--report", f"json={tmp_path / 'r.json'}", "--report", f"adk={out_dir}")
    assert code == 1, err
    manager = LocalEvalSetResultsManager(agents_dir=str(out_dir))
    (result_id,) = manager.list_eval_set_results("home_automation")
    result = manager.get_eval_set_result("home_automation", result_id)
    ours = {c["eval_id"]: c["status"] for c in json.loads((tmp_path / "r.json").read_text())["cases"] if "::" in c["id"]}
    adk = {case.eval_id: case.final_eval_status.value for case in result.eval_case_results}
    assert adk == {eval_id: 1 if status == "passed" else 2 for eval_id, status in ours.items()}
    assert len(result.eval_case_results) == 4  # one repeat each: the project sets no num_runs
    code, out, _ = run("score", str(next((out_dir / "home_automation" / ".adk" / "eval_history").glob("*.evalset_result.json"))))
    assert "dim_living_room" in out and "✗ failed" in out


def test_journey_checks_beside_the_eval_file_count_in_the_drop_in_too(tmp_path, monkeypatch):
    from agentdiff.core.testing import AgentEvaluator

    agents = project(tmp_path)
    monkeypatch.syspath_prepend(str(agents))
    monkeypatch.chdir(tmp_path)
    tests = tmp_path / "tests"
    tests.mkdir()
    shutil.copy(agents / "home_automation" / "home_automation.evalset.json", tests / "home.test.json")
    shutil.copy(agents / "home_automation" / "test_config.json", tests / "test_config.json")
    (tests / "agentdiff-checks.yaml").write_text("cases:\n  turn_on_kitchen_light: {forbidden: [set_device_state]}\n")
    with pytest.raises(AssertionError) as failed:
        asyncio.run(AgentEvaluator.evaluate("home_automation", "tests", num_runs=1, print_detailed_results=False))
    message = str(failed.value)
    assert message.startswith("2 of 4 eval case(s)") and "✗ turn_on_kitchen_light (failed): check: forbidden set_device_state" in message


def test_results_for_an_adk_before_1_22_are_written_as_it_reads_them(tmp_path):
    """ADK 1.19–1.21 keep an EvalSetResult as a JSON string holding the JSON; agentdiff's reader takes both."""
    from agentdiff.core.formats.adk_results import load_eval_set_result
    from agentdiff.core.reports.adk_results_writer import write_adk_results
    from agentdiff.core.scoring.results import CaseResult, CaseStatus, RunRecord

    def case(scored_as):
        return CaseResult(id="s.evalset.json::a", source="s", eval_set_id="s", eval_id="a", agent="app", mode="live",
                          status=CaseStatus.PASSED, runs=(RunRecord(actual=(), expected=None, status=CaseStatus.PASSED),), scored_as=scored_as)

    (old,) = write_adk_results([case("ADK 1.19.0")], tmp_path / "old")
    (new,) = write_adk_results([case("ADK 2.13.0")], tmp_path / "new")
    assert isinstance(json.loads(old.read_text()), str) and isinstance(json.loads(new.read_text()), dict)
    for path in (old, new):
        loaded, errors = load_eval_set_result(path)
        assert errors == [] and loaded.result.eval_case_results[0].eval_id == "a"
