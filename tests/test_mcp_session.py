"""`agentdiff mcp` as a coding agent's session meets it: a first answer that is true (the kept verdicts),
a mode that is one call's, "nothing else broke" judged on the session's current state, progress on a
long run, a server started outside the project, a blocked undo, and a diff that says each change once.
Driven by the `mcp` SDK's client over stdio on a copy of the samples (real workers, the demo model)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time

from mcp_support import AGENTDIFF, mcp_session
from tui_support import copy_samples

from agentdiff.core import __version__
from agentdiff.core.baselines.journal_entries import journal_entries

REFUND_LATE = "sample_agents/customer_service/customer_service.evalset.json::refund_too_late"
ORDER_STATUS = "sample_agents/customer_service/customer_service.evalset.json::order_status"
FIX = ("issue_refund(order_id=<order_id>, amount=<total>)", "issue_refund(order_id=<order_id>, amount=<total>) if <eligible>")
KITCHEN = "sample_agents/home_automation/home_automation.evalset.json::turn_on_kitchen_light"
RECORDED = "sample_agents/home_automation/conformance/lights/kitchen_on_then_check"


def _cli(root, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([AGENTDIFF, *args], cwd=root, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "AGENTDIFF_NO_COLOR": "1"})


async def test_a_fresh_server_shows_the_kept_failures_at_its_first_call_typed_and_compact(tmp_path):
    copy_samples(tmp_path)
    ran = _cli(tmp_path, "run", "sample_agents")  # what `agentdiff run --json` reports: 3 failing
    assert ran.returncode == 1, ran.stderr
    async with mcp_session(tmp_path) as call:
        assert call.initialized.server_info.version == __version__
        failing = await call("list_cases", filter="status:failed,error")  # the first call: nothing has run in this session
        assert {c["id"] for c in failing["cases"]} >= {REFUND_LATE} and failing["total"] == 3, failing
        lead = next(c for c in failing["cases"] if c["id"] == REFUND_LATE)
        assert lead["kept"]["by"] == "run" and lead["kept"]["run_started"] and "issue_refund" in lead["first_divergence"], lead
        status = await call("status")
        assert status["counts"].get("failed") == 3, status
        waiting = status["not_run_in_this_session"]
        assert waiting["kept_verdicts"] >= 9 and "model calls" in waiting["run_all_would_take"], waiting
        explained = await call("explain", case="refund_too_late")
        assert explained["kept"]["by"] == "run" and "run(cases=" in explained["next"], explained
        tools = {tool.name: tool for tool in (await call.session.list_tools()).tools}
        assert all(tools[name].annotations.read_only_hint for name in ("status", "list_cases", "diff", "explain", "compare", "gate", "doctor"))
        assert all(tools[name].annotations.destructive_hint for name in ("apply", "undo", "redo", "drop"))
        assert all(tool.output_schema and tool.output_schema.get("type") == "object" for tool in tools.values())
        prompts = {p.name for p in (await call.session.list_prompts()).prompts}
        assert {"fix-case", "triage", "check-change"} <= prompts
        said = await call.session.get_prompt("fix-case", {"case": "refund_too_late"})
        assert "refund_too_late" in said.messages[0].content.text and "gate()" in said.messages[0].content.text
        first = await call("run", which="all", timeout=120)
        assert first["failing"] == 3 and "still_running" not in first
        assert "not_run_in_this_session" not in await call("status")


async def test_a_mode_applies_to_its_call_and_replay_never_runs_a_case_without_recordings(tmp_path):
    copy_samples(tmp_path)
    async with mcp_session(tmp_path) as call:
        kind, text = await call("run", cases=[KITCHEN], mode="replay")
        assert kind == "error" and "nothing to replay" in text and "no recordings" in text, text
        replayed = await call("run", which="all", mode="replay", timeout=120)
        assert replayed["ran"] == 3 and replayed["not_replayed"]["cases"] == 9, replayed  # the EvalSet cases: not run, nothing spent
        live = await call("run", cases=[RECORDED], mode="live", timeout=60)
        assert live["cases"][0]["status"] == "passed"
        assert [c["id"] for c in (await call("list_cases", filter="mode:live"))["cases"]] == [RECORDED]
        again = await call("run", cases=[RECORDED], timeout=60)  # no mode: the case's own again (it replays)
        assert again["cases"][0]["status"] == "passed"
        assert RECORDED in [c["id"] for c in (await call("list_cases", filter="mode:replay"))["cases"]]
        assert (await call("status"))["mode"].startswith("per case")
        gate = await call("gate")  # no run kept before this session: it is judged against its own start
        assert gate["exit_code"] == 0 and gate["compared"].startswith("this session's start"), gate


async def test_gate_and_compare_judge_the_sessions_current_state_not_two_old_runs(tmp_path):
    samples = copy_samples(tmp_path)
    evalset = samples / "customer_service" / "customer_service.evalset.json"
    original = evalset.read_text()
    assert _cli(tmp_path, "run", "sample_agents").returncode == 1  # kept run 1
    data = json.loads(original)
    case = next(c for c in data["eval_cases"] if c["eval_id"] == "order_status")
    case["conversation"][0]["final_response"]["parts"][0]["text"] = "Something else entirely, nothing like the answer at all."
    evalset.write_text(json.dumps(data, indent=2))
    assert _cli(tmp_path, "run", "sample_agents").returncode == 1  # kept run 2: order_status regressed
    assert _cli(tmp_path, "gate").returncode == 1  # the two kept runs: a regression
    evalset.write_text(original)  # the regression fixed
    async with mcp_session(tmp_path) as call:
        await call("run", which="all", timeout=120)
        gate = await call("gate")
        assert gate["exit_code"] == 0 and "this session's current state" in gate["compared"], gate
        compared = await call("compare")
        counts = compared["result"]["counts"]
        assert counts["fixed"] == 1 and counts["regressed"] == 0, compared
        assert [c["id"] for c in compared["result"]["cases"]] == [ORDER_STATUS], compared  # the unchanged ones: counted only
        again = json.loads(original)
        case = next(c for c in again["eval_cases"] if c["eval_id"] == "refund_delivered_order")
        case["conversation"][0]["final_response"]["parts"][0]["text"] = "Nothing at all like what the agent answers."
        evalset.write_text(json.dumps(again, indent=2))  # a case that passed in the kept runs, broken in this session
        await call("run", which="affected", timeout=60)
        broken = await call("gate")
        assert broken["exit_code"] == 1 and "refund_delivered_order" in broken["output"], broken


async def test_a_long_run_reports_progress_and_returns_what_still_runs_at_its_bound(tmp_path):
    samples = copy_samples(tmp_path)
    agent = samples / "home_automation" / "agent.py"
    source = agent.read_text()
    agent.write_text(source.replace("def set_device_state(device: str, state: str, tool_context: ToolContext, brightness: Optional[int] = None) -> dict:\n",
                                    "def set_device_state(device: str, state: str, tool_context: ToolContext, brightness: Optional[int] = None) -> dict:\n"
                                    "    import time\n    time.sleep(3)\n", 1))
    async with mcp_session(tmp_path, "--no-watch") as call:
        seen: list[tuple[float, float, str]] = []

        async def progress(done, total, message):
            seen.append((done, total, message))

        slow = await call("run", cases=[KITCHEN], timeout=60, progress=progress)
        assert slow["cases"][0]["status"] == "passed" and slow["seconds"] > 2.5, slow
        assert seen and seen[0][1] == 1 and "0 of 1 done" in seen[0][2], seen
        bounded = await call("run", cases=[KITCHEN], timeout=0.5)
        assert bounded["still_running"] == [KITCHEN] and "goes on" in bounded["next"] and bounded["cases"] == [], bounded
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while (await call("status"))["running"] and loop.time() < deadline:
            await asyncio.sleep(0.2)
        assert (await call("list_cases", filter="turn_on_kitchen_light"))["cases"][0]["status"] == "passed"


async def test_a_server_started_outside_the_project_roots_its_session_at_the_project(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    copy_samples(project)
    (project / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with mcp_session(elsewhere, str(project / "sample_agents" / "home_automation")) as call:
        await call("run", which="all", timeout=120)
        plan = await call("accept", case="dim_living_room")
        written = await call("apply", plan_digest=plan["plan_digest"])
        assert written["files"][0] == "sample_agents/home_automation/home_automation.evalset.json", written
    assert not (elsewhere / ".agentdiff").exists() and (project / ".agentdiff").is_dir()
    assert "the project is" in (elsewhere / "server.log").read_text()
    empty = tmp_path / "empty"
    empty.mkdir()
    async with mcp_session(empty) as call:
        status = await call("status")
        assert status["cases"] == 0 and "no eval cases under ." in status["hint"] and "agentdiff mcp PATH" in status["hint"], status


async def test_a_blocked_undo_offers_drop_with_a_confirmation(tmp_path):
    samples = copy_samples(tmp_path)
    evalset = samples / "home_automation" / "home_automation.evalset.json"
    async with mcp_session(tmp_path) as call:
        await call("run", cases=["dim_living_room"], timeout=60)
        plan = await call("accept", case="dim_living_room")
        step = (await call("apply", plan_digest=plan["plan_digest"]))["journal_step"]
        edited = evalset.read_text().replace("The living room lamp is now on.", "The living room lamp is on now.")
        assert edited != evalset.read_text()
        evalset.write_text(edited)  # an edit on a line the accept wrote
        kind, text = await call("undo")
        assert kind == "error" and "drop()" in text and "drop(confirm=" in text, text
        shown = await call("drop")
        assert shown["done"] is False and shown["step"] == step and "Ask the user" in shown["next"], shown
        dropped = await call("drop", confirm=step)
        assert dropped["done"] is True, dropped
    assert [e.state for e in journal_entries(tmp_path)] == ["dropped"]
    assert "The living room lamp is on now." in evalset.read_text()  # its files stay as they are


async def test_a_prompt_edit_diff_gives_each_change_once_as_changed_lines(tmp_path):
    samples = copy_samples(tmp_path)
    prompt = samples / "home_automation" / "prompt.md"
    prompt.write_text(prompt.read_text().replace("## Playbook\n", "## Playbook\n- Never change a device the user did not name.\n")
                      .replace("never invent a device", "never make up a device"))
    async with mcp_session(tmp_path, "--no-watch") as call:
        await call("run", cases=[RECORDED], timeout=60)
        diff = await call.session.call_tool("diff", {"case": RECORDED})
        text = diff.content[0].text
        lean = json.loads(text)
        every = await call("diff", case=RECORDED, layers="all")
    first, *repeats = [c["text_diff"] for t in lean["turns"] for r in t["request"] for c in r["changes"]]
    assert "~3: sentence; never [-invent-]{+make up+} a device." in first and "+8: - Never change a device the user did not name." in first
    assert any(line.startswith("⋯ ") and line.endswith("unchanged lines") for line in first), first
    assert len(repeats) == 3 and all(r == "the same as turn 1 · home_automation call 1 · config.system_instruction" for r in repeats), repeats
    assert "text_diff" not in lean["first_divergence"] and "expected" not in lean["first_divergence"]  # its sides: once, in its turn
    assert "text_diffs" in lean and [layer["layer"] for layer in lean["layers"]] == ["request"] and "other_layers" in lean
    assert "tool_calls" not in lean["turns"][0] and "tool_calls" in every["turns"][0]
    whole = _cli(tmp_path, "diff", RECORDED, "--json").stdout
    assert len(text) * 4 < len(whole), (len(text), len(whole))  # the CLI's document carries both prompts in every request


async def test_a_kept_verdict_whose_files_changed_since_is_stale_and_runs_as_affected(tmp_path):
    samples = copy_samples(tmp_path)
    assert _cli(tmp_path, "run", "sample_agents").returncode == 1
    prompt = samples / "customer_service" / "prompt.md"
    prompt.write_text(prompt.read_text().replace(*FIX))  # edited after the kept run, before the server starts
    later = time.time() + 2
    os.utime(prompt, (later, later))  # (a kept run's start is to the second)
    async with mcp_session(tmp_path) as call:
        (late,) = (await call("list_cases", filter="refund_too_late"))["cases"]
        assert late["status"] == "stale" and late["was"] == "failed", late
        assert late["kept"]["changed_since"] == "sample_agents/customer_service/prompt.md", late
        assert REFUND_LATE in (await call("status"))["stale"]
        assert (await call("list_cases", filter="kitchen"))["cases"][0]["status"] == "passed"  # its files did not change
        affected = await call("run", which="affected", timeout=120)
        assert affected["done"] == affected["ran"] >= 5 and next(c for c in affected["cases"] if c["id"] == REFUND_LATE)["status"] == "passed"


async def test_gate_judges_an_edit_once_its_runs_are_done_and_lists_the_cases_by_category(tmp_path):
    samples = copy_samples(tmp_path)
    assert _cli(tmp_path, "run", "sample_agents").returncode == 1
    async with mcp_session(tmp_path, "--no-watch") as call:
        await call("run", which="all", timeout=120)
        prompt = samples / "customer_service" / "prompt.md"
        prompt.write_text(prompt.read_text().replace(*FIX))
        gate = await call("gate")  # nothing watches: the gate finds the edit, and waits for what it re-runs
        assert gate["exit_code"] == 1 and REFUND_LATE in gate["cases"]["fixed"], gate
        regressed = gate["cases"]["regressed"]  # the recorded cases replay the old prompt: their request layer differs
        assert regressed and all("/conformance/" in case_id for case_id in regressed), gate
        assert "not_judged" not in gate
