"""A repeated case's runs side by side (`g`, `diff --json`, the MCP `diff`): per turn and layer, the
distinct things its runs did with how many runs did each, the baseline's marked; `a` offers the majority
run; `u` gives an inconclusive case more runs until it settles."""

from __future__ import annotations

import pytest
from agentdiff.core.diff.variants import grid_dict
from agentdiff.core.run.grid import run_grid
from agentdiff.core.run.options import RunOptions
from agentdiff.core.scoring.pass_rate import PassRules
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.workbench import Workbench
from agentdiff.tui.app import create_app
from test_pass_rates import ChancePool
from tui_support import FakeEditor, settle, until
from workbench_support import EchoPool, case_id, echo_project, set_path

ECHO_0 = case_id("echo", "case_0")
ANSWERS = ["hey", "hey", "hello", "hey", "bye"]  # the baseline says "hello": three variants over five runs


class ScriptedRuns(EchoPool):
    """Run N of a case answers ANSWERS[N]."""

    async def run(self, job, timeout=None):
        out = await super().run(job, timeout)
        for event in out.events[1::2]:
            event["content"] = {"role": "model", "parts": [{"text": ANSWERS[job.repeat % len(ANSWERS)]}]}
        return out


async def test_the_grid_counts_each_variant_and_marks_the_baseline(tmp_path):
    echo_project(tmp_path, {"echo": ["hello"]})
    wb = Workbench(tmp_path, [tmp_path / "agents"], ScriptedRuns(), RunOptions(num_runs=5))
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    run = wb.cases[ECHO_0].run
    assert run.result.status is CaseStatus.FLAKY and run.result.disagreeing
    made = run_grid(run)
    assert made.runs == 5 and made.distinct == 3 and made.majority == 0 and made.majority_runs == (0, 1, 3)
    calls, answers = made.rows
    assert (calls.layer, calls.agree, calls.variants[0].text, calls.variants[0].baseline) == ("tool_calls", True, "(no tool call)", True)
    assert [(v.text, v.runs, v.baseline) for v in answers.variants] == [("hey", (0, 1, 3), False), ("hello", (2,), True), ("bye", (4,), False)]
    document = grid_dict(made)
    assert document["majority_run"] == 1 and document["rows"][1]["variants"][1] == {"text": "hello", "runs": [3], "count": 1, "baseline": True}
    assert run_grid(wb.cases[ECHO_0].run.showing(4)).majority == 0  # whichever run is shown


def _app(tmp_path, pool, options):
    return create_app(tmp_path, [tmp_path / "agents"], pool=pool, watch=False, editor=FakeEditor(), clock=lambda: 1_800_000_000.0,
                      options=options, project="p")


async def test_g_shows_the_runs_side_by_side_and_a_offers_the_majority_run(tmp_path):
    echo_project(tmp_path, {"echo": ["hello"]})
    app = _app(tmp_path, ScriptedRuns(), RunOptions(num_runs=5))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(ECHO_0)
        await pilot.pause(0.2)
        await pilot.press("g")
        grid = app.main.detail.query_one("#grid")

        def text() -> str:
            return str(app.main.detail.query_one("#grid-text").render())

        await until(pilot, lambda: grid.display and "5 runs side by side" in text())
        assert "3 distinct trajectories · majority: run 1 (3 of 5)" in text()
        assert "✓ all 5 runs: (no tool call)" in text() and "runs 1 2 4" in text()
        assert not app.main.detail.query_one("#layers").display
        while app.workbench.cases[ECHO_0].run.shown != 4:  # run 5 said "bye"
            await pilot.press("o")
            await pilot.pause(0.05)
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        assert app.screen.description == f"accept the whole case (run 5 of 5): {ECHO_0} · m: the majority run instead (run 1, as 3 of 5 runs did)"
        await pilot.press("m")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal" and "(run 1 of 5)" in app.screen.description)
        assert '"text": "hey"' in app.screen.preview and "m: the majority" not in app.screen.description
        await pilot.press("y")
        await until(pilot, lambda: '"hey"' in set_path(tmp_path, "echo").read_text())
        await pilot.press("g")
        await until(pilot, lambda: not grid.display and app.main.detail.query_one("#layers").display)


async def test_u_gives_an_inconclusive_case_more_runs_until_it_settles(tmp_path):
    echo_project(tmp_path, {"echo": ["hello"]})
    pool = ChancePool({ECHO_0: 0.95}, seed=11)
    app = _app(tmp_path, pool, RunOptions(num_runs=4, pass_rules=PassRules(min_pass_rate=0.6)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        state = app.workbench.cases[ECHO_0]
        assert state.status is CaseStatus.INCONCLUSIVE, state.run.result.pass_rate
        app.main.tree.select_case(ECHO_0)
        await pilot.pause(0.2)
        header = str(app.main.detail.query_one("#detail-header").render())
        assert "u: more runs until it settles" in header and "more to settle it" in header
        await pilot.press("u")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        assert "1 inconclusive case(s): at most 96 more runs" in app.screen.preview
        await pilot.press("y")
        await until(pilot, lambda: not state.running and state.status is not CaseStatus.INCONCLUSIVE or len(state.run.result.runs) >= 100,
                    timeout=30)
        await settle(app, pilot)
        rate = state.run.result.pass_rate
        assert rate.runs > 4 and pool.runs_of(ECHO_0) == rate.runs and state.reason.startswith("until confident")
        assert "runs" in str(app.main.tree.cursor_node.label)  # the row says k/n runs


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_the_grid_snapshot(snap_compare, tmp_path, size):
    echo_project(tmp_path, {"echo": ["hello"]})

    async def run_before(pilot) -> None:
        await settle(pilot.app, pilot)
        pilot.app.main.tree.select_case(ECHO_0)
        await pilot.pause(0.2)
        await pilot.press("g")
        await pilot.pause(0.3)

    assert snap_compare(_app(tmp_path, ScriptedRuns(), RunOptions(num_runs=5)), terminal_size=size, run_before=run_before)


async def test_a_majority_that_says_what_the_baseline_says_is_not_offered(tmp_path):
    from agentdiff.core.run.grid import majority_to_accept

    class MostlyRight(EchoPool):
        async def run(self, job, timeout=None):
            out = await super().run(job, timeout)
            if job.repeat == 2:
                out.events[1]["content"] = {"role": "model", "parts": [{"text": "bye"}]}
            return out

    echo_project(tmp_path, {"echo": ["hello"]})
    wb = Workbench(tmp_path, [tmp_path / "agents"], MostlyRight(), RunOptions(num_runs=3))
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    run = wb.cases[ECHO_0].run
    assert run.result.disagreeing and run_grid(run).majority == 0
    assert majority_to_accept(run) is None  # runs 1 and 2 said "hello", as the baseline does: nothing to accept


def test_many_runs_are_counted_in_the_header_not_listed():
    from types import SimpleNamespace

    from agentdiff.core.scoring.results import RunRecord
    from agentdiff.tui.glyphs import runs_line

    records = tuple(RunRecord((), None, status=CaseStatus.PASSED if i % 3 else CaseStatus.FAILED) for i in range(100))
    line = str(runs_line(SimpleNamespace(result=SimpleNamespace(runs=records), shown=3)))
    assert line == "\nruns ✗34 ✓66 of 100 · showing run 4 ✗ · o: next"
    few = str(runs_line(SimpleNamespace(result=SimpleNamespace(runs=records[:3]), shown=1)))
    assert few == "\nruns ✗1 ✓2 ✓3 · showing run 2 · o: next"
