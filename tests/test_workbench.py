"""The headless workbench, driven as the TUI drives it, on small real projects and an in-process pool.

Each project holds native echo agents (`agents/<name>/agent.py`) with one eval set each, whose cases
pass as written (the expected answer is the user's text). `EchoPool` answers in process, so a test
sees exactly which cases a change sent to the pool (a run) and which it only re-scored (no job).
Nothing sleeps: every test awaits the workbench's own calls and `wb.wait()`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from agentdiff.core.project.discovery import discover
from agentdiff.core.scoring import rouge
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.events import CasesReloaded, CaseUpdated, Event
from agentdiff.core.run.options import RunOptions
from agentdiff.core.workbench.workbench import Workbench
from workbench_support import (
    ECHO_AGENT,
    EchoPool,
    case_id,
    echo_project,
    eval_case,
    set_path,
    user_text,
    write_set,
)

# Load the scorer's stemmer once, alone, at collection: no test's time includes it (loading it
# from two scoring threads at once is its own test below, in a fresh interpreter).
rouge.rouge1("warming up", "warming up")

ECHO_0, ECHO_1 = case_id("echo", "case_0"), case_id("echo", "case_1")
OTHER_0 = case_id("other", "case_0")
ECHO_SET = "agents/echo/echo.evalset.json"


@pytest.fixture
def root(tmp_path) -> Path:
    return tmp_path.resolve()


@pytest.fixture
def sets(root) -> dict:
    """Two echo agents: `echo` with cases saying "hello" and "bye", `other` with one saying "ping"."""
    return echo_project(root, {"echo": ["hello", "bye"], "other": ["ping"]})


@pytest.fixture
def pool() -> EchoPool:
    return EchoPool()


async def start(root: Path, pool: EchoPool) -> tuple[Workbench, list[Event]]:
    """A workbench after its first full run, its pool's record cleared, its events recorded."""
    wb = Workbench(root, [root / "agents"], pool)
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    pool.clear()
    events: list[Event] = []
    wb.subscribe(events.append)
    return wb, events


def statuses(wb: Workbench) -> dict[str, CaseStatus | None]:
    return {case_id: state.status for case_id, state in wb.cases.items()}


def gating(wb: Workbench, case: str) -> list[tuple[str, float | None, float, str]]:
    """(name, score, threshold, status) of each metric of a case's verdict that has a threshold."""
    return [(m.name, m.score, m.threshold, m.status.value) for m in wb.cases[case].run.result.metrics if m.threshold is not None]


def expect(sets: dict, root: Path, agent: str, index: int, text: str) -> Path:
    """Save `agent`'s eval set with case `index` expecting the answer `text`."""
    sets[agent]["eval_cases"][index]["conversation"][0]["final_response"]["parts"][0]["text"] = text
    return write_set(root, agent, sets[agent])


# --- first load ---------------------------------------------------------------------------------


def test_first_load_discovers_every_case_in_file_order_and_no_error(root, sets, pool):
    wb = Workbench(root, [root / "agents"], pool)
    assert list(wb.cases) == [ECHO_0, ECHO_1, OTHER_0]
    assert wb.errors == []
    assert all(state.run is None and not state.running for state in wb.cases.values())
    assert pool.jobs == []  # loading runs nothing


def test_index_maps_files_in_an_agent_folder_and_an_eval_set_file_to_their_cases(root, sets, pool):
    wb = Workbench(root, [root / "agents"], pool)
    echo = root / "agents" / "echo"
    assert wb.index.affected_by(echo / "agent.py") == {ECHO_0, ECHO_1}
    assert wb.index.affected_by(echo / "prompts" / "system.md") == {ECHO_0, ECHO_1}
    assert wb.index.affected_by(root / "agents" / "other" / "agent.py") == {OTHER_0}
    assert wb.index.affected_by(root / "README.md") == set()
    assert wb.index.is_source(set_path(root, "echo")) and wb.index.is_source(set_path(root, "other"))
    files = wb.index.get(ECHO_1)
    assert (files.sources, files.config, files.agent_dir) == (frozenset({set_path(root, "echo")}), echo / "test_config.json", echo)


def test_units_name_the_eval_set_file_each_case_loads_from(root, sets, pool):
    wb = Workbench(root, [root / "agents"], pool)
    assert wb.units == {ECHO_0: set_path(root, "echo"), ECHO_1: set_path(root, "echo"), OTHER_0: set_path(root, "other")}


async def test_first_run_sends_one_job_per_case_and_every_echo_case_passes(root, sets, pool):
    wb = Workbench(root, [root / "agents"], pool)
    events: list[Event] = []
    wb.subscribe(events.append)
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    assert sorted(pool.ran()) == [ECHO_0, ECHO_1, OTHER_0]
    assert {job.case_id: (job.agent.name, user_text(job, 0)) for job in pool.jobs} == {
        ECHO_0: ("echo", "hello"), ECHO_1: ("echo", "bye"), OTHER_0: ("other", "ping"),
    }
    assert statuses(wb) == {ECHO_0: CaseStatus.PASSED, ECHO_1: CaseStatus.PASSED, OTHER_0: CaseStatus.PASSED}
    assert {state.reason for state in wb.cases.values()} == {"first run"}
    assert not any(state.running or state.stale for state in wb.cases.values())
    # each case: one update as it is queued (○), one as its run starts (⟳), one as it settles
    assert sorted(e.case_id for e in events) == sorted([ECHO_0, ECHO_1, OTHER_0] * 3)
    assert wb._runs.in_flight == {}  # a finished run's task is let go: a big suite keeps none
    first, second = wb.index.get(ECHO_0), wb.index.get(ECHO_1)
    assert first.sources is second.sources and first.agent_dir is second.agent_dir  # one object each, not one per case


async def test_a_run_of_many_cases_is_told_as_one_event_when_they_are_queued(root, sets, pool, monkeypatch):
    """Queueing `BULK_EVENT` cases or more is one `CasesUpdated` (one event a case cost the TUI more than
    starting the run); each case's start and verdict are still its own event."""
    from agentdiff.core.workbench import workbench as workbench_module
    from agentdiff.core.workbench.events import CasesUpdated

    monkeypatch.setattr(workbench_module, "BULK_EVENT", 3)
    wb = Workbench(root, [root / "agents"], pool)
    events: list[Event] = []
    wb.subscribe(events.append)
    wb.run(list(wb.cases), "first run")
    assert events == [CasesUpdated((ECHO_0, ECHO_1, OTHER_0))] and all(wb.cases[i].stale for i in wb.cases)
    await wb.wait()
    assert sorted(e.case_id for e in events[1:]) == sorted([ECHO_0, ECHO_1, OTHER_0] * 2)
    events.clear()
    wb.run([ECHO_0, ECHO_1], "two")  # fewer: one event each, as before
    await wb.wait()
    assert sorted(e.case_id for e in events) == sorted([ECHO_0, ECHO_1] * 3)


async def test_plan_accept_refuses_a_case_that_has_not_run(root, sets, pool):
    wb = Workbench(root, [root / "agents"], pool)
    with pytest.raises(ValueError, match="has not run yet"):
        await wb.plan_accept(ECHO_0)


# --- what a change means --------------------------------------------------------------------------


async def test_editing_only_an_expected_answer_rescores_that_case_without_a_job(root, sets, pool):
    wb, events = await start(root, pool)
    untouched = {i: wb.cases[i].run for i in (ECHO_1, OTHER_0)}
    selections = await wb.on_changes([expect(sets, root, "echo", 0, "goodbye")])
    await wb.wait()
    assert pool.jobs == []
    assert [(s.action, s.case_ids) for s in selections] == [("reload", [])]
    assert statuses(wb) == {ECHO_0: CaseStatus.FAILED, ECHO_1: CaseStatus.PASSED, OTHER_0: CaseStatus.PASSED}
    assert wb.cases[ECHO_0].reason == f"re-score: {ECHO_SET} changed"
    assert gating(wb, ECHO_0) == [("tool_trajectory_avg_score", 1.0, 1.0, "passed"), ("response_match_score", 0.0, 0.8, "failed")]
    # the other cases keep their very runs and reasons
    assert all(wb.cases[i].run is untouched[i] and wb.cases[i].reason == "first run" for i in untouched)
    assert OTHER_0 not in [e.case_id for e in events if isinstance(e, CaseUpdated)]
    assert not any(isinstance(e, CasesReloaded) for e in events)  # the same cases: the list is not new


async def test_editing_a_user_message_reruns_only_that_case(root, sets, pool):
    wb, _ = await start(root, pool)
    sets["echo"]["eval_cases"][1]["conversation"][0]["user_content"]["parts"][0]["text"] = "see you"
    selections = await wb.on_changes([write_set(root, "echo", sets["echo"])])
    await wb.wait()
    assert pool.ran() == [ECHO_1]
    assert user_text(pool.jobs[0], 0) == "see you"
    assert [(s.action, s.case_ids, s.reason) for s in selections][1:] == [("run", [ECHO_1], f"re-run: {ECHO_SET} changed")]
    assert wb.cases[ECHO_1].reason == f"re-run: {ECHO_SET} changed"
    assert statuses(wb) == {ECHO_0: CaseStatus.PASSED, ECHO_1: CaseStatus.FAILED, OTHER_0: CaseStatus.PASSED}  # "bye" is still expected


async def test_a_case_added_to_an_eval_set_runs_and_takes_its_place_in_the_list(root, sets, pool):
    wb, events = await start(root, pool)
    sets["echo"]["eval_cases"].append(eval_case("case_new", "new one"))
    await wb.on_changes([write_set(root, "echo", sets["echo"])])
    await wb.wait()
    new = case_id("echo", "case_new")
    assert pool.ran() == [new]
    assert list(wb.cases) == [ECHO_0, ECHO_1, new, OTHER_0]
    assert (wb.cases[new].status, wb.cases[new].reason) == (CaseStatus.PASSED, f"new case: {ECHO_SET} changed")
    assert wb.units[new] == set_path(root, "echo") and wb.index.get(new) is not None
    assert CasesReloaded() in events


async def test_a_case_removed_from_an_eval_set_is_dropped_from_cases_index_and_units(root, sets, pool):
    wb, events = await start(root, pool)
    del sets["echo"]["eval_cases"][0]
    selections = await wb.on_changes([write_set(root, "echo", sets["echo"])])
    await wb.wait()
    assert pool.jobs == []
    assert [(s.action, s.case_ids, s.reason) for s in selections][1:] == [("drop", [ECHO_0], f"removed: {ECHO_SET} changed")]
    assert list(wb.cases) == [ECHO_1, OTHER_0]
    assert wb.index.get(ECHO_0) is None and ECHO_0 not in wb.units
    assert wb.index.affected_by(root / "agents" / "echo" / "agent.py") == {ECHO_1}
    assert CasesReloaded() in events


async def test_a_test_config_change_rescores_the_cases_beside_it_and_no_other(root, sets, pool):
    sets["echo"]["eval_cases"][0] = eval_case("case_0", "hello world")
    write_set(root, "echo", sets["echo"])
    pool.answers[ECHO_0] = "hello there"  # ROUGE-1 0.5: fails the default 0.8
    wb, _ = await start(root, pool)
    assert wb.cases[ECHO_0].status is CaseStatus.FAILED
    other_run = wb.cases[OTHER_0].run
    config = root / "agents" / "echo" / "test_config.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.4}}))
    await wb.on_changes([config])
    await wb.wait()
    assert pool.jobs == []
    assert statuses(wb) == {ECHO_0: CaseStatus.PASSED, ECHO_1: CaseStatus.PASSED, OTHER_0: CaseStatus.PASSED}
    assert gating(wb, ECHO_0) == [("response_match_score", 0.5, 0.4, "passed")]  # the config names only this metric
    assert wb.cases[ECHO_0].reason == wb.cases[ECHO_1].reason == "re-score: agents/echo/test_config.json changed"
    assert wb.cases[OTHER_0].run is other_run and wb.cases[OTHER_0].reason == "first run"


async def test_an_eval_config_json_above_scores_the_eval_sets_without_a_test_config(root, sets, pool):
    """`eval_config.json` (what projects pass to `adk eval --config_file_path`) scores the eval sets at or
    below its folder that have no test_config.json of their own; saving it re-scores them."""
    sets["echo"]["eval_cases"][0] = eval_case("case_0", "hello world")
    write_set(root, "echo", sets["echo"])
    pool.answers[ECHO_0] = "hello there"  # ROUGE-1 0.5
    config = root / "agents" / "eval_config.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.4}}))
    wb, _ = await start(root, pool)
    assert wb.cases[ECHO_0].status is CaseStatus.PASSED
    assert wb.cases[ECHO_0].ref.config.file == "agents/eval_config.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.6}}))
    runs_before = len(pool.jobs)
    await wb.on_changes([config])
    await wb.wait()
    assert len(pool.jobs) == runs_before  # re-scored from the cached run
    assert wb.cases[ECHO_0].status is CaseStatus.FAILED
    assert wb.cases[ECHO_0].reason == "re-score: agents/eval_config.json changed"
    beside = root / "agents" / "echo" / "test_config.json"  # the one ADK reads wins
    beside.write_text(json.dumps({"criteria": {"response_match_score": 0.5}}))
    await wb.on_changes([beside])
    await wb.wait()
    assert wb.cases[ECHO_0].status is CaseStatus.PASSED and wb.cases[ECHO_0].ref.config.file == "agents/echo/test_config.json"


async def test_saving_agent_py_reruns_that_agents_cases_with_the_file_as_reason(root, sets, pool):
    wb, _ = await start(root, pool)
    agent = root / "agents" / "echo" / "agent.py"
    agent.write_text(agent.read_text() + "# edited\n")
    selections = await wb.on_changes([agent])
    await wb.wait()
    reason = "re-run: agents/echo/agent.py changed"
    assert [(s.action, s.case_ids, s.reason) for s in selections] == [("run", [ECHO_0, ECHO_1], reason)]
    assert sorted(pool.ran()) == [ECHO_0, ECHO_1]
    assert wb.cases[ECHO_0].reason == wb.cases[ECHO_1].reason == reason
    assert wb.cases[OTHER_0].reason == "first run"


async def test_a_save_is_resolved_once_and_the_change_policy_reads_only_what_was_resolved(root, sets, pool, monkeypatch):
    from agentdiff.core.workbench.changes import decide, plan_changes, resolve_changes

    wb, _ = await start(root, pool)
    agent = root / "agents" / "echo" / "agent.py"
    agent.write_text(agent.read_text() + "# edited\n")
    seen: list[str] = []
    real_resolve = Path.resolve
    monkeypatch.setattr(Path, "resolve", lambda self, strict=False: (seen.append(str(self)), real_resolve(self, strict))[1])
    changes = resolve_changes([agent])
    assert seen == [str(agent)]
    seen.clear()
    plan = plan_changes(changes, wb.index, {i: s.ref for i, s in wb.cases.items()}, root)
    assert seen == []  # the policy never resolves a path again
    selections, notes = decide(plan, wb.index, root, {})
    assert [(s.action, s.case_ids) for s in selections] == [("run", [ECHO_0, ECHO_1])] and notes == []
    seen.clear()
    await wb.on_changes([agent])
    await wb.wait()
    assert seen.count(str(agent)) <= 2  # once for the policy, once to show it relative to the project


def test_saving_a_known_agents_code_is_an_edit_but_a_package_marker_that_comes_or_goes_is_a_move(root, sets, pool):
    from agentdiff.core.workbench.changes import agents_may_have_moved

    wb = Workbench(root, [root / "agents"], pool)
    agents = root / "agents"
    assert not agents_may_have_moved([agents / "echo" / "agent.py", agents / "echo" / "prompt.md"], wb.index)
    (agents / "newbie").mkdir()
    (agents / "newbie" / "__init__.py").write_text("")
    assert agents_may_have_moved([agents / "newbie" / "__init__.py"], wb.index)
    assert agents_may_have_moved([agents / "gone" / "agent.py"], wb.index)
    # what the project says of its agents: its pyproject and the tests AgentEvaluator calls are read from
    assert agents_may_have_moved([root / "pyproject.toml"], wb.index, root)
    assert agents_may_have_moved([root / "tests" / "test_agent.py"], wb.index, root)
    assert not agents_may_have_moved([agents / "echo" / "tools.py"], wb.index, root)


async def test_an_expectation_edited_while_its_case_runs_restarts_the_run_against_it(root, sets, pool):
    wb, _ = await start(root, pool)
    pool.gate = asyncio.Event()
    pool.received.clear()
    wb.run([ECHO_0], "by hand")
    await pool.received.wait()  # the run is in the pool, held there
    assert pool.ran() == [ECHO_0] and wb.cases[ECHO_0].running
    assert [state.ref.id for state in wb.running()] == [ECHO_0]
    await wb.on_changes([expect(sets, root, "echo", 0, "goodbye")])
    pool.gate.set()
    await wb.wait()
    assert pool.ran() == [ECHO_0, ECHO_0] and wb.running() == []
    state = wb.cases[ECHO_0]
    assert (state.status, state.reason, state.running, state.stale) == (CaseStatus.FAILED, f"run: {ECHO_SET} changed", False, False)


@pytest.mark.parametrize("name", [".agent.py.swp", "4913", "agent.py~", "echo.evalset.json.agentdiff-record.json", "agentdiff-triage.yaml"])
async def test_editor_litter_and_agentdiffs_own_files_change_nothing(root, sets, pool, name):
    wb, events = await start(root, pool)
    # in the agent's folder, where any other file re-runs its cases (see the agent.py test);
    # it exists, so only its name says it means nothing
    path = root / "agents" / "echo" / name
    path.write_text("x = 1\n")
    assert await wb.on_changes([path]) == []
    await wb.wait()
    assert (pool.jobs, events) == ([], [])


async def test_while_paused_changes_are_kept_and_shown_stale_then_applied_on_resume(root, sets, pool):
    wb, events = await start(root, pool)
    await wb.set_paused(True)
    agent = root / "agents" / "echo" / "agent.py"
    agent.write_text(agent.read_text() + "# edited\n")
    assert await wb.on_changes([root / "agents" / "echo" / "sedX1y2Z3", agent]) == []  # a tool's temporary file, gone already
    await wb.wait()
    assert pool.jobs == [] and wb.held_changes == 1
    assert [(wb.cases[i].stale, wb.cases[i].reason) for i in (ECHO_0, ECHO_1)] == [
        (True, "stale: agents/echo/agent.py changed while watching was paused")] * 2
    assert not wb.cases[OTHER_0].stale
    selections = await wb.set_paused(False)
    await wb.wait()
    assert [(s.action, sorted(s.case_ids)) for s in selections] == [("run", [ECHO_0, ECHO_1])]
    assert sorted(job.case_id for job in pool.jobs) == [ECHO_0, ECHO_1] and wb.held_changes == 0
    assert not wb.cases[ECHO_0].stale and wb.cases[ECHO_0].reason == "re-run: agents/echo/agent.py changed"


# --- load errors ------------------------------------------------------------------------------


async def test_a_broken_eval_set_is_a_load_error_with_file_and_line_and_keeps_its_cases_as_last_loaded(root, sets, pool):
    wb, _ = await start(root, pool)
    other_run, echo_run = wb.cases[OTHER_0].run, wb.cases[ECHO_0].run
    broken = set_path(root, "echo")
    broken.write_text('{\n "eval_set_id": "echo",\n "eval_cases": [,]\n}\n')
    await wb.on_changes([broken])
    await wb.wait()
    assert [(e.file, e.line) for e in wb.errors] == [(ECHO_SET, 3)]
    assert list(wb.cases) == [ECHO_0, ECHO_1, OTHER_0]  # kept, marked, not run
    held = wb.cases[ECHO_0]
    assert held.stale and held.run is echo_run and held.reason.startswith("its file has an error") and f"{ECHO_SET}:3:" in held.reason
    assert wb.index.get(ECHO_0) is not None
    assert pool.jobs == [] and wb.cases[OTHER_0].run is other_run and not wb.cases[OTHER_0].stale


async def test_fixing_a_broken_eval_set_clears_the_error_and_runs_only_what_changed(root, sets, pool):
    wb, _ = await start(root, pool)
    broken = set_path(root, "echo")
    broken.write_text('{\n "eval_set_id": "echo",\n "eval_cases": [,]\n}\n')
    await wb.on_changes([broken])
    await wb.on_changes([write_set(root, "echo", sets["echo"])])
    await wb.wait()
    assert wb.errors == []
    assert list(wb.cases) == [ECHO_0, ECHO_1, OTHER_0]
    assert pool.ran() == [] and not any(state.stale for state in wb.cases.values())  # the same cases as before the break
    assert statuses(wb) == {ECHO_0: CaseStatus.PASSED, ECHO_1: CaseStatus.PASSED, OTHER_0: CaseStatus.PASSED}
    assert wb.index.affected_by(root / "agents" / "echo" / "agent.py") == {ECHO_0, ECHO_1}
    broken.write_text('{\n "eval_set_id": "echo",\n "eval_cases": [,]\n}\n')
    await wb.on_changes([broken])
    await wb.on_changes([expect(sets, root, "echo", 0, "goodbye")])  # fixed with one case's expectation changed
    await wb.wait()
    assert pool.ran() == [] and statuses(wb)[ECHO_0] is CaseStatus.FAILED and statuses(wb)[ECHO_1] is CaseStatus.PASSED


# --- accept and undo ----------------------------------------------------------------------------


async def test_accept_rewrites_the_expectation_and_the_case_passes_without_a_run(root, sets, pool):
    wb, _ = await start(root, pool)
    await wb.on_changes([expect(sets, root, "echo", 0, "goodbye")])
    plan = await wb.plan_accept(ECHO_0)
    record = root / "agents" / "echo" / "echo.agentdiff-record.json"  # agentdiff's registration of the agent
    assert plan.case_id == ECHO_0 and [w.path for w in plan.writes] == [set_path(root, "echo"), record]
    assert '-        "text": "goodbye"' in plan.preview and '+        "text": "hello"' in plan.preview
    await wb.accept(plan)
    await wb.wait()
    saved = json.loads(set_path(root, "echo").read_text())
    assert saved["eval_cases"][0]["conversation"][0]["final_response"]["parts"] == [{"text": "hello"}]
    assert saved["eval_cases"][1] == sets["echo"]["eval_cases"][1]
    assert pool.jobs == []
    assert (wb.cases[ECHO_0].status, wb.cases[ECHO_0].reason) == (CaseStatus.PASSED, "re-score: accepted")
    await wb.on_changes([set_path(root, "echo"), record])  # the watcher then reports agentdiff's own writes
    await wb.wait()
    assert pool.jobs == [] and wb.cases[ECHO_0].reason == "re-score: accepted"  # not changes: nothing again


async def test_undo_puts_the_file_back_byte_for_byte_and_the_case_fails_again(root, sets, pool):
    wb, _ = await start(root, pool)
    edited = expect(sets, root, "echo", 0, "goodbye")
    before = edited.read_bytes()
    await wb.on_changes([edited])
    await wb.accept(await wb.plan_accept(ECHO_0))
    await wb.wait()
    assert edited.read_bytes() != before
    entry = await wb.undo()
    await wb.wait()
    assert entry is not None and edited.read_bytes() == before
    assert not (root / "agents" / "echo" / "echo.agentdiff-record.json").exists()  # the accept wrote it: undo removes it
    assert pool.jobs == []
    assert statuses(wb) == {ECHO_0: CaseStatus.FAILED, ECHO_1: CaseStatus.PASSED, OTHER_0: CaseStatus.PASSED}
    assert wb.cases[ECHO_0].reason == f"re-score: undone: {entry.reason}"
    assert await wb.undo() is None  # nothing left to undo


# --- the order of the list ----------------------------------------------------------------------


async def test_order_after_adding_an_eval_set_equals_a_fresh_discovery(root, sets, pool):
    wb, _ = await start(root, pool)
    folder = root / "agents" / "echo_b"  # sorts between echo and other
    folder.mkdir()
    (folder / "agent.py").write_text(ECHO_AGENT)
    added = write_set(root, "echo_b", {"eval_set_id": "echo_b", "eval_cases": [eval_case("z", "z"), eval_case("a", "a")]})
    await wb.on_changes([folder / "agent.py", added])
    await wb.wait()
    assert list(wb.cases) == [ref.id for ref in discover([root / "agents"], root).cases]
    assert list(wb.cases) == [ECHO_0, ECHO_1, case_id("echo_b", "z"), case_id("echo_b", "a"), OTHER_0]
    assert sorted(pool.ran()) == [case_id("echo_b", "a"), case_id("echo_b", "z")]


async def test_order_after_a_reload_equals_a_fresh_discovery_with_conformance_cases(root, sets, pool):
    # two conformance cases of one category ("tools") in folders that sort differently as paths
    # ("suite" < "suite-x", part by part) and as strings ("suite-x/" < "suite/")
    for folder in ("agents/suite/tools/case_a", "agents/suite-x/tools/case_b"):
        (root / folder).mkdir(parents=True)
        (root / folder / "spec.yaml").write_text("description: d\nagent: echo\nuser_messages:\n  - text: hi\n")
    wb = Workbench(root, [root / "agents"], pool)
    fresh = [ref.id for ref in discover([root / "agents"], root).cases]
    assert list(wb.cases) == fresh
    sets["echo"]["eval_cases"].append(eval_case("case_new", "new one"))
    await wb.on_changes([write_set(root, "echo", sets["echo"])])
    await wb.wait()
    assert list(wb.cases) == [ref.id for ref in discover([root / "agents"], root).cases]


# --- scoring from threads -----------------------------------------------------------------------


def test_scoring_threads_that_start_together_all_get_a_score_and_load_only_nltks_stemmer():
    """The workbench scores big runs in threads (`asyncio.to_thread`), so on a first run several of
    them load the ROUGE stemmer at once. In a fresh interpreter (the stemmer not loaded yet), 16
    threads released together each score a response: every one must get its score, and NLTK must
    not be imported whole (NumPy, SciPy: about a second), which the stemmer's loader avoids.
    (Through the workbench the same race leaves some cases with no verdict, only a Notice such as
    "ImportError: cannot import name 'PorterStemmer' from 'nltk.stem.porter'", in about half the runs.)"""
    code = (
        "import json, sys, threading\n"
        "from agentdiff.core.scoring import rouge\n"
        "barrier, scores, errors = threading.Barrier(16), [], []\n"
        "def score():\n"
        "    barrier.wait()\n"
        "    try:\n"
        "        scores.append(rouge.rouge1('the lights were running', 'the light runs').fmeasure)\n"
        "    except Exception as exc:\n"
        "        errors.append(f'{type(exc).__name__}: {exc}')\n"
        "threads = [threading.Thread(target=score) for _ in range(16)]\n"
        "for t in threads: t.start()\n"
        "for t in threads: t.join()\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'nltk', 'numpy', 'scipy'})\n"
        "print(json.dumps({'scores': sorted(set(scores)), 'errors': errors, 'heavy': heavy}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["errors"] == []
    assert out["scores"] == [pytest.approx(6 / 7)]  # "the light were run" vs "the light run": P 3/4, R 1
    assert out["heavy"] == []


async def test_cases_reordered_in_their_file_are_listed_in_the_new_order_and_nothing_runs(root, sets, pool):
    wb, _ = await start(root, pool)
    sets["echo"]["eval_cases"].reverse()
    await wb.on_changes([write_set(root, "echo", sets["echo"])])
    await wb.wait()
    assert list(wb.cases) == [ref.id for ref in discover([root / "agents"], root).cases] == [ECHO_1, ECHO_0, OTHER_0]
    assert pool.jobs == []


async def test_a_case_whose_agent_appears_later_runs_again_once_its_package_is_there(root, pool):
    (root / "agents" / "late").mkdir(parents=True)
    write_set(root, "late", {"eval_set_id": "late", "eval_cases": [eval_case("case_0", "hi")]})
    wb, _ = await start(root, pool)
    case = case_id("late", "case_0")
    assert wb.cases[case].status is CaseStatus.ERROR and "no agent found" in wb.cases[case].run.result.error
    marker = root / "agents" / "late" / "agent.py"
    marker.write_text(ECHO_AGENT, encoding="utf-8")
    await wb.on_changes([marker])
    await wb.wait()
    assert wb.cases[case].status is CaseStatus.PASSED and wb.cases[case].reason == "re-run: agents/late/agent.py changed"
    assert wb.index.get(case).agent_dir == marker.parent


class SecondRunDiffers(EchoPool):
    """Runs of a repeated case disagree: the second repeat answers differently (a flaky agent)."""

    async def run(self, job, timeout=None):
        out = await super().run(job, timeout)
        if job.repeat == 1:
            for event in out.events[1::2]:
                event["content"] = {"role": "model", "parts": [{"text": "something else entirely"}]}
        return out


async def test_a_flaky_case_is_never_accepted_with_an_arbitrary_run(root, sets):
    from agentdiff.core.baselines.documents import RecordError

    pool = SecondRunDiffers()
    wb = Workbench(root, [root / "agents"], pool, RunOptions(num_runs=2))
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    assert wb.cases[ECHO_0].status is CaseStatus.FLAKY
    with pytest.raises(RecordError, match=r"is flaky \(its runs disagree\): choose the run to accept; run 1: passed · calls none; run 2: failed"):
        await wb.plan_accept(ECHO_0)
    plan = await wb.plan_accept(ECHO_0, repeat=1)
    assert '+        "text": "something else entirely"' in plan.preview
    with pytest.raises(RecordError, match="nothing to accept"):
        await wb.plan_accept(ECHO_0, repeat=0)  # the first run is what the baseline says


async def test_renaming_an_agent_folder_moves_its_cases_at_once(root, sets, pool):
    """A rename reports only the two folder paths: the old one's cases go, the new one's come, and they
    run with the agent found under its new name."""
    wb, _ = await start(root, pool)
    (root / "agents" / "echo").rename(root / "agents" / "echo2")
    await wb.on_changes([root / "agents" / "echo", root / "agents" / "echo2"])
    await wb.wait()
    moved = [case_id.replace("agents/echo/echo.", "agents/echo2/echo.") for case_id in (ECHO_0, ECHO_1)]
    assert sorted(wb.cases) == sorted([*moved, OTHER_0])
    assert sorted(job.case_id for job in pool.jobs) == sorted(moved)
    assert {job.agent.name for job in pool.jobs} == {"echo2"}
    assert all(wb.cases[case_id].status is CaseStatus.PASSED for case_id in moved)


async def test_a_symlink_loop_named_like_an_eval_file_is_a_load_error_while_watching(root, sets, pool):
    wb, _ = await start(root, pool)
    loop = root / "agents" / "echo" / "loop.evalset.json"
    loop.symlink_to(loop.name)
    pair = root / "agents" / "echo" / "a.evalset.json"
    pair.symlink_to("b.evalset.json")
    (root / "agents" / "echo" / "b.evalset.json").symlink_to(pair.name)
    await wb.on_changes([loop, pair])
    await wb.wait()
    errors = {(e.file, e.message) for e in wb.errors}
    assert ("agents/echo/loop.evalset.json", "a symlink loop (its links lead back to themselves)") in errors
    assert ("agents/echo/a.evalset.json", "a symlink loop (its links lead back to themselves)") in errors
    assert set(statuses(wb)) == {ECHO_0, ECHO_1, OTHER_0}  # the other cases are still there


async def test_a_broken_eval_file_deleted_takes_its_load_error_with_it(root, sets, pool):
    wb, _ = await start(root, pool)
    broken = root / "agents" / "echo" / "broken.evalset.json"
    broken.write_text("{")
    await wb.on_changes([broken])
    assert [e.file for e in wb.errors] == ["agents/echo/broken.evalset.json"]
    broken.unlink()
    await wb.on_changes([broken])
    assert wb.errors == []


async def test_an_eval_file_replaced_by_a_folder_of_its_name_takes_its_cases_with_it(root, sets, pool):
    import shutil

    wb, _ = await start(root, pool)
    path = root / ECHO_SET
    path.unlink()
    path.mkdir()
    await wb.on_changes([path])
    await wb.wait()
    assert set(statuses(wb)) == {OTHER_0}
    shutil.rmtree(path)


async def test_a_test_config_swapped_for_a_symlink_rescores_its_cases(root, sets, pool):
    wb, _ = await start(root, pool)
    (root / "strict.json").write_text(json.dumps({"criteria": {"response_match_score": 1.1}}))  # nothing passes
    config = root / "agents" / "echo" / "test_config.json"
    config.unlink(missing_ok=True)
    config.symlink_to(root / "strict.json")
    await wb.on_changes([config])
    await wb.wait()
    assert statuses(wb)[ECHO_1] is CaseStatus.FAILED and statuses(wb)[OTHER_0] is CaseStatus.PASSED
