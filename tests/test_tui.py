"""The TUI through its factory and Textual's Pilot: every key, on real sample agents run by the
real worker pool, with a scripted change source, a fake editor and a frozen clock."""

from __future__ import annotations

import json

import pytest
from agentdiff.core.scoring.results import CaseStatus
from tui_support import FakeEditor, ScriptedChanges, copy_samples, make_app, settle

pytestmark = pytest.mark.adk

KITCHEN = "sample_agents/home_automation/conformance/lights/kitchen_on_then_check"
REFUND_TWICE = "sample_agents/customer_service/customer_service.evalset.json::no_second_refund"
DIM = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"


def status(app, case_id):
    return app.workbench.cases[case_id].status


async def test_first_paint_runs_every_case_and_counts_them(tmp_path, worker_pool):
    copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert len(app.workbench.cases) == 12
        assert all(state.status is not None for state in app.workbench.cases.values())
        header = str(app.query_one("#header").render())
        assert "✓ 9 ✗ 3" in header
        assert app.main.tree.current_case_id == app.main.tree.visible_ids[0]


async def test_failures_divergences_turns_and_layers_are_keyboard_driven(tmp_path, worker_pool):
    copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        seen = []
        for _ in range(3):
            await pilot.press("n")
            seen.append(app.main.tree.current_case_id)
        assert seen == [
            "sample_agents/customer_service/customer_service.evalset.json::refund_too_late",
            REFUND_TWICE,
            DIM,
        ]
        await pilot.press("N")
        assert app.main.tree.current_case_id == REFUND_TWICE
        assert app.main.view.turn == 1  # its first divergence is in turn 2
        await pilot.press("t")
        assert app.main.view.turn == 0 and "turn 1" in app.main.view.scope()
        await pilot.press("]")
        assert app.main.view.divergence == 1
        await pilot.press("[")
        assert app.main.view.divergence == 0
        await pilot.press("2")
        assert app.main.view.layer == "tool_calls" and app.main.view.scope() == "the tool_calls layer of turn 2"


async def test_rerun_one_and_all(tmp_path, worker_pool):
    copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        case_id = app.main.tree.current_case_id
        await pilot.press("r")
        await settle(app, pilot)
        assert app.workbench.cases[case_id].reason == "re-run: r pressed"
        await pilot.press("R")
        await settle(app, pilot)
        assert {s.reason for s in app.workbench.cases.values()} == {"re-run: R pressed"}


async def test_filter_and_failures_only(tmp_path, worker_pool):
    copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("f")
        assert set(app.main.tree.visible_ids) == {"sample_agents/customer_service/customer_service.evalset.json::refund_too_late", REFUND_TWICE, DIM}
        await pilot.press("f")
        await pilot.press("slash")
        await pilot.press(*"agent:home_automation !status:passed", "enter")
        assert app.main.tree.visible_ids == [DIM]
        await pilot.press("slash")
        await pilot.press("ctrl+a", "ctrl+k", *"layer:tool_calls", "enter")
        assert set(app.main.tree.visible_ids) == {"sample_agents/customer_service/customer_service.evalset.json::refund_too_late", REFUND_TWICE, DIM}


async def test_a_prompt_edit_reruns_the_agent_and_accept_then_undo_round_trips(tmp_path, worker_pool):
    samples = copy_samples(tmp_path)
    changes = ScriptedChanges()
    app = make_app(tmp_path, worker_pool, changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert status(app, KITCHEN) is CaseStatus.PASSED
        prompt = samples / "home_automation" / "prompt.md"
        prompt.write_text(prompt.read_text().replace("never invent a device", "never make up a device"))
        await changes.push(prompt)
        await pilot.pause(0.1)
        await settle(app, pilot)
        state = app.workbench.cases[KITCHEN]
        assert state.status is CaseStatus.FAILED
        assert state.reason == "re-run: sample_agents/home_automation/prompt.md changed"
        first = state.run.diff.first_divergence
        assert (first.layer, first.path) == ("request", "config.system_instruction")
        app.main.tree.select_case(KITCHEN)
        await pilot.pause(0.1)
        recordings = samples / "home_automation" / "conformance" / "lights" / "kitchen_on_then_check" / "generated-recordings.yaml"
        before = recordings.read_text()
        await pilot.press("a")
        await pilot.pause(0.1)
        assert type(app.screen).__name__ == "AcceptModal"
        assert "make up" in app.screen.preview
        await pilot.press("y")
        await settle(app, pilot)
        assert status(app, KITCHEN) is CaseStatus.PASSED
        assert "never make up a device" in recordings.read_text()
        await pilot.press("z")
        await settle(app, pilot)
        assert recordings.read_text() == before
        assert status(app, KITCHEN) is CaseStatus.FAILED


async def test_accepting_one_layer_of_an_eval_case_writes_only_that_layer(tmp_path, worker_pool):
    samples = copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("2", "a")
        await pilot.pause(0.1)
        assert app.screen.description.startswith("accept the tool_calls layer of turn 1")
        await pilot.press("y")
        await settle(app, pilot)
        data = json.loads((samples / "home_automation" / "home_automation.evalset.json").read_text())
        case = next(c for c in data["eval_cases"] if c["eval_id"] == "dim_living_room")
        turn = case["conversation"][0]
        assert turn["intermediate_data"]["tool_uses"] == [{"args": {"device": "living room lamp", "state": "on"}, "name": "set_device_state"}]
        assert turn["final_response"]["parts"][0]["text"] == "The living room lamp is now on at 40%."  # untouched
        assert status(app, DIM) is CaseStatus.PASSED  # the answer still scores above 0.6


async def test_cancelled_accept_and_a_conflicting_edit_write_nothing(tmp_path, worker_pool):
    samples = copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    evalset = samples / "home_automation" / "home_automation.evalset.json"
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("a", "n")
        before = evalset.read_text()
        assert app.workbench.cases[DIM].status is CaseStatus.FAILED
        await pilot.press("a")
        evalset.write_text(before.replace("Please turn on", "Kindly turn on"))  # an edit between read and write
        await pilot.press("y")
        await pilot.pause(0.1)
        assert "Kindly turn on" in evalset.read_text()
        assert any("changed on disk since it was read" in n.message for n in app._notifications)


async def test_accept_all_visible_failures_needs_a_confirmation(tmp_path, worker_pool):
    copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("A")
        await pilot.pause(0.1)
        assert app.screen.description == "accept 3 failing case(s)"
        await pilot.press("y")
        await settle(app, pilot)
        assert {i: s.status.value for i, s in app.workbench.cases.items() if s.status is not CaseStatus.PASSED} == {}


async def test_e_opens_the_expected_value_at_its_line(tmp_path, worker_pool):
    copy_samples(tmp_path)
    editor = FakeEditor()
    app = make_app(tmp_path, worker_pool, editor=editor)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("e")
        (path, line), = editor.opened
        assert path.name == "home_automation.evalset.json"
        assert '"brightness": 40' in path.read_text().splitlines()[line - 1]


async def test_labels_and_notes_go_to_the_triage_file(tmp_path, worker_pool):
    copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("l", *"bad arguments", "enter")
        await pilot.press("c", *"no brightness rule", "enter")
        text = (tmp_path / "agentdiff-triage.yaml").read_text()
        assert f"{DIM}:\n    label: bad arguments\n    note: no brightness rule" in text
        await pilot.press("slash", *"label:bad", "enter")
        assert app.main.tree.visible_ids == [DIM]


async def test_pausing_the_watch_ignores_changes(tmp_path, worker_pool):
    samples = copy_samples(tmp_path)
    changes = ScriptedChanges()
    app = make_app(tmp_path, worker_pool, changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("w")
        assert app.workbench.paused and "watch paused" in str(app.query_one("#header").render())
        prompt = samples / "home_automation" / "prompt.md"
        prompt.write_text(prompt.read_text() + "\n")
        await changes.push(prompt)
        await pilot.pause(0.2)
        assert not any(s.running for s in app.workbench.cases.values())


async def test_mode_switch_reruns_conformance_cases_live(tmp_path, worker_pool):
    copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("m")
        await settle(app, pilot)
        assert app.workbench.cases[KITCHEN].run.result.mode == "live"
        assert "mode live" in str(app.query_one("#header").render())


async def test_help_and_the_command_palette_hold_every_action(tmp_path, worker_pool):
    copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        assert type(app.screen).__name__ == "HelpScreen"
        shown = dict(app.screen.keys)
        await pilot.press("escape")
        helps = {command.help for command in app.get_system_commands(app.screen)}
        for binding in app.main.BINDINGS:  # one table: the help and the palette are made from the bindings
            key = binding.key_display or binding.key
            assert binding.tooltip and shown[key] == binding.tooltip
            assert any(help.endswith(f"({key})") for help in helps), binding.action


async def test_a_broken_file_is_an_entry_and_fixing_it_brings_the_cases_back(tmp_path, worker_pool):
    samples = copy_samples(tmp_path)
    changes = ScriptedChanges()
    evalset = samples / "home_automation" / "home_automation.evalset.json"
    good = evalset.read_text()
    evalset.write_text(good[:200])
    app = make_app(tmp_path, worker_pool, changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert len(app.workbench.errors) == 1 and "home_automation.evalset.json" in str(app.workbench.errors[0])
        assert "1 load error(s)" in str(app.query_one("#header").render())
        evalset.write_text(good)
        await changes.push(evalset)
        await pilot.pause(0.1)
        await settle(app, pilot)
        assert app.workbench.errors == [], app.workbench.errors
        assert app.workbench.cases[DIM].status is CaseStatus.FAILED


async def test_rerecord_live_from_the_tui_after_a_confirmation(tmp_path, worker_pool):
    samples = copy_samples(tmp_path)
    app = make_app(tmp_path, worker_pool)
    recordings = samples / "home_automation" / "conformance" / "lights" / "kitchen_on_then_check" / "generated-recordings.yaml"
    prompt = samples / "home_automation" / "prompt.md"
    prompt.write_text(prompt.read_text().replace("never invent a device", "never make up a device"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert status(app, KITCHEN) is CaseStatus.FAILED
        app.main.tree.select_case(KITCHEN)
        await pilot.pause(0.1)
        await pilot.press("ctrl+r")
        await pilot.pause(0.1)
        assert app.screen.description.startswith("re-record")
        await pilot.press("y")
        for _ in range(20):
            await pilot.pause(0.1)
            await settle(app, pilot)
            if "never make up a device" in recordings.read_text():
                break
        await settle(app, pilot)
        assert status(app, KITCHEN) is CaseStatus.PASSED
        await pilot.press("z")
        await settle(app, pilot)
        assert "never invent a device" in recordings.read_text()


async def test_load_errors_are_entries_in_the_tree(tmp_path, worker_pool):
    samples = copy_samples(tmp_path)
    (samples / "home_automation" / "broken.evalset.json").write_text("{not json")
    app = make_app(tmp_path, worker_pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        labels = [str(node.label) for node in app.main.tree.root.children]
        assert labels[0] == "⚠ 1 file(s) failed to load"
        (entry,) = app.main.tree.root.children[0].children
        assert str(entry.label).startswith("sample_agents/home_automation/broken.evalset.json:1:2: invalid JSON")


async def test_the_ui_stays_responsive_while_an_agent_hangs(tmp_path, worker_pool):
    import shutil

    from agentdiff.core.run.options import RunOptions
    from agentdiff.tui.app import create_app
    from conftest import NATIVE_AGENTS

    agents = tmp_path / "agents"
    for name in ("hangs", "good"):
        shutil.copytree(NATIVE_AGENTS / name, agents / name)
        cases = [{"eval_id": f"{name}_case", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}}]}]
        (agents / name / f"{name}.evalset.json").write_text(json.dumps({"eval_set_id": name, "eval_cases": cases}))
    app = create_app(tmp_path, [agents], pool=worker_pool, watch=False, options=RunOptions(timeout=3), project="faults")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.5)
        hanging = app.workbench.cases["agents/hangs/hangs.evalset.json::hangs_case"]
        assert hanging.running
        await pilot.press("j", "k", "question_mark")  # keys work while the agent hangs
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        await settle(app, pilot)
        assert hanging.status is CaseStatus.ERROR and "timed out after 3 s" in hanging.run.result.error


@pytest.mark.parametrize(
    "editor, command",
    [
        ("vim", ["vim", "+12", "/x/y.json"]),
        ("nano -w", ["nano", "-w", "+12", "/x/y.json"]),
        ("code", ["code", "--goto", "/x/y.json:12"]),
        ("subl", ["subl", "/x/y.json:12"]),
        ("my-editor", ["my-editor", "/x/y.json"]),
    ],
)
def test_the_editor_is_opened_at_the_line_in_its_own_spelling(monkeypatch, editor, command):
    from pathlib import Path

    from agentdiff.tui import editor as editor_module

    calls = []
    monkeypatch.setenv("VISUAL", editor)
    monkeypatch.setattr(editor_module.subprocess, "call", calls.append)
    editor_module.default_editor(Path("/x/y.json"), 12)
    assert calls == [command]
