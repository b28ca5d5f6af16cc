"""A case run more than once whose runs disagree: each run's verdict in the detail header, `o` / `O`
step through the runs' actual sides (the diff follows), and `a` offers the run shown."""

from __future__ import annotations

from agentdiff.core.run.options import RunOptions
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.workbench import Workbench
from agentdiff.tui.app import create_app
from test_workbench import SecondRunDiffers
from tui_support import FakeEditor, settle, until
from workbench_support import EchoPool, case_id, echo_project

ECHO_0 = case_id("echo", "case_0")


async def test_another_run_of_a_flaky_case_has_its_own_actual_side_and_diff(tmp_path):
    echo_project(tmp_path, {"echo": ["hello"]})
    wb = Workbench(tmp_path, [tmp_path / "agents"], SecondRunDiffers(), RunOptions(num_runs=3))
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    run = wb.cases[ECHO_0].run
    assert run.result.status is CaseStatus.FLAKY and run.shown == 1  # the run that failed is shown first
    assert run.diff.first_divergence is not None and run.diff.turns[0].response.actual == "something else entirely"
    other = run.showing(2)
    assert other.shown == 2 and other.diff.first_divergence is None and other.diff.turns[0].response.actual == "hello"
    assert other.result is run.result  # the verdict is the case's, over all its runs
    assert run.showing(1) is run and run.showing(7) is run


async def test_o_steps_through_the_runs_and_a_offers_the_run_shown(tmp_path):
    echo_project(tmp_path, {"echo": ["hello"]})
    app = create_app(tmp_path, [tmp_path / "agents"], pool=SecondRunDiffers(), watch=False, editor=FakeEditor(),
                     clock=lambda: 1_800_000_000.0, options=RunOptions(num_runs=3), project="p")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(ECHO_0)
        await pilot.pause(0.2)

        def header() -> str:
            return str(app.main.detail.query_one("#detail-header").render())

        assert "runs ✓1 ✗2 ✓3 · showing run 2 · o: next" in header(), header()
        assert "first divergence" in header() or "divergence 1/" in header()
        await pilot.press("o")
        await until(pilot, lambda: "showing run 3" in header())
        assert app.workbench.cases[ECHO_0].run.diff.first_divergence is None  # run 3 said what the baseline says
        await pilot.press("O")
        await until(pilot, lambda: "showing run 2" in header())
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        assert app.screen.description.startswith("accept the whole case (run 2 of 3)")
        assert "something else entirely" in app.screen.preview


async def test_accepting_one_turn_leaves_the_tabs_marking_only_the_turns_that_still_diverge(tmp_path):
    from textual.widgets import Tab
    from workbench_support import write_set

    echo_project(tmp_path, {"echo": ["hello"]})
    write_set(tmp_path, "echo", {"eval_set_id": "echo", "eval_cases": [{"eval_id": "three", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": said}]}, "final_response": {"role": "model", "parts": [{"text": expected}]}}
        for said, expected in (("one", "alpha"), ("two", "beta"), ("three", "gamma"))]}]})
    app = create_app(tmp_path, [tmp_path / "agents"], pool=EchoPool(), watch=False, editor=FakeEditor(),
                     clock=lambda: 1_800_000_000.0, project="p")
    case = case_id("echo", "three")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(case)
        await pilot.pause(0.2)

        def labels() -> list[str]:
            return [str(tab.label) for tab in app.main.detail.query(Tab)]

        assert labels() == ["turn 1 •", "turn 2 •", "turn 3 •"]
        while app.main.view.turn != 2:
            await pilot.press("t")
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        assert app.screen.description.startswith("accept turn 3")
        await pilot.press("y")
        await settle(app, pilot)
        await until(pilot, lambda: labels() == ["turn 1 •", "turn 2 •", "turn 3"], what=f"turn 3 unmarked: {labels()}")
