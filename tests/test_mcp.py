"""`agentdiff mcp` driven by the `mcp` SDK's own client over stdio, on a copy of the samples (real
workers, the demo model): the loop a coding agent works, the journal it shares with people, and what
it is refused."""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp_support import AGENTDIFF, mcp_session
from tui_support import copy_samples

from agentdiff.core.baselines.journal_entries import journal_entries

REFUND_LATE = "sample_agents/customer_service/customer_service.evalset.json::refund_too_late"
DIM = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"


def project(tmp_path: Path) -> Path:
    copy_samples(tmp_path)
    return tmp_path


def changed_lines(before: str, after: str) -> list[int]:
    """The 1-based line numbers of `before` that `after` replaced or removed (and where it added)."""
    lines = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False).get_opcodes():
        if tag != "equal":
            lines += list(range(i1 + 1, max(i2, i1 + 1) + 1))
    return lines


async def test_a_coding_agent_fixes_a_case_through_the_tools_and_a_person_can_undo_its_accept(tmp_path):
    root = project(tmp_path)
    evalset = root / "sample_agents/home_automation/home_automation.evalset.json"
    original = evalset.read_bytes()
    async with mcp_session(root) as call:
        tools = {tool.name for tool in (await call.session.list_tools()).tools}
        assert {"status", "list_cases", "run", "diff", "explain", "accept", "apply", "undo", "redo", "compare", "gate",
                "failures", "doctor"} <= tools
        first = await call("run", which="all", timeout=120)
        assert "still_running" not in first and first["ran"] > 10, first
        status = await call("status")
        assert status["counts"].get("failed", 0) >= 3 and status["running"] == []
        explained = await call("explain", case="refund_too_late")
        lead = explained["first_divergence"]
        assert explained["status"] == "failed" and lead["layer"] == "tool_calls" and "issue_refund" in lead["summary"], explained
        assert lead["source"]["file"].endswith("customer_service.evalset.json") and lead["source"]["line"] > 1

        prompt = root / "sample_agents/customer_service/prompt.md"  # the fix the divergence points to
        prompt.write_text(prompt.read_text().replace("issue_refund(order_id=<order_id>, amount=<total>)",
                                                     "issue_refund(order_id=<order_id>, amount=<total>) if <eligible>"))
        affected = await call("run", which="affected", timeout=120)
        ran = {case["id"] for case in affected["cases"]}
        assert ran and all(case_id.startswith("sample_agents/customer_service/") for case_id in ran), ran
        assert REFUND_LATE in ran and next(c for c in affected["cases"] if c["id"] == REFUND_LATE)["status"] == "passed", affected
        changed = (await call("status"))["changed_since_last_status"]
        assert any(c["id"] == REFUND_LATE and c["was"] == "failed" and c["now"] == "passed" for c in changed), changed

        diff = await call("diff", case="dim_living_room", layer="tool_calls")
        assert diff["first_divergence"]["layer"] == "tool_calls" and "pages" not in diff and "request" not in diff["turns"][0]
        plan = await call("accept", case="dim_living_room")
        assert "sample_agents/home_automation/home_automation.evalset.json" in plan["files"] and "brightness" in plan["preview"]
        assert evalset.read_bytes() == original  # a plan writes nothing
        written = await call("apply", plan_digest=plan["plan_digest"])
        assert set(written["files"]) == set(plan["files"]), written
        record = json.loads((root / "sample_agents/home_automation/home_automation.agentdiff-record.json").read_text())
        assert record["dim_living_room"]["assistant"] == "test-assistant"  # what `agentdiff baselines` shows of it
        after = evalset.read_text()
        before = original.decode()
        start = before.index('"eval_id": "dim_living_room"')
        first_line, last_line = before[:start].count("\n") + 1, before[:before.index('"eval_id"', start + 1)].count("\n") + 1
        assert all(first_line <= line <= last_line for line in changed_lines(before, after)), changed_lines(before, after)
        again = await call("run", cases=[DIM])
        assert again["cases"][0]["status"] == "passed", again
        (entry,) = [e for e in journal_entries(root) if e.state == "applied"]
        assert entry.author == "test-assistant"
        undone = await call("undo")
        assert undone["done"] and undone["written_by"] == "test-assistant"
        assert evalset.read_bytes() == original  # byte for byte
        assert not (root / "sample_agents/home_automation/home_automation.agentdiff-record.json").exists()  # it was new
        assert (await call("redo"))["done"] and evalset.read_text() == after
        doctor = await call("doctor")
        assert "customer_service imports" in doctor["output"], doctor
        report = await call.session.read_resource("agentdiff://report/latest.json")
        assert any(case["id"] == REFUND_LATE and case["status"] == "passed" for case in json.loads(report.contents[0].text)["cases"])
    from agentdiff.core.reports.kept_runs import kept_runs

    (session_run,) = kept_runs(root)  # the session's results, kept for compare and gate
    assert session_run.meta.get("source") == "mcp", session_run.meta
    listed = subprocess.run([AGENTDIFF, "undo", "--list"], cwd=root, capture_output=True, text=True)
    assert "by test-assistant" in listed.stdout, listed.stdout
    done = subprocess.run([AGENTDIFF, "undo"], cwd=root, capture_output=True, text=True)
    assert "(written by test-assistant)" in done.stdout and evalset.read_bytes() == original, done.stdout


async def test_what_the_server_refuses_says_what_to_do_instead(tmp_path):
    root = project(tmp_path)
    async with mcp_session(root) as call:
        await call("run", cases=[DIM])
        kind, text = await call("explain", case="no_such_case")
        assert kind == "error" and "no case 'no_such_case' here" in text and "list_cases" in text
        kind, text = await call("diff", case="../../../etc/passwd")
        assert kind == "error" and "no case" in text
        kind, text = await call("list_cases", filter="colour:red")
        assert kind == "error" and "unknown filter key 'colour'" in text
        kind, text = await call("run")
        assert kind == "error" and "either `cases`" in text
        kind, text = await call("compare", base="/etc/passwd.json")
        assert kind == "error" and "outside the project" in text
        kind, text = await call("gate", run="--junit=/tmp/x.xml")
        assert kind == "error" and "is not a kept run" in text
        kind, text = await call("compare", base="latest")
        assert kind == "error" and "no latest run" in text and "latest, previous, session, start" in text, text
        kind, text = await call("apply", plan_digest="0123456789abcdef")
        assert kind == "error" and "no such plan" in text
        kind, text = await call("accept", case=DIM, turn=0)
        assert kind == "error" and "`turn` counts from 1" in text
        assert (await call("diff", case=DIM, turn=1))["turns"][0]["turn"] == 1  # one numbering: from 1, as every argument
        kitchen = "sample_agents/home_automation/home_automation.evalset.json::turn_on_kitchen_light"
        await call("run", cases=[kitchen])
        kind, text = await call("accept", case=kitchen)  # it passes: nothing to write
        assert kind == "error" and "nothing to accept: the baseline already says what the run did" in text, text
        replanned = await call("accept", case=DIM)
        await call("run", cases=[DIM])  # it ran again since the plan
        kind, text = await call("apply", plan_digest=replanned["plan_digest"])
        assert kind == "error" and "ran again (or is running) since it was made" in text
        plan = await call("accept", case=DIM)
        evalset = root / "sample_agents/home_automation/home_automation.evalset.json"
        evalset.write_text(evalset.read_text() + "\n")  # edited since the plan
        kind, text = await call("apply", plan_digest=plan["plan_digest"])
        assert kind == "error" and "the plan is stale" in text and "home_automation.evalset.json changed since it was made" in text
        assert journal_entries(root) == []


async def test_live_runs_over_the_projects_limit_need_the_estimate_they_were_shown(tmp_path):
    root = project(tmp_path)
    (root / "pyproject.toml").write_text("[tool.agentdiff]\nconfirm_live_above = 2\n")
    async with mcp_session(root) as call:
        kind, text = await call("run", which="all", mode="live")
        assert kind == "error" and "over confirm_live_above (2)" in text, text
        assert (await call("status"))["mode"] != "live"
        estimate = text.split("confirm=", 1)[1].split("; or run fewer")[0]
        done = await call("run", which="all", mode="live", confirm=json.loads(estimate))
        assert done["ran"] > 2 and "still_running" not in done
        assert (await call("status"))["mode"] != "live"  # a mode is that call's: the recorded cases replay again
        prompt = root / "sample_agents/customer_service/prompt.md"  # its 5 live cases affected: held, not run unseen
        prompt.write_text(prompt.read_text() + "\nBe brief.\n")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 15
        while ((held := await call("status"))["running"] or len(held["stale"]) < 5) and loop.time() < deadline:
            await asyncio.sleep(0.1)
        assert len(held["stale"]) == 5 and held["running"] == [], held  # its two recorded cases replayed: they cost nothing
        assert all(case_id.startswith("sample_agents/customer_service/customer_service.evalset.json::") for case_id in held["stale"])
        kind, text = await call("run", which="affected")
        assert kind == "error" and "5 cases would run live" in text, text
        estimate = text.split("confirm=", 1)[1].split("; or run fewer")[0]
        done = await call("run", which="affected", confirm=json.loads(estimate))
        assert done["ran"] == 7 and "still_running" not in done and (await call("status"))["stale"] == []


def _children(pid: int) -> list[int]:
    try:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    except OSError:
        return []
    return [int(p) for p in out.split()]


async def test_a_client_that_goes_away_mid_run_leaves_no_process_behind(tmp_path):
    """stdin closed while a run is in flight: the server ends, its workers with it."""
    root = project(tmp_path)
    server = subprocess.Popen([AGENTDIFF, "mcp"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                                         "clientInfo": {"name": "gone", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run", "arguments": {"which": "all"}}},
    ]
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    server.stdin.flush()
    assert b'"id":1' in server.stdout.readline().replace(b" ", b"")  # initialized
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not _children(server.pid) and loop.time() < deadline:  # the workers are up: a run is in flight
        await asyncio.sleep(0.05)
    workers = _children(server.pid)
    assert workers, "no worker started"
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    for pid in workers:
        deadline = loop.time() + 10
        while loop.time() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail(f"worker {pid} outlived the server")


async def test_an_open_tui_sees_the_assistants_accept_and_both_accepts_land(tmp_path):
    """A TUI and an MCP server on one project: the assistant's accept shows in the TUI (its case loaded
    again, a notice naming the assistant), and the person's accept made meanwhile lands too."""
    from fake_pool import CannedPool
    from tui_support import FakeEditor, settle, until

    from agentdiff.tui.app import create_app

    root = project(tmp_path)
    app = create_app(root, [root / "sample_agents"], pool=CannedPool(root), watch=True, editor=FakeEditor(), project="samples")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        async with mcp_session(root) as call:
            await call("run", cases=[DIM])
            plan = await call("accept", case="dim_living_room")
            app.main.tree.select_case(REFUND_LATE)
            await pilot.pause(0.1)
            await pilot.press("a")
            await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
            await pilot.press("y")  # the person's accept, while the assistant's plan waits
            applied = await call("apply", plan_digest=plan["plan_digest"])
            assert "home_automation.evalset.json" in " ".join(applied["files"])
            await until(pilot, lambda: any("test-assistant accepted" in n.message for n in app._notifications), timeout=15,
                        what="the assistant's notice")
            await until(pilot, lambda: "home_automation.evalset.json" in app.workbench.cases[DIM].reason, timeout=15,
                        what="the TUI loading the assistant's write")
            await settle(app, pilot)
    entries = [e for e in journal_entries(root) if e.state == "applied"]
    assert sorted(e.author for e in entries) == ["", "test-assistant"], entries
    data = json.loads((root / "sample_agents/customer_service/customer_service.evalset.json").read_text())
    late = next(c for c in data["eval_cases"] if c["eval_id"] == "refund_too_late")
    assert any(u["name"] == "issue_refund" for u in late["conversation"][0]["intermediate_data"]["tool_uses"])  # the person's accept
