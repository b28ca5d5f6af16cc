"""An agents-cli project in the TUI, on the real worker pool: its cases in the tree with their
verdicts (a case with no baseline is *new*), the detail of a new case showing what the run did, and
accept (`a`, with its preview) making the baseline, undo (`z`) taking it back."""

from __future__ import annotations

from agentdiff.core.scoring.results import CaseStatus
from agentdiff.tui.widgets.header_bar import HeaderBar
from tui_support import ScriptedChanges, copy_samples, make_app, settle, until

DATASET = "sample_agents/weather_desk/tests/eval/datasets/basic-dataset.json"
NEW, FAILING, PASSING = f"{DATASET}::time_follow_up", f"{DATASET}::weather_query", f"{DATASET}::greeting"


async def test_a_new_agents_cli_case_is_accepted_from_the_tui_and_undone(tmp_path, worker_pool):
    samples = copy_samples(tmp_path, agents=("weather_desk",))
    dataset = samples / "weather_desk" / "tests" / "eval" / "datasets" / "basic-dataset.json"
    baselines = samples / "weather_desk" / "tests" / "eval" / "baselines" / "basic-dataset.json"
    before = (dataset.read_bytes(), baselines.read_bytes())
    app = make_app(tmp_path, worker_pool, ScriptedChanges())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot, timeout=30)
        cases = app.workbench.cases
        assert {case_id: cases[case_id].status for case_id in (NEW, FAILING, PASSING)} == {
            NEW: CaseStatus.NEW, FAILING: CaseStatus.FAILED, PASSING: CaseStatus.PASSED}
        assert "+ 1" in " ".join(str(widget.render()) for widget in app.screen.query(HeaderBar))
        app.main.tree.select_case(NEW)
        await pilot.pause(0.1)
        state = cases[NEW]
        assert any("new: nothing accepted yet" in note for note in state.run.diff.notes)
        assert state.run.trace.turns[0].final_response == "It is 01:00 in Tokyo."
        screen = app.export_screenshot().replace("&#160;", " ")
        assert "new" in screen and "01:00" in screen and "Tokyo" in screen  # what the run did is shown
        header = str(app.main.detail.query_one("#detail-header").render())
        graded = [m for m in state.run.result.metrics if m.threshold is None and m.score is not None]
        assert graded and all(f"{m.name} {m.score:.2f}" in header for m in graded)  # agents-cli's scores, which have no threshold
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        assert "+++ b/sample_agents/weather_desk/tests/eval/baselines/basic-dataset.json" in app.screen.preview
        assert '"reference"' in app.screen.preview
        await pilot.press("y")
        await settle(app, pilot, timeout=30)
        assert cases[NEW].status is CaseStatus.PASSED
        assert b"time_follow_up" in baselines.read_bytes() and b"It is 01:00 in Tokyo." in dataset.read_bytes()
        await pilot.press("z")
        await settle(app, pilot, timeout=30)
        assert (dataset.read_bytes(), baselines.read_bytes()) == before
        assert cases[NEW].status is CaseStatus.NEW


async def test_b_lists_the_projects_grade_results_and_shows_their_scores_beside_the_current_ones(tmp_path, worker_pool):
    import json

    from textual.widgets import OptionList
    from test_agents_cli_compare import _results

    samples = copy_samples(tmp_path, agents=("weather_desk",))
    graded = samples / "weather_desk" / "artifacts" / "grade_results" / "results_20260101_120000.json"
    graded.parent.mkdir(parents=True)
    graded.write_text(json.dumps(_results({"greeting": 3.0, "no_such_case": 1.0})).replace("custom_response_quality", "answer_length"))
    app = make_app(tmp_path, worker_pool, ScriptedChanges())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot, timeout=30)
        now = next(m.score for m in app.workbench.cases[PASSING].run.result.metrics if m.name == "answer_length")
        app.main.tree.select_case(PASSING)
        await pilot.press("B")
        await until(pilot, lambda: type(app.screen).__name__ == "ComparePicker")
        options = app.screen.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert str(graded) in ids
        options.highlighted = ids.index(str(graded))
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ != "ComparePicker")
        await pilot.pause(0.1)
        assert app.main.versus.scores_only and list(app.main.versus.cases) == [PASSING]  # named by eval_case_id: found by it
        screen = app.export_screenshot().replace("&#160;", " ")
        assert f"vs results_20260101_120000.json: answer_length 3 → {now:g}" in screen
