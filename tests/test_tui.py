"""The TUI through its factory and Textual's Pilot: every key, on a copy of the sample agents, with a
scripted change source, a fake editor and a frozen clock.

The agents' runs come from a fake pool (`fake_pool.CannedPool`) answering with canned outputs of
the real sample agents; scoring, diffing, accept and undo run for real on them. One journey (a
prompt edit re-runs the agent; accept, then undo) runs the real worker pool, and checks on the way
that the canned outputs are still what the real agents do.
"""

from __future__ import annotations

import json

import pytest
from agentdiff.core.run.options import RunOptions
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.worker.jobs import RunOutput
from agentdiff.tui.app import create_app
from fake_pool import CannedPool, Hanging, RecordingPool, assert_canned
from tui_support import (
    FakeEditor,
    ScriptedChanges,
    copy_samples,
    edit_the_home_prompt,
    make_app,
    settle,
    until,
)

KITCHEN = "sample_agents/home_automation/conformance/lights/kitchen_on_then_check"
REFUND_LATE = "sample_agents/customer_service/customer_service.evalset.json::refund_too_late"
REFUND_TWICE = "sample_agents/customer_service/customer_service.evalset.json::no_second_refund"
DIM = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"
FAILING = {REFUND_LATE, REFUND_TWICE, DIM}
CONFORMANCE = {
    KITCHEN,
    "sample_agents/customer_service/conformance/orders/order_status",
    "sample_agents/customer_service/conformance/refunds/refund_delivered_order",
}


def status(app, case_id):
    return app.workbench.cases[case_id].status


def modal(app) -> str:
    return type(app.screen).__name__


def notified(app, text: str) -> bool:
    return any(text in n.message for n in app._notifications)


async def test_first_paint_runs_every_case_and_counts_them(tmp_path):
    copy_samples(tmp_path)
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert len(app.workbench.cases) == 12
        assert all(state.status is not None for state in app.workbench.cases.values())
        header = str(app.query_one("#header").render())
        assert "✓ 9 ✗ 3" in header
        assert app.main.tree.current_case_id == app.main.tree.visible_ids[0]
        ran = {job.case_id: job.mode for job in pool.jobs}
        assert len(pool.jobs) == 12 and set(ran) == set(app.workbench.cases)  # one run each
        assert {i for i, mode in ran.items() if mode == "replay"} == CONFORMANCE  # the rest live
        assert all(job.recordings for job in pool.jobs if job.mode == "replay")


async def test_the_header_names_the_agents_adk_and_keeps_the_counts_on_a_narrow_terminal(tmp_path):
    copy_samples(tmp_path)
    app = create_app(tmp_path, [tmp_path / "sample_agents"], pool=CannedPool(tmp_path), watch=False,
                     project="weather-bot · ADK 1.22.0 · .venv")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        assert str(app.query_one("#header").render()).startswith(" agentdiff · weather-bot · ADK 1.22.0 · .venv · mode replay/live ")
    app = create_app(tmp_path, [tmp_path / "sample_agents"], pool=CannedPool(tmp_path), watch=False,
                     project="weather-bot · ADK 1.22.0 · .venv")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        header = str(app.query_one("#header").render())
        assert header.startswith(" weather-bot · ADK 1.22.0") and header.rstrip().endswith("⟳ 0"), header
        assert len(header.rstrip()) <= 80


async def test_failures_divergences_turns_and_layers_are_keyboard_driven(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        seen = []
        for _ in range(3):
            await pilot.press("n")
            seen.append(app.main.tree.current_case_id)
        assert seen == [REFUND_LATE, REFUND_TWICE, DIM]
        said = len(app._notifications)
        await pilot.press("n")  # past the last failure: back to the first, and said
        assert app.main.tree.current_case_id == REFUND_LATE and "wrapped to the first failure" in [n.message for n in app._notifications][said:]
        await pilot.press("N")
        assert app.main.tree.current_case_id == DIM and "wrapped to the last failure" in [n.message for n in app._notifications]
        await pilot.press("N")
        assert app.main.tree.current_case_id == REFUND_TWICE
        await until(pilot, lambda: app.main.view.turn == 1, what="the first divergence, in turn 2")
        await pilot.press("t")  # the first press focuses the turn on screen: no wrap to turn 1
        assert app.main.view.turn == 1 and app.main.view.scope() == "turn 2"
        await pilot.press("t")
        assert app.main.view.turn == 0 and "turn 1" in app.main.view.scope()
        extra = str(app.main.detail.extra)  # the status follows the turn shown, which is clean
        assert "turn 1: no divergence · divergences in turn 2" in extra and "divergence 1/" not in extra, extra
        await pilot.press("]")
        assert app.main.view.divergence == 1
        await pilot.press("[")
        assert app.main.view.divergence == 0
        await pilot.press("2")
        assert app.main.view.layer == "tool_calls" and app.main.view.scope() == "the tool_calls layer of turn 2"
        await pilot.press("1")  # an eval case keeps no request: the scope says what a would write
        assert app.main.view.scope() == "turn 2 (an eval case keeps no request: the whole turn)"
        assert "accept scope: turn 2 (an eval case keeps no request: the whole turn) · esc: the whole case" in str(app.main.detail.extra)
        await pilot.press("escape")
        assert app.main.view.scope() == "the whole case" and app.main.view.layer is None


async def test_esc_resets_the_accept_scope_and_clearing_the_filter_after_it_keeps_it_reset(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"no_second", "enter")
        await until(pilot, lambda: app.main.tree.current_case_id == REFUND_TWICE and app.main.view.turn == 1)
        await pilot.press("t")
        assert app.main.view.scope() == "turn 2"
        await pilot.press("escape")  # the scope back to the whole case
        assert app.main.view.scope() == "the whole case"
        await pilot.press("escape")  # then the filter cleared: the tree rebuilt, the case drawn again
        await pilot.pause(0.5)
        assert app.main.filter_text == "" and app.main.tree.current_case_id == REFUND_TWICE
        assert app.main.view.scope() == "the whole case", app.main.view  # a redraw's tab chooses no turn
        for _ in range(3):  # re-runs relabel and rebuild the turn tabs: still no turn chosen
            await pilot.press("r")
            await settle(app, pilot)
            assert app.main.view.scope() == "the whole case" and app.main.view.turn == 1, app.main.view
        await pilot.click(f"#turn-{app.main.detail._generation}-0")  # a tab the user clicks is a turn chosen
        await until(pilot, lambda: app.main.view.turn == 0)
        assert app.main.view.scope() == "turn 1"


async def test_moving_to_a_turn_that_diverges_shows_its_divergence_not_another_turns(tmp_path):
    """A replay whose both turns diverge: `t` to turn 2 leads with turn 2's first divergence (the
    line and the markers speak of the turn shown), never "turn 2: no divergence"."""
    from tui_support import edit_the_home_prompt

    samples = copy_samples(tmp_path, agents=("home_automation",))
    edit_the_home_prompt(samples)
    app = make_app(tmp_path, CannedPool(tmp_path, ["prompt_edit", "samples"]))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(KITCHEN)
        await pilot.pause(0.2)
        divergences = app.main.detail.shown_diff(app.main.current).divergences
        assert {d.turn for d in divergences} == {0, 1} and app.main.view.turn == 0
        await pilot.press("t", "t")  # the turn on screen focused, then the next
        extra = str(app.main.detail.extra)
        assert app.main.view.turn == 1 and divergences[app.main.view.divergence].turn == 1
        assert "no divergence" not in extra and f"divergence {app.main.view.divergence + 1}/{len(divergences)}: turn 2 · " in extra, extra
        await pilot.press("T")
        assert app.main.view.turn == 0 and divergences[app.main.view.divergence].turn == 0


async def test_review_walks_the_failures_accepting_rejecting_skipping_and_taking_back(tmp_path):
    copy_samples(tmp_path)
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        files = {p: p.read_bytes() for p in (tmp_path / "sample_agents").rglob("*") if p.is_file()}
        await pilot.press("V")
        await until(pilot, lambda: modal(app) == "ReviewScreen")
        review = app.screen
        assert review.case_ids == [REFUND_LATE, REFUND_TWICE, DIM]
        await until(pilot, lambda: review.plan is not None, what="the first case's preview")
        assert "--- a/sample_agents/customer_service/customer_service.evalset.json" in review.plan.preview
        await pilot.pause(0.05)
        title = str(review.query_one("#review-title").render())  # as the case's header says them: metrics, first divergence
        assert "tool_trajectory_avg_score 0.00 < 1" in title and "first divergence: turn 1 · tool_calls · extra call issue_refund" in title, title
        await pilot.press("j", "G", "g", "space")  # the preview scrolls
        await pilot.press("a")  # accept refund_too_late
        await until(pilot, lambda: review.index == 1 and review.plan is not None and review.plan.case_id == REFUND_TWICE)
        await pilot.press("x")  # keep refund_twice's baseline
        await until(pilot, lambda: review.index == 2 and review.plan is not None)
        await pilot.press("z")  # take back the reject: back on refund_twice
        await until(pilot, lambda: review.index == 1 and review.plan is not None)
        await pilot.press("z")  # take back the accept: its write is undone
        await until(pilot, lambda: review.index == 0 and review.plan is not None)
        assert {p: p.read_bytes() for p in files} == files
        await pilot.press("a", "x")
        await until(pilot, lambda: review.index == 2 and review.plan is not None)
        await pilot.press("s")
        await until(pilot, lambda: modal(app) == "WorkbenchScreen")
        await settle(app, pilot)
        assert notified(app, "reviewed 3 of 3: 1 accepted, 1 rejected, 1 skipped")
        assert app.workbench.cases[REFUND_LATE].status is CaseStatus.PASSED
        assert app.workbench.cases[REFUND_TWICE].reason == "reviewed: the baseline was kept"
        assert app.workbench.cases[DIM].status is CaseStatus.FAILED


async def test_rerun_one_and_all(tmp_path):
    copy_samples(tmp_path)
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        pool.take_jobs()
        await pilot.press("n")
        case_id = app.main.tree.current_case_id
        await pilot.press("r")
        await settle(app, pilot)
        assert app.workbench.cases[case_id].reason == "re-run: r pressed"
        assert [job.case_id for job in pool.take_jobs()] == [case_id]
        await pilot.press("R")
        await settle(app, pilot)
        assert {s.reason for s in app.workbench.cases.values()} == {"re-run: R pressed"}
        assert sorted(job.case_id for job in pool.take_jobs()) == sorted(app.workbench.cases)


async def test_filter_and_failures_only(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("f")
        assert set(app.main.tree.visible_ids) == FAILING
        await pilot.press("f")
        await pilot.press("slash")
        await pilot.press(*"agent:home_automation !status:passed", "enter")
        assert app.main.tree.visible_ids == [DIM]
        await pilot.press("slash")
        await pilot.press("ctrl+a", "ctrl+k", *"layer:tool_calls", "enter")
        assert set(app.main.tree.visible_ids) == FAILING
        await pilot.press("slash")
        await pilot.press("ctrl+a", "ctrl+k", *"status:fail", "enter")  # a status by its beginning
        assert set(app.main.tree.visible_ids) == {i for i in FAILING if status(app, i) is CaseStatus.FAILED}
        await pilot.press("slash")
        await pilot.press("ctrl+a", "ctrl+k", *"status:bogus", "enter")
        await pilot.pause()
        assert notified(app, "unknown status 'bogus' (use passed, failed, error")


async def test_enter_in_the_filter_leaves_the_cursor_on_the_first_match_when_it_was_on_no_case(tmp_path):
    """`/`, a filter, Enter, from an agent's row: the first matching case under the cursor, its diff beside it."""
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.move_cursor(app.main.tree._agent_nodes["home_automation"])
        await pilot.pause()
        assert app.main.tree.current_case_id is None
        await pilot.press("slash", *"kitchen_on", "enter")
        await pilot.pause(0.1)
        assert app.main.tree.visible_ids == [KITCHEN] and app.main.tree.current_case_id == KITCHEN


@pytest.mark.adk  # the only test here that needs google-adk: the others run on canned outputs
async def test_a_prompt_edit_reruns_the_agent_and_accept_then_undo_round_trips(tmp_path, worker_pool):
    """The one journey on the real worker pool: real agents, re-run on a real edit of their prompt.
    Each real run is also checked against the canned outputs the other tests run on."""
    samples = copy_samples(tmp_path)
    changes = ScriptedChanges()
    pool = RecordingPool(worker_pool)
    app = make_app(tmp_path, pool, changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert status(app, KITCHEN) is CaseStatus.PASSED
        assert assert_canned(pool.take_runs(), "samples", tmp_path) == 12
        prompt = edit_the_home_prompt(samples)
        await changes.push(prompt)
        await changes.handled()
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
        await until(pilot, lambda: modal(app) == "AcceptModal")
        assert "make up" in app.screen.preview
        await pilot.press("y")
        await settle(app, pilot)
        assert status(app, KITCHEN) is CaseStatus.PASSED
        assert "never make up a device" in recordings.read_text()
        await pilot.press("z")
        await settle(app, pilot)
        assert recordings.read_text() == before
        assert status(app, KITCHEN) is CaseStatus.FAILED
        assert assert_canned(pool.take_runs(), "prompt_edit", tmp_path) == 7  # its 5 cases, then the kitchen after accept and undo


async def test_accepting_one_layer_of_an_eval_case_writes_only_that_layer(tmp_path):
    samples = copy_samples(tmp_path)
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        pool.take_jobs()
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("2", "a")
        await until(pilot, lambda: modal(app) == "AcceptModal")
        assert app.screen.description.startswith("accept the tool_calls layer of turn 1")
        await pilot.press("y")
        await settle(app, pilot)
        data = json.loads((samples / "home_automation" / "home_automation.evalset.json").read_text())
        case = next(c for c in data["eval_cases"] if c["eval_id"] == "dim_living_room")
        turn = case["conversation"][0]
        assert turn["intermediate_data"]["tool_uses"] == [{"args": {"device": "living room lamp", "state": "on"}, "name": "set_device_state"}]
        assert turn["final_response"]["parts"][0]["text"] == "The living room lamp is now on at 40%."  # untouched
        assert status(app, DIM) is CaseStatus.PASSED  # the answer still scores above 0.6
        assert pool.take_jobs() == []  # a new expectation is a re-score of the run it has, not a new run


async def test_z_after_a_hand_edit_elsewhere_in_the_file_takes_back_only_the_accept_and_says_so(tmp_path):
    samples = copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    evalset = samples / "home_automation" / "home_automation.evalset.json"
    before = evalset.read_text()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("2", "a")
        await until(pilot, lambda: modal(app) == "AcceptModal")
        await pilot.press("y")
        await settle(app, pilot)
        assert evalset.read_text() != before
        evalset.write_text(evalset.read_text().replace("The kitchen light is now on.", "The kitchen light is on now."))  # another case, by hand
        await pilot.press("z")
        await settle(app, pilot)
        assert evalset.read_text() == before.replace("The kitchen light is now on.", "The kitchen light is on now.")
        assert notified(app, "undo kept the other changes made to sample_agents/home_automation/home_automation.evalset.json since")


async def test_cancelled_accept_and_a_conflicting_edit_write_nothing(tmp_path):
    samples = copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    evalset = samples / "home_automation" / "home_automation.evalset.json"
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        before = evalset.read_text()
        await pilot.press("a")
        await until(pilot, lambda: modal(app) == "AcceptModal")
        await pilot.press("n")
        await settle(app, pilot)
        assert modal(app) == "WorkbenchScreen" and evalset.read_text() == before
        assert app.workbench.cases[DIM].status is CaseStatus.FAILED
        await pilot.press("a")
        await until(pilot, lambda: modal(app) == "AcceptModal")
        evalset.write_text(before.replace("Please turn on", "Kindly turn on"))  # an edit between read and write
        await pilot.press("y")
        await until(pilot, lambda: notified(app, "changed on disk since it was read"))
        assert "Kindly turn on" in evalset.read_text()


async def test_accept_all_visible_failures_needs_a_confirmation(tmp_path):
    copy_samples(tmp_path)
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        pool.take_jobs()
        await pilot.press("A")
        await until(pilot, lambda: modal(app) == "AcceptModal")
        assert app.screen.description == "accept 3 cases (one undo)"
        before = {p: p.read_text() for p in (tmp_path / "sample_agents").rglob("*") if p.is_file()}
        await pilot.press("y")
        await settle(app, pilot)
        assert {i: s.status.value for i, s in app.workbench.cases.items() if s.status is not CaseStatus.PASSED} == {}
        assert {s.reason for s in app.workbench.cases.values() if s.ref.id in FAILING} == {"re-score: accepted"}
        assert pool.take_jobs() == []  # re-scored, not run again
        await pilot.press("z")  # one undo takes back the whole batch, byte for byte
        await settle(app, pilot)
        after = {p: p.read_text() for p in (tmp_path / "sample_agents").rglob("*") if p.is_file()}
        assert after == before
        assert {i for i, s in app.workbench.cases.items() if s.status is not CaseStatus.PASSED} == FAILING
        await pilot.press("Z")
        await settle(app, pilot)
        assert all(s.status is CaseStatus.PASSED for s in app.workbench.cases.values())
        assert pool.take_jobs() == []


async def test_e_opens_the_expected_value_at_its_line(tmp_path):
    copy_samples(tmp_path)
    editor = FakeEditor()
    app = make_app(tmp_path, CannedPool(tmp_path), editor=editor)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("e")
        await until(pilot, lambda: editor.opened)
        (path, line), = editor.opened
        assert path.name == "home_automation.evalset.json"
        assert '"brightness": 40' in path.read_text().splitlines()[line - 1]


async def test_each_turn_shows_its_user_message_and_an_eval_case_the_requests_its_agent_sent(tmp_path):
    """An eval set records no requests to compare, but the run sent some: the request layer shows
    them (the system instruction, the tools), so a prompt edit is visible in the run itself."""
    from tui_support import screen_text

    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        screen = screen_text(app)
        assert "user: Turn on the living room lamp at 40 percent." in screen
        assert "1 request · as sent" in screen and "home_automation call 1 · 1 message" in screen and "set_device_state, get_device_state" in screen
        assert "system: You are Homey" in screen


async def test_labels_and_notes_go_to_the_triage_file(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("l", *"bad arguments", "enter")
        await pilot.press("c", *"no brightness rule", "enter")
        triage = tmp_path / "agentdiff-triage.yaml"
        await until(pilot, lambda: triage.exists() and "note:" in triage.read_text())
        assert f"{DIM}:\n    element: turn 1 · tool_calls · call 1\n    label: bad arguments\n    note: no brightness rule" in triage.read_text()  # pinned to the divergence shown
        await pilot.press("slash", *"label:bad", "enter")
        assert app.main.tree.visible_ids == [DIM]


async def test_a_triage_file_changed_elsewhere_is_read_again_and_runs_nothing(tmp_path):
    """Another terminal's `agentdiff undo`, a hand edit or a `git pull` changes agentdiff-triage.yaml:
    the labels shown follow it (the filter too), and no case runs for it."""
    copy_samples(tmp_path)
    changes = ScriptedChanges()
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool, changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        pool.take_jobs()
        triage = tmp_path / "agentdiff-triage.yaml"
        triage.write_text(f"labels: [bad arguments]\ncases:\n  {DIM}:\n    label: bad arguments\n")
        await changes.push(triage)
        await changes.handled()
        await settle(app, pilot)
        assert app.screen.triage.label_of(DIM) == "bad arguments" and pool.take_jobs() == []
        await pilot.press("slash", *"label:bad", "enter")
        assert app.main.tree.visible_ids == [DIM]


def test_the_watcher_lets_the_triage_file_through_and_nothing_else_of_agentdiffs_own(tmp_path):
    from agentdiff.core.workbench.watcher import interesting, watched

    triage, record = str(tmp_path / "agentdiff-triage.yaml"), str(tmp_path / "x" / "agentdiff-record.json")
    assert watched(triage) and not interesting(triage)  # reported, but no change of a case
    assert not watched(record) and not watched(str(tmp_path / ".agentdiff" / "history.json"))


async def test_keys_that_arrive_in_one_burst_with_slash_are_the_filters_text_never_commands(tmp_path):
    """A paste or a script's send-keys: the driver posts every key at once, before `/` has opened
    the filter. They land in the filter whole; `t`, `a`, `i`, `f` run nothing (no accept dialog)."""
    from textual import events

    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        for key, character in [("slash", "/"), *((c if c != ":" else "colon", c) for c in "status:failed")]:
            app.post_message(events.Key(key, character))  # as the driver posts a burst
        await until(pilot, lambda: app.main.filter_bar.input.value == "status:failed" and len(app.main.tree.visible_ids) == 3,
                    what="the whole burst in the filter")
        assert type(app.screen).__name__ == "WorkbenchScreen"  # no dialog opened by a letter
        assert set(app.main.tree.visible_ids) == {REFUND_LATE, REFUND_TWICE, DIM}
        app.post_message(events.Key("enter", "\r"))
        await until(pilot, lambda: not app.main.filter_bar.display, what="the filter closed")
        # again, one burst: / opens the line with the filter in force, C-u clears it, then the new text
        for key, character in [("slash", "/"), ("ctrl+u", None), *((c, c) for c in "dim"), ("enter", "\r")]:
            app.post_message(events.Key(key, character))
        await until(pilot, lambda: app.main.filter_text == "dim" and not app.main.filter_bar.display, what="the burst's Enter")
        assert app.main.tree.visible_ids == [DIM]
        # a burst right after the tree comes back (`+` twice): the tree's focus, taken back a frame
        # later, never takes the keys from the filter opened meanwhile
        for key, character in [("plus", "+"), ("plus", "+"), ("slash", "/"), ("ctrl+u", None), *((c if c != ":" else "colon", c) for c in "status:fail")]:
            app.post_message(events.Key(key, character))
        await until(pilot, lambda: app.main.filter_bar.display and app.main.filter_bar.input.value == "status:fail", what="the last burst in the filter")
        await pilot.pause(0.2)
        assert app.screen.focused is app.main.filter_bar.input and type(app.screen).__name__ == "WorkbenchScreen"
        assert set(app.main.tree.visible_ids) == {REFUND_LATE, REFUND_TWICE, DIM}


async def test_keys_typed_into_the_filter_before_its_focus_event_are_kept(tmp_path):
    """Under load the input's Focus event comes after the first keys of a burst are in: it must not
    select them (the next key would replace them: `sta` + `t` read as `t`)."""
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.action_filter()
        field = app.main.filter_bar.input
        field.insert_text_at_cursor("sta")  # before the Focus event is handled
        await pilot.pause()
        await pilot.press("t")
        assert field.value == "stat"


async def test_a_case_that_comes_to_match_the_filter_appears_in_the_tree(tmp_path, worker_pool):
    """`status:failed` typed, then a prompt edit fails the kitchen case: it joins the tree (a rebuild
    at most once a second), though only its label changed."""
    samples = copy_samples(tmp_path)
    changes = ScriptedChanges()
    app = make_app(tmp_path, worker_pool, changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot, timeout=60)
        await pilot.press("slash", *"status", "colon", *"failed", "enter")
        await until(pilot, lambda: app.main.filter_text == "status:failed" and len(app.main.tree.visible_ids) == 3)
        assert KITCHEN not in app.main.tree.visible_ids
        await changes.push(edit_the_home_prompt(samples))
        await changes.handled()
        await settle(app, pilot, timeout=60)
        assert status(app, KITCHEN) is CaseStatus.FAILED
        await until(pilot, lambda: KITCHEN in app.main.tree.visible_ids, what="the newly failing case in the tree")


async def test_pausing_the_watch_ignores_changes(tmp_path):
    samples = copy_samples(tmp_path)
    changes = ScriptedChanges()
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool, changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        pool.take_jobs()
        await pilot.press("w")
        assert app.workbench.paused and "watch paused" in str(app.query_one("#header").render())
        prompt = samples / "home_automation" / "prompt.md"
        prompt.write_text(prompt.read_text() + "\n")
        await changes.push(prompt)
        await changes.handled()
        await settle(app, pilot)
        assert not any(s.running for s in app.workbench.cases.values()) and pool.take_jobs() == []
        await pilot.press("w")  # resumed: the next change runs what it touches
        await changes.push(prompt)
        await changes.handled()
        await settle(app, pilot)
        assert {job.case_id for job in pool.take_jobs()} == {i for i in app.workbench.cases if i.startswith("sample_agents/home_automation/")}


async def test_mode_switch_reruns_conformance_cases_live(tmp_path):
    copy_samples(tmp_path)
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        pool.take_jobs()
        await pilot.press("m")
        await settle(app, pilot)
        assert app.workbench.cases[KITCHEN].run.result.mode == "live"
        assert "mode live" in str(app.query_one("#header").render())
        assert {(job.case_id, job.mode) for job in pool.take_jobs()} == {(i, "live") for i in CONFORMANCE}


async def test_help_and_the_command_palette_hold_every_action(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        assert modal(app) == "HelpScreen"
        shown = dict(app.screen.keys)
        await pilot.press("escape")
        from agentdiff.tui.commands import KeyCommands

        titles = {title for title, _, _ in KeyCommands(app.screen)._commands()}
        for binding in app.main.BINDINGS:  # one table: the help and the palette are made from the bindings
            key = binding.key_display or binding.key
            assert binding.tooltip and shown[key] == binding.tooltip
            assert any(title.endswith(f"key {key}") for title in titles) or binding.action in ("tree_down", "tree_up"), binding.action
        await pilot.press("ctrl+p", *"mode")  # the palette finds a key by the words of its description
        await until(pilot, lambda: "Switch the mode" in str(app.screen.query_one("CommandList").get_option_at_index(0).prompt))
        await pilot.press("enter")
        await until(pilot, lambda: app.workbench.options.mode == "live")
        await pilot.press("ctrl+p", *"accept")  # the key named so comes first, not those whose help mentions it
        await until(pilot, lambda: str(app.screen.query_one("CommandList").get_option_at_index(0).prompt).startswith("Accept · key a"))
        assert str(app.screen.query_one("CommandList").get_option_at_index(1).prompt).startswith("Accept all · key A")


async def test_a_broken_file_is_an_entry_and_fixing_it_brings_the_cases_back(tmp_path):
    samples = copy_samples(tmp_path)
    changes = ScriptedChanges()
    evalset = samples / "home_automation" / "home_automation.evalset.json"
    good = evalset.read_text()
    evalset.write_text(good[:200])
    app = make_app(tmp_path, CannedPool(tmp_path), changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert len(app.workbench.errors) == 1 and "home_automation.evalset.json" in str(app.workbench.errors[0])
        assert "1 load error(s)" in str(app.query_one("#header").render())
        evalset.write_text(good)
        await changes.push(evalset)
        await changes.handled()
        await settle(app, pilot)
        assert app.workbench.errors == [], app.workbench.errors
        assert app.workbench.cases[DIM].status is CaseStatus.FAILED


async def test_a_save_that_breaks_a_file_keeps_its_cases_marked_and_fixing_it_runs_nothing_again(tmp_path):
    samples = copy_samples(tmp_path)
    changes = ScriptedChanges()
    evalset = samples / "home_automation" / "home_automation.evalset.json"
    good = evalset.read_text()
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool, changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        before = app.workbench.cases[DIM].run
        pool.take_jobs()
        evalset.write_text(good[:200])  # an editor's save caught half written
        await changes.push(evalset)
        await changes.handled()
        await settle(app, pilot)
        assert len(app.workbench.errors) == 1 and "home_automation.evalset.json" in str(app.workbench.errors[0])
        held = app.workbench.cases[DIM]
        assert held.run is before and held.stale and held.reason.startswith("its file has an error") and "home_automation.evalset.json:" in held.reason
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        assert "its file has an error" in str(app.main.detail.query_one("#detail-header").render())
        evalset.write_text(good)  # the same bytes back: nothing to run again
        await changes.push(evalset)
        await changes.handled()
        await settle(app, pilot)
        assert app.workbench.errors == [] and pool.take_jobs() == []
        assert app.workbench.cases[DIM].run is before and not app.workbench.cases[DIM].stale


async def test_a_conformance_case_whose_spec_breaks_is_kept_marked_until_it_loads_again(tmp_path):
    samples = copy_samples(tmp_path)
    changes = ScriptedChanges()
    spec = samples / "home_automation" / "conformance" / "lights" / "kitchen_on_then_check" / "spec.yaml"
    good = spec.read_text()
    pool = CannedPool(tmp_path)
    app = make_app(tmp_path, pool, changes)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        before = app.workbench.cases[KITCHEN].run
        pool.take_jobs()
        spec.write_text("description: [unclosed\n")
        await changes.push(spec)
        await changes.handled()
        await settle(app, pilot)
        held = app.workbench.cases[KITCHEN]
        assert app.workbench.errors and held.run is before and held.stale and "spec.yaml" in held.reason
        spec.write_text(good)
        await changes.push(spec)
        await changes.handled()
        await settle(app, pilot)
        assert app.workbench.errors == [] and pool.take_jobs() == [] and not app.workbench.cases[KITCHEN].stale


async def test_rerecord_live_from_the_tui_after_a_confirmation(tmp_path):
    samples = copy_samples(tmp_path)
    edit_the_home_prompt(samples)
    pool = CannedPool(tmp_path, ["prompt_edit", "samples"])  # home_automation's agent as edited; the rest as it is
    app = make_app(tmp_path, pool)
    recordings = samples / "home_automation" / "conformance" / "lights" / "kitchen_on_then_check" / "generated-recordings.yaml"
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert status(app, KITCHEN) is CaseStatus.FAILED
        app.main.tree.select_case(KITCHEN)
        await pilot.pause(0.1)
        pool.take_jobs()
        pool.answer(KITCHEN, pool.from_scenario("prompt_edit_recorded"))  # its live run, and replays of what that recorded
        await pilot.press("ctrl+r")
        await until(pilot, lambda: modal(app) == "AcceptModal")
        assert app.screen.description.startswith("re-record")
        await pilot.press("y")
        await until(pilot, lambda: "never make up a device" in recordings.read_text(), what="the new recordings")
        await settle(app, pilot)
        assert status(app, KITCHEN) is CaseStatus.PASSED
        assert app.workbench.cases[KITCHEN].reason == "re-run: re-recorded"
        assert [(job.case_id, job.mode) for job in pool.take_jobs()] == [(KITCHEN, "record"), (KITCHEN, "replay")]
        pool.answer(KITCHEN, pool.from_scenario("prompt_edit"))  # replays of the old recordings again
        await pilot.press("z")
        await until(pilot, lambda: "never invent a device" in recordings.read_text(), what="the old recordings back")
        await settle(app, pilot)
        assert status(app, KITCHEN) is CaseStatus.FAILED


async def test_load_errors_are_entries_in_the_tree(tmp_path):
    samples = copy_samples(tmp_path)
    (samples / "home_automation" / "broken.evalset.json").write_text("{not json")
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        labels = [str(node.label) for node in app.main.tree.root.children]
        assert labels[0] == "⚠ 1 file(s) failed to load"
        (entry,) = app.main.tree.root.children[0].children
        assert str(entry.label).startswith("sample_agents/home_automation/broken.evalset.json:1:2: invalid JSON")


async def test_the_ui_stays_responsive_while_an_agent_hangs(tmp_path):
    """A run that does not come back holds up neither the keys nor the other cases' verdicts; when
    the pool gives up on it (the real pool's timeout is tested in test_workers.py) the case shows why."""
    copy_samples(tmp_path)
    pool = CannedPool(tmp_path)
    hang = Hanging(then=RunOutput(error="timed out after 3 s (the agent's process was stopped)"))
    pool.answer(DIM, hang)
    app = make_app(tmp_path, pool, options=RunOptions(timeout=3))
    async with app.run_test(size=(160, 48)) as pilot:
        others = [i for i in app.workbench.cases if i != DIM]
        await until(pilot, lambda: hang.waiting and all(status(app, i) is not None for i in others), what="every verdict but the hanging one")
        hanging = app.workbench.cases[DIM]
        assert hanging.running and hanging.status is None
        await until(pilot, lambda: "█" * 9 + "░ 11/12" in str(app.query_one("#header").render()), what="the progress of the runs")
        await pilot.press("j", "k", "question_mark")  # keys work while the agent hangs
        assert modal(app) == "HelpScreen"
        await pilot.press("escape")
        assert hanging.running
        assert {timeout for _, timeout in pool.calls} == {3}  # the run's timeout is the options'
        hang.release()
        await settle(app, pilot)
        assert hanging.status is CaseStatus.ERROR and "timed out after 3 s" in hanging.run.result.error


@pytest.mark.parametrize(
    "editor, command",
    [
        ("vim", ["vim", "+12", "/x/y.json"]),
        ("nvim", ["nvim", "+12", "/x/y.json"]),
        ("nano -w", ["nano", "-w", "+12,5", "/x/y.json"]),
        ("emacsclient -nw", ["emacsclient", "-nw", "+12:5", "/x/y.json"]),
        ("micro", ["micro", "/x/y.json:12:5"]),
        ("hx", ["hx", "/x/y.json:12:5"]),
        ("kak", ["kak", "+12:5", "/x/y.json"]),
        ("code --wait", ["code", "--wait", "--goto", "/x/y.json:12:5"]),
        ("/opt/sublime/subl", ["/opt/sublime/subl", "/x/y.json:12:5"]),
        ("zed", ["zed", "/x/y.json:12:5"]),
        ("pycharm", ["pycharm", "--line", "12", "--column", "5", "/x/y.json"]),
        ("my-editor", ["my-editor", "/x/y.json"]),  # unknown: the file alone, unless a template says more
        ("my-editor --at {file}@{line}", ["my-editor", "--at", "/x/y.json@12"]),
    ],
)
def test_the_editor_is_opened_at_the_line_in_its_own_spelling(monkeypatch, editor, command):
    from pathlib import Path

    from agentdiff.tui import editor as editor_module

    calls = []

    class Ended:
        def wait(self) -> int:
            return 0

    monkeypatch.setenv("VISUAL", editor)
    monkeypatch.setattr(editor_module, "start", lambda command: calls.append(command) or Ended())
    editor_module.default_editor(Path("/x/y.json"), 12, 5)
    assert calls == [command]


def test_the_editor_setting_is_a_template_that_wins_over_the_environment(monkeypatch):
    from pathlib import Path

    from agentdiff.tui.editor import editor_command

    monkeypatch.setenv("VISUAL", "vim")
    template = "code -g {file}:{line}:{col}"
    assert editor_command(Path("/x/y.json"), 3, 7, template) == ["code", "-g", "/x/y.json:3:7"]
    assert editor_command(Path("/x/y.json"), None, None, template) == ["code", "-g", "/x/y.json"]  # no line: the file
    assert editor_command(Path("/x/y.json"), None, None, "wrap --line {line} {file}") == ["wrap", "/x/y.json"]
    assert editor_command(Path("/x/y.json"), None, None) == ["vim", "/x/y.json"]


def test_the_editor_setting_is_read_from_the_configuration_and_checked(tmp_path):
    from agentdiff.core.project.config import load_project_config

    (tmp_path / "pyproject.toml").write_text('[tool.agentdiff]\neditor = "code -g {file}:{line}:{col}"\nstacked_below = 90\n')
    config, errors = load_project_config(tmp_path)
    assert errors == [] and config.editor == "code -g {file}:{line}:{col}" and config.stacked_below == 90
    (tmp_path / "pyproject.toml").write_text("[tool.agentdiff]\neditor = 3\n")
    config, errors = load_project_config(tmp_path)
    assert config.editor is None and "`editor` must be a command" in str(errors[0])


async def test_e_on_a_passing_case_opens_its_eval_id_line(tmp_path):
    copy_samples(tmp_path)
    editor = FakeEditor()
    app = make_app(tmp_path, CannedPool(tmp_path), editor=editor)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        passing = next(s for s in app.workbench.cases.values() if s.status is CaseStatus.PASSED and "::" in s.ref.id and s.ref.id.endswith("order_status"))
        app.main.tree.select_case(passing.ref.id)
        await pilot.pause(0.1)
        await pilot.press("e")
        await until(pilot, lambda: editor.opened)
        (path, line), = editor.opened
        assert '"eval_id": "order_status"' in path.read_text().splitlines()[line - 1]
        assert editor.columns[0] is not None


async def test_ctrl_c_says_how_to_quit_in_plain_words(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert [n.message for n in app._notifications] == ["Press ctrl+q to quit the app"]


def _screen_order(tree) -> list[str]:
    order: list[str] = []

    def walk(node) -> None:
        for child in node.children:
            if child.data:
                order.append(child.data)
            walk(child)

    walk(tree.root)
    return order


async def test_n_and_the_cursor_follow_the_screen_and_agents_keep_their_order_in_every_view(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tree = app.main.tree
        assert tree.visible_ids == _screen_order(tree)
        agents = [str(node.label) for node in tree.root.children]
        await pilot.press("slash", *"status:passed", "enter")
        assert tree.visible_ids == _screen_order(tree)
        shown = [str(node.label) for node in tree.root.children]
        assert shown == [a for a in agents if a in shown]  # the same order, fewer agents
