"""No silent fallbacks: a config that did not load, replay asked of an EvalSet case, and the
efficiency metrics ADK fills in live runs, each said per case instead of quietly papered over.

The project is a native echo agent (`agents/echo/agent.py` answers the user's text) with one eval set
whose one case passes as written, so whatever the case ends as is the behaviour under test.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agentdiff.core.project.discovery import discover
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.rescore import rescore_case
from agentdiff.core.scoring.metrics import duration_details
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.traces.from_run import invocations_from_output
from agentdiff.core.worker.jobs import AgentRef, Job, Message, RunOutput
from agentdiff.core.worker.native_adapter import run_native
from agentdiff.core.workbench.workbench import Workbench
from test_cli import run
from workbench_support import EchoPool, case_id, echo_project

ECHO_0 = case_id("echo", "case_0")
SAMPLES = Path(__file__).resolve().parents[1] / "sample_agents"
CONFIG = "agents/echo/test_config.json"
BROKEN_CONFIGS = {
    "invalid_json": ('{"criteria": {"response_match_score": 0.8,\n', f"{CONFIG}:2:"),
    "wrong_criterion_type": ('{"criteria": {\n  "response_match_score": "high"\n}}\n', f"{CONFIG}:2:"),
}


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    root = tmp_path.resolve()
    echo_project(root, {"echo": ["hello"]})
    monkeypatch.chdir(root)
    return root


def run_json(*argv: str) -> tuple[int, dict, str]:
    code, out, err = run("run", *argv, "--json")
    return code, json.loads(out), err


def only_case(report: dict) -> dict:
    (case,) = report["cases"]
    assert case["id"] == ECHO_0
    return case


# --- 1. a config that fails to load: its cases are errors, with where and why ------------------------


@pytest.mark.parametrize("kind", sorted(BROKEN_CONFIGS))
def test_run_of_a_case_whose_config_did_not_load_is_an_error_naming_the_config(root, kind):
    text, where = BROKEN_CONFIGS[kind]
    (root / CONFIG).write_text(text, encoding="utf-8")
    code, report, err = run_json("agents")
    case = only_case(report)
    assert case["status"] == "error", case
    assert where in case["error"], case["error"]  # the file and its line
    assert case["metrics"] == []  # not scored against ADK's default criteria
    assert code == 2  # a load error is still a load error
    assert where in err


def test_run_of_the_same_case_with_its_config_fixed_passes(root):
    (root / CONFIG).write_text('{"criteria": {"response_match_score": 0.8}}', encoding="utf-8")
    code, report, err = run_json("agents")
    assert only_case(report)["status"] == "passed" and code == 0, err


@pytest.mark.parametrize("kind", sorted(BROKEN_CONFIGS))
def test_workbench_shows_a_case_whose_config_did_not_load_as_an_error_and_runs_nothing(root, kind):
    text, where = BROKEN_CONFIGS[kind]
    (root / CONFIG).write_text(text, encoding="utf-8")

    async def go() -> tuple[Workbench, EchoPool]:
        pool = EchoPool()
        wb = Workbench(root, [root / "agents"], pool)
        wb.run(list(wb.cases), "first run")
        await wb.wait()
        return wb, pool

    wb, pool = asyncio.run(go())
    result = wb.cases[ECHO_0].run.result
    assert result.status is CaseStatus.ERROR
    assert where in result.error
    assert pool.jobs == []  # the agent was never run


def test_rescoring_a_cached_run_after_the_config_broke_is_an_error(root):
    """A config that breaks after a run: the cached outputs are not scored against the defaults."""
    async def first() -> Workbench:
        wb = Workbench(root, [root / "agents"], EchoPool())
        wb.run(list(wb.cases), "first run")
        await wb.wait()
        return wb

    wb = asyncio.run(first())
    previous = wb.cases[ECHO_0].run
    assert previous.result.status is CaseStatus.PASSED and previous.outputs
    (root / CONFIG).write_text(BROKEN_CONFIGS["invalid_json"][0], encoding="utf-8")
    (ref,) = discover([root / "agents"], root).cases
    again = rescore_case(ref, previous, RunOptions())
    assert again.result.status is CaseStatus.ERROR and CONFIG in again.result.error
    assert again.outputs == previous.outputs  # kept: scored again once the config loads


# --- 2. replay asked of an EvalSet case ---------------------------------------------------------------


def test_replay_of_an_eval_set_case_is_not_evaluated_and_says_why(root):
    code, report, err = run_json("agents", "--mode", "replay")
    case = only_case(report)
    assert case["status"] == "not_evaluated" and case["mode"] == "replay", case
    assert case["error"] == (
        "replay needs recordings: an EvalSet case has none; run it live (--mode live) or record a conformance case"
    )
    assert case["metrics"] == []
    assert code == 1, err


# --- 3. every efficiency metric ADK reports is filled in live runs -------------------------------------


def test_a_live_run_reports_the_invocation_duration(root):
    code, report, err = run_json("agents")
    case = only_case(report)
    assert case["status"] == "passed" and code == 0, err
    metrics = {m["name"]: m for m in case["metrics"]}
    duration = metrics["invocation_duration_v1"]
    assert duration["score"] is not None and duration["score"] >= 0, duration
    for name in ("tool_call_count_v1", "inference_call_count_v1", "token_usage_v1"):
        assert name in metrics


def _turn(text: str, agent: str = "echo", **extra) -> list[dict]:
    content = {"role": "user", "parts": [{"text": text}]}
    return [
        {"author": "user", "content": content, "invocation_id": f"inv-{text}", **extra},
        {"author": agent, "content": {"role": "model", "parts": [{"text": text}]}, "invocation_id": f"inv-{text}", **extra},
    ]


def _messages(*texts: str) -> list[Message]:
    return [Message(content={"role": "user", "parts": [{"text": t}]}) for t in texts]


def test_each_actual_invocation_takes_the_duration_measured_for_its_turn():
    out = RunOutput(events=_turn("a") + _turn("b"), turn_seconds={0: 0.25, 1: 1.5})
    invocations = invocations_from_output(out, _messages("a", "b"))
    assert [inv.duration for inv in invocations] == [0.25, 1.5]
    assert duration_details(invocations[0]) == {
        "total_seconds": 0.25, "model_seconds": None, "tool_seconds": None, "framework_seconds": None,
    }


def test_the_model_and_tool_parts_of_a_turn_split_its_duration_as_adk_does():
    out = RunOutput(events=_turn("a"), turn_seconds={0: 1.0}, turn_model_seconds={0: 0.6}, turn_tool_seconds={0: 0.25})
    (inv,) = invocations_from_output(out, _messages("a"))
    assert (inv.duration, inv.model_duration, inv.tool_duration) == (1.0, 0.6, 0.25)
    assert duration_details(inv) == {"total_seconds": 1.0, "model_seconds": 0.6, "tool_seconds": 0.25, "framework_seconds": 0.15}


def test_a_live_adk_run_reports_model_and_tool_seconds(monkeypatch):
    """A real ADK agent (the bundled customer service sample: a model call, a tool, a model call)
    through a worker: every turn's duration is split into model, tool and framework time, as ADK's own
    evaluation splits it."""
    monkeypatch.chdir(SAMPLES)
    code, out, err = run("run", "customer_service/customer_service.evalset.json", "--json", "--jobs", "1")
    report = json.loads(out)
    assert report["cases"], err
    for case in report["cases"]:
        (duration,) = [m for m in case["metrics"] if m["name"] == "invocation_duration_v1"]
        details = duration["details"]
        assert None not in details.values(), (case["id"], details)
        assert details["model_seconds"] + details["tool_seconds"] + details["framework_seconds"] == pytest.approx(
            details["total_seconds"], abs=0.003)


def test_a_turn_not_measured_has_no_duration_even_with_timestamped_events():
    """ADK's rule: an invocation's duration is measured while it runs, never rebuilt from the events'
    timestamps (stamped when built: a model call's before its request is sent)."""
    events = _turn("a", timestamp=100.0)
    events[1]["timestamp"] = 103.0
    (inv,) = invocations_from_output(RunOutput(events=events, turn_seconds={}), _messages("a"))
    assert inv.duration is None
    # a turn that errored (not measured) beside one that was: each keeps its own
    out = RunOutput(events=_turn("a") + _turn("b"), turn_seconds={1: 0.5}, turn_errors={0: "boom"})
    assert [i.duration for i in invocations_from_output(out, _messages("a", "b"))] == [None, 0.5]


def test_the_worker_measures_each_turn_it_runs(root):
    job = Job(
        case_id=ECHO_0, agent=AgentRef(kind="native", agents_dir=str(root / "agents"), name="echo"), mode="live",
        app_name="echo", messages=_messages("one", "two"),
    )
    out = asyncio.run(run_native(job))
    assert set(out.turn_seconds) == {0, 1}
    assert all(0 <= seconds < 5 for seconds in out.turn_seconds.values())
    # and it survives the trip from the worker (JSON: the keys become strings)
    assert RunOutput.model_validate_json(out.model_dump_json()).turn_seconds == out.turn_seconds


def test_workbench_switched_back_from_live_still_runs_eval_set_cases_live(root):
    """The TUI's replay/live switch is for conformance cases: back from live, an EvalSet case is not
    asked to replay (which would leave it not evaluated), it runs live as before."""

    async def go() -> tuple[Workbench, EchoPool]:
        pool = EchoPool()
        wb = Workbench(root, [root / "agents"], pool)
        assert wb.toggle_mode() == "live" and wb.toggle_mode() == "replay"
        wb.run(list(wb.cases), "after switching")
        await wb.wait()
        return wb, pool

    wb, pool = asyncio.run(go())
    result = wb.cases[ECHO_0].run.result
    assert result.status is CaseStatus.PASSED and result.mode == "live"
    assert pool.ran() == [ECHO_0]
