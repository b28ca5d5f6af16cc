"""The JUnit and Markdown report writers (`core/reports/junit.py`, `markdown.py`): `CaseResult`s
built by hand (passed, failed with metrics and a changed layer, error, flaky, not evaluated) in,
text out. JUnit is read back with ElementTree; Markdown is checked line by line."""

from __future__ import annotations

import platform
import xml.etree.ElementTree as ET

from agentdiff.core import __version__
from agentdiff.core.reports.junit import render_junit
from agentdiff.core.reports.markdown import render_markdown
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import (
    CaseResult,
    CaseStatus,
    LayerSummary,
    MetricResult,
)

HOME = "agents/home/home.evalset.json"
TRIPS = "agents/trips/trips.evalset.json"


def case(source: str, set_id: str | None, eval_id: str, status: CaseStatus, mode: str = "live", **extra) -> CaseResult:
    return CaseResult(id=f"{source}::{eval_id}", source=source, eval_set_id=set_id, eval_id=eval_id, agent="home",
                      mode=mode, status=status, **extra)


def metric(name: str, score: float | None, threshold: float | None, status: MetricStatus, reason: str | None = None) -> MetricResult:
    return MetricResult(name=name, score=score, threshold=threshold, status=status, reason=reason)


PASSED = case(HOME, "home", "kitchen_on", CaseStatus.PASSED, metrics=(
    metric("tool_trajectory_avg_score", 1.0, 1.0, MetricStatus.PASSED),
    metric("response_match_score", 0.9, 0.8, MetricStatus.PASSED),
    metric("tool_call_count_v1", 1.0, None, MetricStatus.INFORMATIONAL),
))
FAILED = case(HOME, "home", "dim_living_room", CaseStatus.FAILED, metrics=(
    metric("tool_trajectory_avg_score", 1.0, 1.0, MetricStatus.PASSED),
    metric("response_match_score", 0.25, 0.8, MetricStatus.FAILED),
), layers=(
    LayerSummary("tool_calls", "changed", "turn 1 · set_brightness level 40 → 4"),
    LayerSummary("response", "same"),
))
ERROR = case(TRIPS, "trips", "rome", CaseStatus.ERROR, error="worker crashed: exit code 1\nsee the log")
FLAKY = case(TRIPS, "trips", "paris", CaseStatus.FLAKY, error="2 of 3 runs passed")
NOT_EVALUATED = case(TRIPS, "trips", "scenario", CaseStatus.NOT_EVALUATED, error="no metric could be computed", metrics=(
    metric("safety_v1", None, 0.8, MetricStatus.NOT_EVALUATED, "needs a judge model"),
))
ALL = [PASSED, FAILED, ERROR, FLAKY, NOT_EVALUATED]


# --- JUnit ------------------------------------------------------------------------------------------


def junit(cases: list[CaseResult]) -> ET.Element:
    text = render_junit(cases)
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?>\n') and text.endswith("\n")
    return ET.fromstring(text.encode("utf-8"))


def test_junit_totals_count_failed_flaky_and_not_evaluated_as_failures_and_error_as_errors():
    root = junit(ALL)
    assert root.tag == "testsuites"
    assert dict(root.attrib) == {"name": "agentdiff", "tests": "5", "failures": "3", "errors": "1"}


def test_junit_has_one_suite_per_eval_set_with_its_own_counts():
    suites = {s.get("name"): dict(s.attrib) for s in junit(ALL)}
    assert suites == {
        "home": {"name": "home", "tests": "2", "failures": "1", "errors": "0", "skipped": "0"},
        "trips": {"name": "trips", "tests": "3", "failures": "2", "errors": "1", "skipped": "0"},
    }


def test_junit_testcases_are_named_by_eval_id_with_their_suite_as_class_and_their_file():
    cases = [(t.get("classname"), t.get("name"), t.get("file")) for t in junit(ALL).iter("testcase")]
    assert cases == [
        ("home", "kitchen_on", HOME), ("home", "dim_living_room", HOME),
        ("trips", "rome", TRIPS), ("trips", "paris", TRIPS), ("trips", "scenario", TRIPS),
    ]


def test_junit_a_passed_case_has_no_child():
    (testcase,) = [t for t in junit(ALL).iter("testcase") if t.get("name") == "kitchen_on"]
    assert list(testcase) == []


def test_junit_each_case_that_did_not_pass_says_why_with_its_first_line_as_the_message():
    found = {t.get("name"): (t[0].tag, dict(t[0].attrib), t[0].text) for t in junit(ALL).iter("testcase") if len(t)}
    assert found == {
        "dim_living_room": ("failure", {"type": "failed", "message": "response_match_score: 0.25 < threshold 0.8"},
                            "response_match_score: 0.25 < threshold 0.8\ntool_calls: turn 1 · set_brightness level 40 → 4"),
        "rome": ("error", {"type": "error", "message": "worker crashed: exit code 1"}, "worker crashed: exit code 1\nsee the log"),
        "paris": ("failure", {"type": "flaky", "message": "2 of 3 runs passed"}, "2 of 3 runs passed"),
        "scenario": ("failure", {"type": "not_evaluated", "message": "no metric could be computed"}, "no metric could be computed"),
    }


def test_junit_a_failure_with_nothing_to_say_is_named_by_its_status():
    (testcase,) = junit([case(HOME, "home", "bare", CaseStatus.FAILED)]).iter("testcase")
    assert (testcase[0].get("message"), testcase[0].text) == ("failed", "failed")


def test_junit_a_case_without_an_eval_set_id_is_in_a_suite_named_after_its_file():
    root = junit([case(HOME, None, "loose", CaseStatus.PASSED)])
    assert [(s.get("name"), [t.get("classname") for t in s]) for s in root] == [(HOME, [HOME])]


def test_junit_no_cases_is_an_empty_valid_report():
    root = junit([])
    assert (dict(root.attrib), list(root)) == ({"name": "agentdiff", "tests": "0", "failures": "0", "errors": "0"}, [])


def test_junit_markup_characters_in_ids_and_messages_are_escaped():
    odd = case(HOME, "home & <away>", 'say "hi" & <bye>', CaseStatus.ERROR, error="expected <b> & got \"c\"")
    (suite,) = junit([odd])
    (testcase,) = suite
    assert (suite.get("name"), testcase.get("name")) == ("home & <away>", 'say "hi" & <bye>')
    assert (testcase[0].get("message"), testcase[0].text) == ('expected <b> & got "c"', 'expected <b> & got "c"')


def test_junit_control_characters_in_a_message_still_give_well_formed_xml():
    # an agent's crash log often carries terminal colour codes (ESC [ 31 m)
    coloured = case(TRIPS, "trips", "rome", CaseStatus.ERROR, error="Traceback\n\x1b[31mValueError: boom\x1b[0m")
    (testcase,) = junit([coloured]).iter("testcase")
    assert testcase[0].get("message") == "Traceback"
    assert "ValueError: boom" in testcase[0].text


# --- Markdown ---------------------------------------------------------------------------------------

# the same case in two modes: one row, one cell per mode
LIGHTS_REPLAY = case("conformance/lights/kitchen_check/spec.yaml", "lights", "kitchen_check", CaseStatus.PASSED, mode="replay",
                     description="Turns the kitchen light on | then checks")
LIGHTS_LIVE = case("conformance/lights/kitchen_check/spec.yaml", "lights", "kitchen_check", CaseStatus.FAILED, mode="live",
                   description="Turns the kitchen light on | then checks", error="response differs")


def test_markdown_starts_with_the_title_version_and_language():
    lines = render_markdown(ALL).splitlines()
    assert lines[:7] == [
        "# agentdiff Test Report", "", "## Summary", "",
        f"- **agentdiff Version**: {__version__}", f"- **Language**: python {platform.python_version()}", "",
    ]


def test_markdown_summary_has_one_row_per_mode_with_counts_and_success_rate():
    lines = render_markdown([*ALL, LIGHTS_REPLAY, LIGHTS_LIVE]).splitlines()
    start = lines.index("| Mode | Total Tests | Passed | Failed | Success Rate |")
    assert lines[start + 1:start + 4] == [
        "|------|-------------|--------|--------|--------------|",
        "| live | 6 | 1 | 5 | 16.7% |",
        "| replay | 1 | 1 | 0 | 100.0% |",
    ]
    assert lines[start + 4] == ""


def test_markdown_results_table_has_a_row_per_case_and_a_cell_per_mode():
    lines = render_markdown([*ALL, LIGHTS_REPLAY, LIGHTS_LIVE]).splitlines()
    start = lines.index("## Test Results")
    assert lines[start + 2:start + 11] == [
        "| Category | Test Name | Description | live | replay |",
        "|---|---|---|---|---|",
        "| home | kitchen_on | tool_trajectory_avg_score 1.0, response_match_score 0.9 | ✅ PASS | N/A |",
        "| home | dim_living_room | tool_trajectory_avg_score 1.0, response_match_score 0.25 | ❌ FAIL | N/A |",
        "| trips | rome |  | ❌ ERROR | N/A |",
        "| trips | paris |  | ⚠️ FLAKY | N/A |",
        "| trips | scenario | safety_v1 n/a | ❌ NOT EVALUATED | N/A |",
        "| lights | kitchen_check | Turns the kitchen light on \\| then checks | ❌ FAIL | ✅ PASS |",
        "",
    ]


def test_markdown_pipes_and_newlines_in_ids_and_descriptions_stay_inside_their_cell():
    odd = case(HOME, "home|away", "line one\nline | two", CaseStatus.PASSED, description="first\n\nsecond |  third")
    row = [line for line in render_markdown([odd]).splitlines() if line.startswith("| home")]
    assert row == ["| home\\|away | line one line \\| two | first second \\| third | ✅ PASS |"]


def test_markdown_details_list_every_case_that_did_not_pass_with_its_problem():
    text = render_markdown([PASSED, FAILED, ERROR])
    details = text[text.index("## Failed Tests Details"):]
    assert details == "\n".join([
        "## Failed Tests Details",
        "",
        "### home/dim_living_room (live)",
        "",
        "**Error**:",
        "",
        "```",
        "response_match_score: 0.25 < threshold 0.8",
        "tool_calls: turn 1 · set_brightness level 40 → 4",
        "```",
        "",
        "| Layer | First divergence |",
        "|---|---|",
        "| tool_calls | turn 1 · set_brightness level 40 → 4 |",
        "",
        "### trips/rome (live)",
        "",
        "**Error**:",
        "",
        "```",
        "worker crashed: exit code 1",
        "see the log",
        "```",
    ]) + "\n"


def test_markdown_details_give_a_described_case_its_description():
    text = render_markdown([LIGHTS_LIVE])
    assert "### lights/kitchen_check (live)\n\n**Description**: Turns the kitchen light on \\| then checks\n\n**Error**:\n" in text


def test_markdown_a_report_where_everything_passed_has_no_details_section():
    text = render_markdown([PASSED, LIGHTS_REPLAY])
    assert "## Failed Tests Details" not in text
    assert text.endswith("| lights | kitchen_check | Turns the kitchen light on \\| then checks | N/A | ✅ PASS |\n")
