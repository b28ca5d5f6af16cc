"""`agentdiff run` and `agentdiff record` end to end, on the sample agents and on copies of them."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET

import pytest
from agentdiff.core.baselines.journal import undo_last
from conftest import ROOT
from test_cli import run

pytestmark = pytest.mark.adk
SAMPLES = ROOT / "sample_agents"


def readme_verdicts() -> dict[str, str]:
    rows = re.findall(r"^\| `([^`]+)` \| (passed|failed|flaky|error|not_evaluated|new) \|", (SAMPLES / "README.md").read_text(), re.M)
    return dict(rows)


def case_key(case_id: str) -> str:
    """How the README names a case: `file::eval_id` for EvalSet cases, `agent/conformance/…` otherwise."""
    rest = case_id.removeprefix("sample_agents/")
    return rest.split("/", 1)[1] if "::" in rest else rest


def test_the_sample_cases_end_as_their_readme_says(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    code, out, err = run("run", "sample_agents", "--num-runs", "2", "--jobs", "2", "--report", f"json={report}", "--report", f"junit={junit}")
    assert code == 1, err  # some cases fail on purpose
    cases = json.loads(report.read_text())["cases"]
    expected = readme_verdicts()
    assert len(expected) == 29
    assert {case_key(c["id"]): c["status"] for c in cases} == expected
    assert re.search(r"\[29/29\] ", err)  # progress on stderr
    by_key = {case_key(c["id"]): c for c in cases}
    flaky = by_key["trip_planner.evalset.json::surprise_me"]
    assert flaky["mode"] == "live" and flaky["runs"] == 2
    stale = by_key["trip_planner/conformance/hotels/hotel_in_paris"]
    assert stale["mode"] == "replay" and stale["agent"] == "trip_planner"
    request = next(layer for layer in stale["layers"] if layer["layer"] == "request")
    assert request["status"] == "changed" and '+ "always"' in request["first_divergence"]
    suites = ET.fromstring(junit.read_text())
    assert suites.get("tests") == "29"
    assert "✗ failed" in out and "29 cases: 20 passed, 7 failed, 0 error, 0 not evaluated, 1 flaky, 1 new" in out


def test_run_is_a_usage_error_for_unknown_cases(monkeypatch):
    monkeypatch.chdir(ROOT)
    code, _, err = run("run", "no_such_case_anywhere")
    assert code == 2 and "no case matches 'no_such_case_anywhere'" in err


def test_run_of_passing_cases_exits_zero(monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run("run", "refund_delivered_order", "order_status")
    assert code == 0, out
    assert "4 cases: 4 passed" in out  # the EvalSet and the conformance case of each name


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the customer service sample and the demo model, as a project of its own."""
    shutil.copytree(SAMPLES / "customer_service", tmp_path / "agents" / "customer_service", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(SAMPLES / "demo_model.py", tmp_path / "agents" / "demo_model.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_fixing_the_prompt_fixes_both_refund_cases(project):
    code, _, _ = run("run", "refund_too_late", "no_second_refund")
    assert code == 1
    prompt = project / "agents" / "customer_service" / "prompt.md"
    prompt.write_text(prompt.read_text().replace("amount=<total>)", "amount=<total>) if <eligible>"))
    code, out, _ = run("run", "refund_too_late", "no_second_refund")
    assert code == 0, out


def test_record_writes_the_eval_case_and_undo_puts_it_back(project):
    evalset = project / "agents" / "customer_service" / "customer_service.evalset.json"
    before = evalset.read_text()
    code, out, err = run("record", "agents/customer_service/customer_service.evalset.json::refund_too_late")
    assert code == 0, out + err
    after = json.loads(evalset.read_text())
    case = next(c for c in after["eval_cases"] if c["eval_id"] == "refund_too_late")
    assert [u["name"] for u in case["conversation"][0]["intermediate_data"]["tool_uses"]] == ["lookup_order", "check_refund_policy", "issue_refund"]
    others = [c for c in after["eval_cases"] if c["eval_id"] != "refund_too_late"]
    assert others == [c for c in json.loads(before)["eval_cases"] if c["eval_id"] != "refund_too_late"]
    registration = json.loads((project / "agents" / "customer_service" / "customer_service.agentdiff-record.json").read_text())
    entry = registration["refund_too_late"]
    assert entry["agent"] == "customer_service" and entry["models"] == {"customer_service": "demo-support-model"}
    assert "agents/customer_service/prompt.md" in entry["files_read_sha256"]
    assert set(entry["tool_source_sha256"]) == {"lookup_order", "check_refund_policy", "issue_refund"}
    code, _, _ = run("run", "refund_too_late")
    assert code == 0  # the new baseline is what the agent does
    assert undo_last(project) is not None
    assert evalset.read_text() == before


def test_record_refuses_a_file_that_changed_since_it_was_read(project, monkeypatch):
    from agentdiff.core.baselines import record as record_module

    evalset = project / "agents" / "customer_service" / "customer_service.evalset.json"
    real = record_module.record_eval_case

    def edit_then_record(ref, *args, **kwargs):
        evalset.write_text(evalset.read_text().replace("Gizmo", "Gadget"))  # someone saves the file meanwhile
        return real(ref, *args, **kwargs)

    monkeypatch.setattr(record_module, "record_eval_case", edit_then_record)
    code, out, _ = run("record", "refund_too_late")
    assert code == 1
    assert "changed on disk since it was read; nothing was written" in out
    assert "Gadget" in evalset.read_text()


def test_an_accepted_tool_call_has_its_keys_in_the_order_of_the_files_own(project):
    """`no_second_refund` turn 2: the run makes a call the file does not expect; accepting the tool_calls
    layer writes it as the calls beside it are written (`name`, then `args`)."""
    evalset = project / "agents" / "customer_service" / "customer_service.evalset.json"
    case_id = "agents/customer_service/customer_service.evalset.json::no_second_refund"
    assert run("run", case_id)[0] == 1
    code, out, err = run("accept", case_id, "--turn", "2", "--layer", "tool_calls", "--yes")
    assert code == 0, out + err
    case = next(c for c in json.loads(evalset.read_text())["eval_cases"] if c["eval_id"] == "no_second_refund")
    uses = case["conversation"][1]["intermediate_data"]["tool_uses"]
    assert len(uses) > 1 and all(list(use)[:2] == ["name", "args"] for use in uses), uses
