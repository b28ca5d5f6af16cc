"""The pytest plugin through pytester: eval cases and conformance cases as test items, one per case,
selectable with -k, with the drop-in's failure message; -x, --lf and JUnit output; inert without
--agentdiff."""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT

pytestmark = pytest.mark.adk


@pytest.fixture
def project(pytester: pytest.Pytester):
    agents = pytester.path / "agents"
    shutil.copytree(ROOT / "sample_agents" / "home_automation", agents / "home_automation", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    shutil.copy(ROOT / "sample_agents" / "demo_model.py", agents / "demo_model.py")
    return pytester


def test_each_case_is_a_test_item_and_a_failure_reads_like_the_drop_in(project):
    result = project.runpytest_subprocess("--agentdiff", "agents", "-v", "--junitxml=junit.xml")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines([
        "*conformance/lights/kitchen_on_then_check/spec.yaml::kitchen_on_then_check PASSED*",
        "*home_automation.evalset.json::turn_on_kitchen_light PASSED*",
        "*home_automation.evalset.json::dim_living_room FAILED*",
    ])
    result.stdout.fnmatch_lines(["*✗ dim_living_room (failed): tool_trajectory_avg_score: 0.0 < threshold 1.0*",
                                 "*set_device_state args.brightness missing (expected 40)*"])
    junit = (project.path / "junit.xml").read_text()
    assert 'name="dim_living_room"' in junit and junit.count("<testcase") == 5


def test_k_x_and_lf_work_as_for_any_test(project):
    project.runpytest_subprocess("--agentdiff", "agents", "-k", "dim_living_room").assert_outcomes(failed=1)
    stopped = project.runpytest_subprocess("--agentdiff", "agents", "-x", "-p", "no:randomly")
    assert stopped.parseoutcomes().get("failed") == 1 and stopped.parseoutcomes().get("passed", 0) < 4
    again = project.runpytest_subprocess("--agentdiff", "agents", "--lf")
    again.assert_outcomes(failed=1)  # only the case that failed last time
    # the eval case and the conformance case, the conformance one run live
    project.runpytest_subprocess("--agentdiff", "agents", "--agentdiff-mode", "live", "-k", "kitchen").assert_outcomes(passed=2)


def test_without_agentdiff_the_plugin_collects_nothing(project):
    result = project.runpytest_subprocess("agents")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
