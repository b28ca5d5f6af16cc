"""The workbench at a glance, through the factory and Pilot: the cursor lands on cases, the filter
answers as you type, short and narrow terminals, the editor's line, the mode shown as it is."""

from __future__ import annotations

import dataclasses

from agentdiff.core.scoring.results import CaseStatus
from agentdiff.tui.widgets.case_tree import CaseTree
from fake_pool import CannedPool
from tui_support import copy_samples, make_app, settle, until

DIM = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"
REFUND_LATE = "sample_agents/customer_service/customer_service.evalset.json::refund_too_late"
REFUND_TWICE = "sample_agents/customer_service/customer_service.evalset.json::no_second_refund"
FAILING = {REFUND_LATE, REFUND_TWICE, DIM}


def header(app) -> str:
    return str(app.main.detail.query_one("#detail-header").render())


async def test_j_and_k_land_on_cases_and_a_group_row_summarises_its_cases(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tree = app.main.tree
        ids = tree.visible_ids
        tree.select_case(ids[0])
        await pilot.pause(0.1)
        seen = [tree.current_case_id]
        for _ in range(len(ids) - 1):
            await pilot.press("j")
            seen.append(tree.current_case_id)
        assert seen == ids  # every stop a case, in screen order: no group or agent row between
        for _ in range(len(ids) - 1):
            await pilot.press("k")
        assert tree.current_case_id == ids[0]
        tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("h")  # folds the case's group; the cursor is on the group's row
        await pilot.pause(0.1)
        node = tree.cursor_node
        assert not node.data and not node.is_expanded
        await until(pilot, lambda: "1 case" in header(app) or "cases:" in header(app))
        text = header(app)
        assert "home_automation.evalset.json" in text and "failing: dim_living_room" in text and "→ unfolds" in text
        await pilot.press("j")  # a folded group's cases are passed over with it
        assert tree.current_case_id not in tree.cases_under(node)
        await pilot.press("k", "right")
        await until(pilot, lambda: tree.current_case_id == tree.cases_under(node)[0])


async def test_the_filter_answers_as_you_type_and_esc_clears_it(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        total = len(app.workbench.cases)
        count = app.main.query_one("#filter-count")
        await pilot.press("slash", *"status:fai")
        await pilot.pause(0.2)
        failed = {i for i in FAILING if app.workbench.cases[i].status is CaseStatus.FAILED}
        assert set(app.main.tree.visible_ids) == failed  # no Enter yet
        assert str(count.render()) == f"{len(failed)} of {total} cases"
        await pilot.press(*"x")  # status:faix: no status begins so
        await pilot.pause(0.2)
        assert str(count.render()) == f"0 of {total} cases"  # and why, full width below the line:
        assert "unknown status 'faix' (use passed, failed, error, not_evaluated, flaky, inconclusive, new, stale, running, not run)" in str(
            app.main.query_one("#status-line").render())
        assert app.main.tree.visible_ids == [] and "No case matches the filter" in header(app)
        await pilot.press("escape")  # esc clears it, and the bar closes
        await pilot.pause(0.2)
        assert app.main.filter_text == "" and len(app.main.tree.visible_ids) == total
        assert not app.main.query_one("#status-line").display
        assert not app.main.filter_bar.display and app.main.tree.has_focus
        await pilot.press("slash", *"sta", "tab", *"fl", "tab")  # tab completes keys and values
        await pilot.pause(0.2)
        assert app.main.filter_bar.input.value == "status:flaky"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.main.filter_text == "status:flaky" and app.main.tree.has_focus
        await pilot.press("escape")  # esc in the tree clears a filter too
        await pilot.pause(0.1)
        assert app.main.filter_text == "" and len(app.main.tree.visible_ids) == total


async def test_label_completion_comes_from_the_failure_dictionary(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        wanted = app.main.triage.labels[0]
        await pilot.press("l", *wanted[:3].upper(), "tab", "enter")
        await until(pilot, lambda: app.main.triage.label_of(DIM) == wanted)


async def test_tab_after_label_offers_the_labels_cases_carry_most_used_first_and_cycles(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        triage = app.main.triage
        unused, once, twice = triage.labels[:3]
        triage.set(DIM, label=once)
        for case_id in sorted(FAILING - {DIM}):
            triage.set(case_id, label=twice)
        field = app.main.filter_bar.input
        once, twice = (f'"{x}"' if " " in x else x for x in (once, twice))  # quoted, as the filter takes them
        await pilot.press("slash", *"label:", "tab")
        assert field.value == f"label:{twice}"
        await pilot.press("tab")
        assert field.value == f"label:{once}"
        await pilot.press("tab")  # round again; the dictionary's entry no case carries is never offered
        assert field.value == f"label:{twice}" and unused not in field.value
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert set(app.main.tree.visible_ids) == FAILING - {DIM}


async def test_at_80_by_24_the_header_is_short_and_the_first_divergence_is_in_sight(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        detail = app.main.detail
        assert detail.compact and detail.stacked
        for case_id in sorted(FAILING):
            app.main.tree.select_case(case_id)
            await pilot.pause(0.3)
            state = app.workbench.cases[case_id]
            first = state.run.diff.divergences[0]
            section = detail.query_one(f"#layer-{first.layer}")
            assert any("▶" in line.plain for line in section.query_one(".layer-body").content.lines)  # stacked: its lines
            # the divergent layer's title and first lines are on the screen, not below the fold
            assert 0 < section.region.y < 24 - 4 and section.region.height > 2, (case_id, section.region)
            assert str(state.ref.name) in header(app) and "i: details" in header(app)
            assert "history:" not in header(app) and "accept scope" not in header(app)
        await pilot.press("i")  # the details on demand
        await pilot.pause(0.1)
        assert "accept scope" in header(app)
    dim = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"
    async with make_app(tmp_path, CannedPool(tmp_path)).run_test(size=(300, 24)) as pilot:  # short, but wide
        app = pilot.app
        await settle(app, pilot)
        app.main.tree.select_case(dim)
        await until(pilot, lambda: "(e: " in str(app.main.detail.extra))
        assert app.main.detail.compact
        assert "(e: sample_agents/home_automation/home_automation.evalset.json:40)" in str(app.main.detail.extra)  # the path fits


async def test_plus_maximises_the_detail_and_backslash_hides_the_tree(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        tree, detail = app.main.tree, app.main.detail
        assert not detail.stacked and not detail.compact
        await pilot.press("backslash")
        await pilot.pause(0.1)
        assert not tree.display and detail.region.width == 120
        await pilot.press("n")  # keys still move between cases
        await pilot.pause(0.2)
        assert app.main.current.failing
        await pilot.press("backslash", "plus")
        await pilot.pause(0.1)
        assert not tree.display and not app.main.query_one("#header").display and detail.compact
        await pilot.press("plus")
        await pilot.pause(0.1)
        assert tree.display and app.main.query_one("#header").display and not detail.compact


async def test_the_mode_shown_is_what_the_cases_do_and_m_comes_back_to_it(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        bar = app.main.query_one("#header")
        assert "mode replay/live" in str(bar.render())
        await pilot.press("m")
        await pilot.pause(0.1)
        assert "mode live" in str(bar.render())
        await pilot.press("m")
        await pilot.pause(0.1)
        assert "mode replay/live" in str(bar.render()) and app.workbench.options.mode is None


async def test_help_lists_every_filter_token(tmp_path):
    from agentdiff.tui.case_filter import KEYS

    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.1)
        from agentdiff.tui.screens.help_screen import filter_rows

        tokens = {token for token, _ in filter_rows()}
        assert {f"{key}:" for key in KEYS} <= tokens


async def test_a_long_run_shows_its_progress_its_eta_and_each_running_case_s_time(tmp_path):
    from agentdiff.core.worker.jobs import RunOutput
    from agentdiff.tui.app import create_app
    from fake_pool import Hanging
    from tui_support import FakeEditor

    copy_samples(tmp_path)
    pool = CannedPool(tmp_path)
    hang = Hanging(then=RunOutput(error="timed out"))
    pool.answer(DIM, hang)
    now = [1_800_000_000.0]
    app = create_app(tmp_path, [tmp_path / "sample_agents"], pool=pool, watch=False, editor=FakeEditor(), clock=lambda: now[0], project="samples")
    bar = lambda: str(app.query_one("#header").render())  # noqa: E731
    async with app.run_test(size=(160, 48)) as pilot:
        assert "starting workers…" in bar() or app.workbench.progress.total
        others = [i for i in app.workbench.cases if i != DIM]
        await until(pilot, lambda: hang.waiting and all(app.workbench.cases[i].status is not None for i in others))
        now[0] += 44  # 11 of 12 done in 44 s: 4 s a case, one left
        await until(pilot, lambda: "11/12 ETA 4s" in bar(), what="the ETA", timeout=5)
        tree = app.main.tree
        await until(pilot, lambda: "dim_living_room  44s" in str(tree._case_nodes[DIM].label), what="the running case's time", timeout=5)
        hang.release()
        await settle(app, pilot)
        assert "ETA" not in bar() and "44s" not in str(tree._case_nodes[DIM].label)


def test_progress_counts_a_batch_once_and_starts_a_new_one_when_idle():
    from agentdiff.core.workbench.progress import Progress, duration_text

    progress = Progress()
    progress.queued(["a", "b"], in_flight=False, now=100)
    progress.finished("a")
    progress.queued(["a", "c"], in_flight=True, now=103)  # a again, and c: one batch of three
    assert (progress.completed, progress.total) == (0, 3)
    progress.finished("a")
    assert progress.eta(106) == 12  # 6 s for one case: two left
    progress.finished("b"), progress.finished("c"), progress.finished("x")
    assert progress.eta(110) is None and (progress.completed, progress.total) == (3, 3)
    progress.queued(["d"], in_flight=False, now=200)
    assert (progress.completed, progress.total, progress.started) == (0, 1, 200)
    assert [duration_text(s) for s in (0.4, 59, 125, 3720)] == ["0s", "59s", "2m05s", "1h02m"]


def test_the_eta_comes_from_what_the_cases_left_took_last_time_before_any_finishes():
    from agentdiff.core.workbench.progress import Progress

    progress = Progress(jobs=2)
    progress.queued(["a", "b", "c", "new"], in_flight=False, now=0, expected={"a": 10.0, "b": 20.0, "c": 30.0})
    assert progress.eta(0) == 40  # (10 + 20 + 30 + their mean 20 for the new one) over 2 at once
    progress.finished("c")
    assert progress.eta(5) == 22.5  # (10 + 20 + their mean 15 for the new one) / 2
    progress.finished("a"), progress.finished("b")
    assert progress.eta(9) == 9 / 3  # none left ran before: the pace so far (3 s a case)
    one = Progress(jobs=8)
    one.queued(["slow"], in_flight=False, now=0, expected={"slow": 12.0})
    assert one.eta(0) == 12  # one case is as long as itself, however many could run at once
    assert one.eta(5) == 7  # it counts down while nothing finishes
    assert one.eta(13) is None  # past it: slower than last time, so no number rather than a wrong one


def test_the_eta_takes_off_what_the_cases_in_flight_have_run_already():
    from agentdiff.core.workbench.progress import Progress

    progress = Progress(jobs=2)
    progress.queued(["a", "b", "c"], in_flight=False, now=0, expected={"a": 8.0, "b": 8.0, "c": 8.0})
    progress.started_case("a", 0), progress.started_case("b", 0)
    assert progress.eta(0) == 12  # 24 s over two at once
    progress.finished("a")
    progress.started_case("c", 8)
    assert progress.eta(8) == 8  # b has run 8 of its 8 s, c none of its 8: not (8 + 8) / 2 afresh with nothing run
    progress.finished("b")
    assert progress.eta(9) == 7  # c started 1 s ago
    deep = Progress(jobs=2)  # a case finished below the heap's top is no case left
    deep.queued(["x", "y", "z"], in_flight=False, now=0, expected={"x": 10.0, "y": 9.0, "z": 1.0})
    deep.started_case("x", 0), deep.started_case("y", 0)
    deep.finished("y")
    assert deep.eta(5) == 5  # x's 5 s left (z's 1 s beside it): y's 9 s went with it


def test_run_says_how_long_is_left_from_the_cases_last_times(tmp_path, monkeypatch):
    import contextlib

    from agentdiff.core.workbench.history import HISTORY_FILE
    from test_cli import run
    from workbench_support import echo_project

    echo_project(tmp_path, {"echo": ["a", "b", "c"]})
    monkeypatch.chdir(tmp_path)
    assert run("run")[0] == 0
    import sqlite3

    with contextlib.closing(sqlite3.connect(tmp_path / HISTORY_FILE)) as history, history:  # as if each case had taken 30 s the last time
        history.execute("UPDATE runs SET seconds = 30.0, entry = json_set(entry, '$.seconds', 30.0)")
    code, _, err = run("run", "--jobs", "1")
    lines = err.splitlines()
    running = next(line for line in lines if line.startswith("running 3 cases"))
    assert running == "running 3 cases · about 1m30s left", lines
    assert lines[-2].endswith("· about 30s left") and not lines[-1].endswith("left"), lines  # the last case says nothing more


async def test_p_plots_the_case_s_runs_and_s_shows_the_suite(tmp_path):
    from agentdiff.tui.screens.suite_screen import SuiteScreen
    from agentdiff.tui.widgets.plots import CasePlots

    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        assert "tool call" in header(app) and " s" in header(app)  # what the run took, beside its tokens
        await pilot.press("r")
        await settle(app, pilot)
        await pilot.press("p")
        await pilot.pause(0.2)
        plots = app.main.detail.query_one(CasePlots)
        assert plots.display and not app.main.detail.query_one("#layers").display
        note = str(plots.query_one("#plots-note").render())
        assert "2 run(s) kept" in note and "296 tokens, 1 tool call " in note
        drawn = str(plots.query_one("#plot-score").render())
        assert "score (as in the tree)" in drawn and "run" in drawn
        await pilot.press("p")
        await pilot.pause(0.1)
        assert not plots.display and app.main.detail.query_one("#layers").display
        await pilot.press("S")
        await pilot.pause(0.3)
        assert isinstance(app.screen, SuiteScreen)
        title = str(app.screen.query_one("#suite-title").render())
        assert f"{len(app.workbench.cases)} cases" in title and "batch(es) of runs kept" in title
        assert "pass rate of the suite" in str(app.screen.query_one("#pass-rate").render())
        ran = [s for s in app.workbench.cases.values() if s.run is not None and s.run.outputs]
        assert len(app.screen.slow) == min(10, len(ran))
        assert [c.seconds for c in app.screen.slow] == sorted((c.seconds for c in app.screen.slow), reverse=True)
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert app.screen is app.main


async def test_at_80x24_the_suites_numbers_are_whole_and_a_cases_plot_keeps_its_scale(tmp_path):
    import io

    from agentdiff.tui.screens.suite_screen import SuiteScreen
    from agentdiff.tui.widgets.plots import CasePlots
    from rich.console import Console

    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("r")
        await settle(app, pilot)
        await pilot.press("p")
        await pilot.pause(0.2)
        plots = app.main.detail.query_one(CasePlots)
        assert not plots.query_one("#plot-cost").display  # a short terminal: the score alone, with every row
        drawn = str(plots.query_one("#plot-score").render())
        assert all(tick in drawn for tick in ("0.00", "0.50", "1.00")), drawn  # its axis, not collapsed to one row
        await pilot.press("p", "S")
        await pilot.pause(0.3)
        assert isinstance(app.screen, SuiteScreen)
        shown = ""
        for name in ("#slowest", "#expensive"):  # each table as drawn at its width on screen
            table = app.screen.query_one(name)
            console = Console(width=table.content_region.width, file=io.StringIO(), color_system=None)
            with console.capture() as drawn:
                console.print(table.content)
            shown += drawn.get()
        tokens = [f"{c.tokens:,}" for c in app.screen.expensive if c.tokens]
        assert tokens and all(value in shown for value in tokens), (tokens, shown)  # never cut to "2,4"
        tables = app.screen.query_one("#suite-tables")
        if tables.max_scroll_y:  # stacked below the plot: the keys scroll them, as the wheel does
            await pilot.press("j", "j")
            assert tables.scroll_y == min(2, tables.max_scroll_y)


async def test_a_key_right_after_enter_in_the_filter_goes_to_the_workbench_not_the_hidden_line(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"dim_living", "enter", "a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal", what="the accept preview")
        assert app.main.filter_text == "dim_living" and app.main.filter_bar.input.value == "dim_living"
        await pilot.press("n")


async def test_a_big_suite_s_loaded_cases_and_first_verdicts_are_frozen_out_of_the_collector(tmp_path, monkeypatch):
    """Full collections on thousands of cases cost 150 ms a key press: as the screen mounts, then once every
    case has its first verdict, what is left is collected and frozen; a small suite is left alone."""
    import gc

    from agentdiff.tui import heap

    copy_samples(tmp_path)
    thresholds = gc.get_threshold()
    try:
        app = make_app(tmp_path, CannedPool(tmp_path))
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            assert app.main.heap.times == 0 and gc.get_freeze_count() == 0  # 5 cases: nothing frozen
        monkeypatch.setattr(heap, "BIG_SUITE", 5)
        app = make_app(tmp_path, CannedPool(tmp_path))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.main.heap.times >= 1)
            frozen = gc.get_freeze_count()
            assert frozen > 0
            assert gc.get_threshold()[2] == max(thresholds[2], heap.FULL_EVERY)  # full passes rarer meanwhile
            await settle(app, pilot)
            await until(pilot, lambda: app.main.heap.times == 2)  # the first verdicts too (the next tick)
            verdict = next(state.run for state in app.workbench.cases.values() if state.run is not None)
            # frozen: out of the collector's generations (counting frozen objects is not a measure in a
            # shared test process, where objects frozen earlier are freed meanwhile)
            assert not any(obj is verdict for obj in gc.get_objects())
        assert gc.get_threshold() == thresholds  # Python's, once the app is gone
    finally:
        gc.unfreeze()  # the test process's objects back in the collector's care
        gc.set_threshold(*thresholds)


async def test_a_case_sits_under_its_agent_before_and_after_it_runs_and_moves_when_that_changes(tmp_path):
    """Eval sets in `evals/`, the agent elsewhere (ADK's docs do this): the tree names the agent found
    for them from the start, not their folder; a row whose agent or group changes moves in the tree."""
    import asyncio
    import json

    from agentdiff.core.run.options import RunOptions
    from agentdiff.tui.app import create_app
    from workbench_support import ECHO_AGENT, EchoPool, eval_set

    class Waiting(EchoPool):
        """Answers once `go` is set: the tree is seen before any case ran."""

        def __init__(self) -> None:
            super().__init__()
            self.go = asyncio.Event()

        async def run(self, job, timeout=None):
            await self.go.wait()
            return await super().run(job, timeout)

    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "echo.evalset.json").write_text(json.dumps(eval_set("echo", ["hello", "bye"])))
    options = RunOptions(agents_dirs=(tmp_path / "agents",), mapping={"evals": "echo"})
    pool = Waiting()
    app = create_app(tmp_path, [tmp_path / "evals"], pool=pool, watch=False, options=options, project="t")
    async with app.run_test(size=(120, 30)) as pilot:
        tree = app.main.tree
        await until(pilot, lambda: len(tree.visible_ids) == 2)
        assert [str(node.label) for node in tree.root.children] == ["echo"]  # before it runs: its agent, not "evals"
        pool.go.set()
        await until(pilot, lambda: all(s.run is not None and not s.running for s in app.workbench.cases.values()))
        await pilot.pause(0.2)
        assert [str(node.label) for node in tree.root.children] == ["echo"]
        rebuilt = []
        real = tree.set_cases
        tree.set_cases = lambda *a, **k: (rebuilt.append(1), real(*a, **k))[1]
        case_id = tree.visible_ids[0]
        tree._case_rows[case_id] = dataclasses.replace(app.main._row(app.workbench.cases[case_id]), agent="elsewhere")
        app.main.MOVE_EVERY = 0.2
        app.main._dirty.add(case_id)  # its row now says "echo" where the tree holds it under "elsewhere"
        app.main._repaint()
        assert rebuilt == []  # relabelled where it is at once; moved by a rebuild, at most once a MOVE_EVERY
        await until(pilot, lambda: rebuilt == [1])
        app.main._dirty.add(case_id)
        app.main._repaint()
        await pilot.pause(0.4)
        assert rebuilt == [1]  # where it belongs: relabelled only
        tree.focus()
        await pilot.press("h")  # the user folds the cursor's group: a rebuild keeps it folded, the cursor on it
        await pilot.pause(0.1)
        assert not tree.root.children[0].children[0].is_expanded
        app.main._rebuild_tree()
        await pilot.pause(0.2)
        group = tree.root.children[0].children[0]
        assert not group.is_expanded and tree.root.children[0].is_expanded and tree.cursor_node is group


def test_the_eta_kept_as_cases_finish_is_the_one_counted_from_the_cases_left():
    """The ETA is kept as cases finish (a count of the batch per finished case made a run N²); it is
    what counting the cases left says, at every step, cases with and without a last time mixed."""
    import random

    from agentdiff.core.workbench.progress import Progress

    def counted(p: Progress, now: float):
        left = p.ids - p.done
        if not left:
            return None
        known = [p.expected[i] for i in left if i in p.expected]
        if known:
            return max((sum(known) + sum(known) / len(known) * (len(left) - len(known))) / max(1, p.jobs), max(known))
        return None if not p.completed else (now - p.started) / p.completed * len(left)

    rng = random.Random(7)
    for _ in range(20):
        ids = [f"c{i}" for i in range(rng.randint(1, 40))]
        progress = Progress(jobs=rng.randint(1, 4))
        progress.queued(ids, False, 0.0, {i: rng.uniform(0.1, 9) for i in ids if rng.random() < 0.6})
        for step, case_id in enumerate(rng.sample(ids, len(ids))):
            if step == len(ids) // 2:  # more queued while it runs: the batch grows
                progress.queued([f"x{step}"], True, 1.0, {f"x{step}": 2.5})
            progress.finished(case_id)
            expected = counted(progress, 10.0 + step)
            got = progress.eta(10.0 + step)
            assert (got is None and expected is None) or abs(got - expected) < 1e-6, (got, expected)


def test_a_big_suite_s_first_run_freezes_its_verdicts_a_thousand_at_a_time(monkeypatch):
    """While the first run goes, each `FREEZE_EVERY` more verdicts are frozen (a full collection walked
    every verdict so far, every two seconds or so); not before the cases are, not after, not for a small suite."""
    from agentdiff.tui import heap

    frozen: list[int] = []
    monkeypatch.setattr(heap.gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(heap.gc, "collect", lambda: 0)
    settler = heap.HeapSettler()
    assert not settler.settling(50_000, 5_000)  # the loaded cases are not frozen yet
    assert settler.settle(50_000) and len(frozen) == 1
    assert [settler.settling(50_000, n) for n in (10, 999, 1000, 1500, 1999, 2000, 3500)] == [False, False, True, False, False, True, True]
    assert not heap.HeapSettler().settling(heap.BIG_SUITE - 1, 5_000)
    settler.settle(50_000)  # the first verdicts, once all are in
    assert not settler.settling(50_000, 9_000) and len(frozen) == 5


async def test_rows_relabelled_in_bulk_are_labelled_when_drawn_and_read_as_their_verdicts(tmp_path):
    """Many rows changing at once (a run of every case starting, the running rows each second) are
    labelled when drawn, not all at once: what the screen shows is each case's verdict all the same."""
    from tui_support import screen_text

    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        tree = app.main.tree
        rows = [app.main._row(state) for state in app.workbench.cases.values()]
        tree.update_cases(rows)
        made = [tree._case_nodes.made(row.state.ref.id) for row in rows]
        assert made and all(node is not None and node._text is None for node in made)  # marked, not labelled yet
        await pilot.pause()
        assert all(node._text is not None for node in made)  # every row on screen drawn: labelled as it was
        shown = screen_text(app)
        for row in rows:
            assert tree._case_nodes[row.state.ref.id].label.plain == CaseTree._label(row).plain
            assert row.state.ref.name in shown

def test_an_editor_setting_added_while_the_app_runs_is_used_at_the_next_e(tmp_path, monkeypatch):
    from agentdiff.tui import editor

    started = []

    class Started:
        def wait(self) -> None:
            pass

    monkeypatch.setattr(editor, "start", lambda command: started.append(command) or Started())
    monkeypatch.setenv("EDITOR", "vi")
    open_in_editor = editor.make_editor(None, tmp_path)  # as `agentdiff` starts it: no setting yet
    open_in_editor(tmp_path / "a.py", 3, 1)
    (tmp_path / "pyproject.toml").write_text('[tool.agentdiff]\neditor = "myed --goto {file}:{line}"\n')
    open_in_editor(tmp_path / "a.py", 3, 1)
    assert started[0][0] == "vi" and started[1] == ["myed", "--goto", f"{tmp_path / 'a.py'}:3"]


async def test_the_footer_is_drawn_before_the_app_has_focus_as_in_a_browser(tmp_path):
    """`agentdiff serve`: the page gives the app no focus until its first key; Textual's footer waits for
    focus before drawing its keys, so it stayed blank. Ours draws them when the keys are ready."""
    from agentdiff.tui.widgets.key_footer import KeyFooter

    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        footer = app.main.query_one(KeyFooter)
        scheduled = []
        footer.call_after_refresh = lambda callback, *args: scheduled.append(callback)  # type: ignore[method-assign]
        app.app_focus = False  # a browser page that was never clicked
        footer.bindings_changed(app.main)
        assert scheduled == [footer.recompose]


async def test_the_case_shown_before_its_first_run_shows_its_first_divergence_when_the_run_comes(tmp_path):
    """At start the cursor is on a case that has not run yet; when its run comes, the detail is at its
    first divergence (its line, its ▶), as when the case is chosen after it ran."""
    import asyncio
    import json

    samples = copy_samples(tmp_path, agents=("customer_service",))
    evalset = samples / "customer_service" / "customer_service.evalset.json"
    data = json.loads(evalset.read_text())
    data["eval_cases"].sort(key=lambda c: c["eval_id"] != "refund_too_late")  # the first row: the cursor's at start
    evalset.write_text(json.dumps(data, indent=2))
    pool, released, started = CannedPool(tmp_path), asyncio.Event(), []

    async def late(job):
        started.append(job)
        await released.wait()
        return pool.canned(job)

    pool.answer(REFUND_LATE, late)
    app = make_app(tmp_path, pool)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: started and app.main.tree.current_case_id == REFUND_LATE, what="its run started, the cursor on it")
        await pilot.pause(0.1)
        assert app.main.view.divergence == -1
        released.set()
        await settle(app, pilot)
        assert app.main.view.divergence == 0 and app.main.detail.divergence is not None
        assert "divergence 1/2:" in str(app.main.detail.extra) and "▶" in app.export_screenshot()


async def test_after_an_accept_the_scope_is_the_whole_case_again_and_a_case_accepted_whole_offers_no_esc(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("2")
        assert app.main.view.scope() == "the tool_calls layer of turn 1"
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal", what="the accept's preview")
        await pilot.press("y")
        await until(pilot, lambda: any("written:" in n.message for n in app._notifications), what="the write")
        await settle(app, pilot)
        assert app.main.view.layer is None and app.main.view.scope() == "the whole case"
        app.main.tree.select_case("sample_agents/home_automation/conformance/lights/kitchen_on_then_check")
        await pilot.pause(0.1)
        await pilot.press("1")
        line = next(line for line in str(app.main.detail.extra).splitlines() if line.startswith("accept scope:"))
        assert line.startswith("accept scope: the whole case (") and "esc" not in line, line


async def test_ctrl_d_and_ctrl_u_scroll_the_detail_from_the_tree(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(REFUND_TWICE)
        await pilot.pause(0.2)
        layers = app.main.detail.query_one("#layers")
        top = layers.scroll_y
        await pilot.press("ctrl+d")
        await pilot.pause(0.05)
        assert layers.scroll_y > top and app.focused is app.main.tree  # the tree keeps the keys
        await pilot.press("ctrl+u")
        await pilot.pause(0.05)
        assert layers.scroll_y == top
