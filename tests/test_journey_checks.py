"""Journey checks: the checks file (parsed, merged, located errors), each check on passing and
failing traces with the element it reports, python checks, and a case's verdict, divergence and
re-score through the workbench and the TUI."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from pathlib import Path

import pytest
from agentdiff.core.formats.checks_file import CHECKS_FILE, CheckSpec, load_checks_file
from agentdiff.core.run.journey import JourneyTrace, evaluate
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.workbench import Workbench
from workbench_support import EchoPool, case_id, echo_project

CHECKS = """\
checks:
  max_tool_calls: 3
  no_repeat: [issue_refund]
  order: [[lookup_order, issue_refund]]
eval_sets:
  orders.evalset.json:
    max_tool_calls: 5
cases:
  refund_twice:
    no_repeat: null
    forbidden: [delete_account]
"""


def load(tmp_path: Path, text: str):
    path = tmp_path / CHECKS_FILE
    path.write_text(text)
    return load_checks_file(path, CHECKS_FILE)


def test_a_case_s_checks_are_the_file_s_then_its_eval_set_s_then_its_own_each_with_its_line(tmp_path):
    checks, errors = load(tmp_path, CHECKS)
    assert errors == []
    plain = checks.for_case(("other.evalset.json", "other"), ("case_0",))
    assert [(s.label, s.line) for s in plain] == [
        ("max_tool_calls ≤ 3", 2), ("no_repeat issue_refund", 3), ("order lookup_order before issue_refund", 4)]
    mine = checks.for_case(("orders.evalset.json", "orders"), ("refund_twice", "orders.evalset.json::refund_twice"))
    assert [(s.label, s.line) for s in mine] == [
        ("max_tool_calls ≤ 5", 7), ("order lookup_order before issue_refund", 4), ("forbidden delete_account", 11)]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("checks:\n  max_tool_cals: 3\n", 2, "unknown check 'max_tool_cals' (use max_tool_calls"),
        ("checks:\n  max_tokens: lots\n", 2, "`max_tokens` must be a number ≥ 0"),
        ("checks:\n  order: [[a]]\n", 2, "`order` must be a list of [first_tool, then_tool] pairs"),
        ("checks:\n  python: [checks.nope]\n", 2, '`python` must be a list of "file.py:function"'),
        ("chekcs:\n  max_tool_calls: 3\n", 1, "unknown section 'chekcs'"),
        ("cases:\n  a:\n    max_calls: {t: -1}\n", 3, "`max_calls` must be a table of tool name: whole number ≥ 0"),
        ("checks: [\n", 2, "invalid YAML"),
    ],
)
def test_a_bad_checks_file_is_a_located_error_and_checks_nothing(tmp_path, text, line, message):
    checks, errors = load(tmp_path, text)
    assert checks is None and len(errors) == 1
    assert errors[0].line == line and message in errors[0].message, errors[0]


def call(turn: int, index: int, name: str, **args) -> dict:
    return {"turn": turn, "index": index, "agent": "a", "name": name, "args": args, "response": None}


REFUND_TWICE = JourneyTrace("c", [call(0, 0, "lookup_order", order_id="A1"), call(0, 1, "issue_refund", order_id="A1", amount=5),
                                  call(1, 0, "issue_refund", order_id="A1", amount=5)], tokens=1200, seconds=2.5)
REFUND_FIRST = JourneyTrace("c", [call(0, 0, "issue_refund", order_id="", amount=5), call(0, 1, "lookup_order", order_id="A1")])


def spec(kind: str, tool=None, value=None) -> CheckSpec:
    return CheckSpec(kind, tool, value, CHECKS_FILE, 1)


@pytest.mark.parametrize(
    "check, trace, broken",
    [
        (spec("max_tool_calls", value=3), REFUND_TWICE, None),
        (spec("max_tool_calls", value=2), REFUND_TWICE, ("3 tool calls, more than 2", 1, 0)),
        (spec("max_calls", "issue_refund", 1), REFUND_TWICE, ("issue_refund called 2 times, more than 1", 1, 0)),
        (spec("max_calls", "issue_refund", 2), REFUND_TWICE, None),
        (spec("no_repeat", "issue_refund"), REFUND_TWICE, ("issue_refund called again; first in turn 1, call 2", 1, 0)),
        (spec("no_repeat", "lookup_order"), REFUND_TWICE, None),
        (spec("forbidden", "issue_refund"), REFUND_TWICE, ("issue_refund called", 0, 1)),
        (spec("forbidden", "delete_account"), REFUND_TWICE, None),
        (spec("order", "issue_refund", ("lookup_order", "issue_refund")), REFUND_TWICE, None),
        (spec("order", "issue_refund", ("lookup_order", "issue_refund")), REFUND_FIRST, ("issue_refund called before any lookup_order", 0, 0)),
        (spec("required_args", "issue_refund", ["order_id", "amount"]), REFUND_TWICE, None),
        (spec("required_args", "issue_refund", ["order_id", "amount"]), REFUND_FIRST, ("issue_refund called without order_id", 0, 0)),
        (spec("max_tokens", value=1000), REFUND_TWICE, ("1,200 tokens, more than 1,000", None, None)),
        (spec("max_tokens", value=1200), REFUND_TWICE, None),
        (spec("max_seconds", value=2), REFUND_TWICE, ("2.5 s, more than 2 s", None, None)),
    ],
)
def test_each_check_holds_or_names_what_broke_it(check, trace, broken):
    breach = evaluate(check, trace)
    if broken is None:
        assert breach is None
    else:
        reason, turn, index = broken
        assert breach is not None and breach.reason.startswith(reason) and (breach.turn, breach.call) == (turn, index), breach


def test_python_checks_pass_fail_with_their_reason_and_a_broken_check_says_so(tmp_path):
    (tmp_path / "checks.py").write_text(
        "def fine(trace):\n    return None\n"
        "def says(trace):\n    return f'{len(trace.calls(\"issue_refund\"))} refunds'\n"
        "def no(trace):\n    return False\n"
        "def asserts(trace):\n    assert trace.tokens < 100, 'too many tokens'\n"
        "def buggy(trace):\n    return trace.nope\n"
    )

    def run(function: str):
        check = CheckSpec("python", None, f"checks.py:{function}", CHECKS_FILE, 1, tmp_path / CHECKS_FILE)
        breach = evaluate(check, REFUND_TWICE)
        return breach.reason if breach else None

    assert run("fine") is None
    assert run("says") == "2 refunds"
    assert run("no") == "the check returned False"
    assert run("asserts") == "too many tokens"
    assert run("buggy").startswith("the check raised AttributeError")
    assert run("missing") == "the check raised AttributeError: checks.py has no function missing"


def test_a_python_check_that_hangs_or_exits_fails_and_agentdiff_goes_on(tmp_path, monkeypatch):
    from agentdiff.core.run import journey

    monkeypatch.setattr(journey, "PYTHON_CHECK_SECONDS", 0.3)
    (tmp_path / "checks.py").write_text(
        "import sys, time\n"
        "calls = []\n"
        "def hangs(trace):\n    calls.append(1)\n    time.sleep(5)\n"
        "def exits(trace):\n    sys.exit(3)\n"
        "def spins(trace):\n    n = 0\n    while True:\n        n += 1\n"
    )
    check = CheckSpec("python", None, "checks.py:hangs", CHECKS_FILE, 1, tmp_path / CHECKS_FILE)
    started = time.monotonic()
    assert evaluate(check, REFUND_TWICE).reason == "the check did not finish within 0.3 s"
    assert evaluate(check, REFUND_TWICE).reason.startswith("an earlier call of the check did not finish")  # not called again
    assert time.monotonic() - started < 4  # neither call waited for the sleeping one
    module = next(m for m in journey._MODULES.values() if getattr(m, "__file__", "") == str(tmp_path / "checks.py"))
    assert module.calls == [1]
    exits = CheckSpec("python", None, "checks.py:exits", CHECKS_FILE, 1, tmp_path / CHECKS_FILE)
    assert evaluate(exits, REFUND_TWICE).reason == "the check raised SystemExit: 3"
    unhandled = []
    monkeypatch.setattr(threading, "excepthook", unhandled.append)
    spins = CheckSpec("python", None, "checks.py:spins", CHECKS_FILE, 1, tmp_path / CHECKS_FILE)
    assert evaluate(spins, REFUND_TWICE).reason == "the check did not finish within 0.3 s"
    deadline = time.monotonic() + 10
    while any(t.name == "agentdiff-check checks.py:spins" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(t.name == "agentdiff-check checks.py:spins" for t in threading.enumerate())  # stopped, not left holding a core
    assert unhandled == []  # the stop is caught in the thread, never reported as an error


# --- through the workbench: verdict, divergence, re-score without an agent call ---------------------------


async def run_once(tmp_path: Path):
    """The echo project's workbench, every case run once: (workbench, pool)."""
    pool = EchoPool()
    wb = Workbench(tmp_path, [tmp_path / "agents"], pool)
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    return wb, pool


QUIET, CHATTY = "def quiet(trace):\n    return None\n", "def quiet(trace):\n    return 'too chatty'\n"


def save(path: Path, text: str, later: int = 1) -> None:
    """Write `text`, dated `later` seconds on: a new version of the file even on a coarse clock."""
    path.write_text(text)
    os.utime(path, ns=(time.time_ns() + later * 10**9,) * 2)


async def quiet_checked(tmp_path: Path, folder: str, texts: list[str]):
    """Echo cases checked by `checks.py:quiet` (passing), its files in `folder`, run once: the
    workbench, its pool, the check's file and the eval sets (to edit)."""
    sets = echo_project(tmp_path, {"echo": texts})
    code = tmp_path / folder / "checks.py"
    code.write_text(QUIET)
    (tmp_path / folder / CHECKS_FILE).write_text('checks:\n  python: ["checks.py:quiet"]\n')
    wb, pool = await run_once(tmp_path)
    assert all(state.status is CaseStatus.PASSED for state in wb.cases.values())
    return wb, pool, code, sets


async def test_a_failing_check_fails_the_case_leads_its_divergences_and_a_checks_edit_rescores(tmp_path):
    echo_project(tmp_path, {"echo": ["hello", "secret plan"]})
    folder = tmp_path / "agents" / "echo"
    (folder / "checks.py").write_text(
        "def no_secrets(trace):\n"
        "    said = ' '.join(p.get('text', '') for e in trace.events if e['author'] != 'user' for p in e['content']['parts'])\n"
        "    return 'said a secret' if 'secret' in said else None\n"
    )
    checks = folder / CHECKS_FILE
    checks.write_text('checks:\n  max_tool_calls: 0\n  python: ["checks.py:no_secrets"]\n')
    wb, pool = await run_once(tmp_path)
    hello, secret = wb.cases[case_id("echo", "case_0")], wb.cases[case_id("echo", "case_1")]
    assert hello.status is CaseStatus.PASSED and secret.status is CaseStatus.FAILED  # ADK's metrics pass both
    rows = {m.name: (m.status.value, m.reason) for m in secret.run.result.metrics if m.name.startswith("check:")}
    assert rows == {"check: max_tool_calls ≤ 0": ("passed", None), "check: python checks.py:no_secrets": ("failed", "said a secret")}
    lead = secret.run.diff.first_divergence
    assert lead is secret.run.diff.divergences[0] and lead.kind == "check"
    assert secret.run.result.runs[0].status is CaseStatus.FAILED  # the repeat's record too (ADK's results say so)
    assert any(layer.status == "changed" for layer in secret.run.result.layers)  # and the reports' layers
    assert (lead.source.file, lead.source.line) == (f"agents/echo/{CHECKS_FILE}", 3)
    from agentdiff.tui.cli.table import render_case_table

    table = render_case_table([secret.run.result])  # `run`'s table: the broken check once, with its line
    assert table.count("said a secret") == 1
    assert f"check python checks.py:no_secrets: said a secret  (agents/echo/{CHECKS_FILE}:3)" in table
    jobs = len(pool.jobs)
    checks.write_text('checks:\n  max_tool_calls: 0\n')
    await wb.on_changes([checks])
    await wb.wait()
    assert len(pool.jobs) == jobs  # re-scored from the runs it has
    assert secret.status is CaseStatus.PASSED and secret.reason == f"re-score: agents/echo/{CHECKS_FILE} changed"
    checks.write_text("checks:\n  max_tool_calls: many\n")  # broken: an error entry, and the cases check nothing
    await wb.on_changes([checks])
    await wb.wait()
    assert [(e.file, e.line) for e in wb.errors] == [(f"agents/echo/{CHECKS_FILE}", 2)]
    assert all(not m.name.startswith("check:") for m in secret.run.result.metrics)
    checks.write_text("checks:\n  max_tool_calls: 0\n")
    await wb.on_changes([checks])
    await wb.wait()
    assert wb.errors == []


async def test_editing_a_python_check_s_file_rescores_its_cases_with_the_new_code(tmp_path):
    """A check's module beside a project-wide checks file (not in an agent): saving it re-scores the
    cases it checks from their runs, with no agent call, and the new code decides."""
    wb, pool, code, _ = await quiet_checked(tmp_path, ".", ["hello", "secret plan"])
    hello, jobs = wb.cases[case_id("echo", "case_0")], len(pool.jobs)
    save(code, CHATTY)
    (selection,) = await wb.on_changes([code])
    await wb.wait()
    assert (selection.action, selection.reason) == ("rescore", "re-score: checks.py changed")
    assert len(pool.jobs) == jobs  # no agent call
    assert hello.status is CaseStatus.FAILED and hello.reason == "re-score: checks.py changed"
    assert [m.reason for m in hello.run.result.metrics if m.name == "check: python checks.py:quiet"] == ["too chatty"]


async def test_a_python_check_s_file_inside_the_agent_s_package_is_no_agent_code(tmp_path):
    """ADK's layout keeps eval sets (and so checks) in the agent's package: saving the check's file
    re-scores its cases and calls no agent, paused or not."""
    wb, pool, code, _ = await quiet_checked(tmp_path, "agents/echo", ["hello"])
    hello, jobs = wb.cases[case_id("echo", "case_0")], len(pool.jobs)
    save(code, CHATTY)
    (selection,) = await wb.on_changes([code])
    await wb.wait()
    assert (selection.action, selection.reason, len(pool.jobs)) == ("rescore", "re-score: agents/echo/checks.py changed", jobs)
    assert hello.status is CaseStatus.FAILED
    await wb.set_paused(True)
    save(code, QUIET, later=2)
    await wb.on_changes([code])
    assert hello.stale
    (selection,) = await wb.set_paused(False)
    await wb.wait()
    assert (selection.action, len(pool.jobs), hello.status) == ("rescore", jobs, CaseStatus.PASSED)


async def test_a_check_s_file_the_agent_imports_runs_again_and_one_saved_with_a_dropped_case_is_no_crash(tmp_path):
    """A module the agent reads too (shared helpers) is agent code as well: its cases run again. A save
    of the check's file in one batch with an eval set that drops a case checks only the cases left."""
    from workbench_support import write_set

    wb, pool, code, sets = await quiet_checked(tmp_path, "agents/echo", ["hello", "bye"])
    sets["echo"]["eval_cases"].pop()  # case_1 goes
    write_set(tmp_path, "echo", sets["echo"])
    save(code, CHATTY)
    await wb.on_changes([tmp_path / "agents" / "echo" / "echo.evalset.json", code])
    await wb.wait()
    hello = wb.cases[case_id("echo", "case_0")]
    assert list(wb.cases) == [hello.ref.id] and hello.status is CaseStatus.FAILED
    files = wb.index.get(hello.ref.id)
    wb.index.put(dataclasses.replace(files, files_read=files.files_read | {code.resolve()}))  # as if agent.py imported it
    jobs = len(pool.jobs)
    save(code, QUIET, later=2)
    (selection,) = await wb.on_changes([code])
    await wb.wait()
    assert (selection.action, len(pool.jobs)) == ("run", jobs + 1) and hello.status is CaseStatus.PASSED


async def test_a_python_check_s_file_behind_a_symlink_while_paused_and_with_its_checks_file(tmp_path, monkeypatch):
    """The module is a symlink (the watcher names its target); a save while watching is paused marks
    its cases stale; a save together with the checks file re-scores each case once."""
    echo_project(tmp_path, {"echo": ["hello"]})
    (tmp_path / "shared").mkdir()
    target = tmp_path / "shared" / "real_checks.py"
    target.write_text("def quiet(trace):\n    return None\n")
    (tmp_path / "checks.py").symlink_to(target)
    checks = tmp_path / CHECKS_FILE
    checks.write_text('checks:\n  python: ["checks.py:quiet"]\n')
    wb, pool = await run_once(tmp_path)
    hello = wb.cases[case_id("echo", "case_0")]
    assert hello.status is CaseStatus.PASSED
    save(target, CHATTY)
    await wb.set_paused(True)
    await wb.on_changes([target])
    assert hello.stale and hello.reason == "stale: shared/real_checks.py changed while watching was paused"
    (selection,) = await wb.set_paused(False)
    await wb.wait()
    assert (selection.action, selection.case_ids) == ("rescore", [hello.ref.id])
    assert hello.status is CaseStatus.FAILED and not hello.stale
    rescored = []
    real = wb.rescore

    async def counted(ids, reason):
        rescored.append(sorted(ids))
        await real(ids, reason)

    monkeypatch.setattr(wb, "rescore", counted)
    save(target, QUIET, later=2)
    checks.write_text('checks:\n  max_tool_calls: 3\n  python: ["checks.py:quiet"]\n')
    await wb.on_changes([target, checks])
    await wb.wait()
    assert rescored == [[hello.ref.id]]  # once, by the checks file's reload, with the new code
    assert hello.status is CaseStatus.PASSED


async def test_in_the_tui_a_check_on_a_tool_call_is_reached_with_bracket_and_e_opens_its_line(tmp_path):
    from fake_pool import CannedPool
    from tui_support import FakeEditor, copy_samples, make_app, settle

    samples = copy_samples(tmp_path)
    (samples / "customer_service" / CHECKS_FILE).write_text("checks:\n  max_calls:\n    issue_refund: 0\n")
    editor = FakeEditor()
    app = make_app(tmp_path, CannedPool(tmp_path), editor=editor)
    refund = "sample_agents/customer_service/customer_service.evalset.json::refund_delivered_order"
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        state = app.workbench.cases[refund]
        assert state.status is CaseStatus.FAILED  # its trajectory passes; the check does not
        app.main.tree.select_case(refund)
        await pilot.pause(0.2)
        current = app.main.detail.divergence
        assert current.kind == "check" and current.layer == "tool_calls"
        assert "issue_refund called 1 times, more than 0" in str(app.main.detail.extra)
        row = state.run.diff.turns[current.turn].tool_calls[current.row]
        assert row.actual.name == "issue_refund"
        await pilot.press("e")
        await pilot.pause(0.2)
        (path, line), = editor.opened
        assert path.name == CHECKS_FILE and path.read_text().splitlines()[line - 1].strip() == "issue_refund: 0"
        report = json.loads(json.dumps([m.name for m in state.run.result.metrics]))
        assert "check: max_calls issue_refund ≤ 0" in report


@pytest.mark.adk
def test_accept_says_a_failing_check_still_fails_the_case(tmp_path, monkeypatch):
    import shutil

    from conftest import ROOT
    from test_cli import run

    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "agents" / "home_automation", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    shutil.copy(ROOT / "sample_agents" / "demo_model.py", tmp_path / "agents" / "demo_model.py")
    (tmp_path / "agents" / "home_automation" / CHECKS_FILE).write_text("cases:\n  dim_living_room: {forbidden: [set_device_state]}\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("accept", "dim_living_room", "--yes")
    assert code == 0, err
    assert "note: agents/home_automation/home_automation.evalset.json::dim_living_room still fails check: forbidden set_device_state" in out
