"""The case tree on one big eval set, through the factory and Pilot: rows are made as they are looked
at, sit on the lines Textual's own tree would give them, and fold, unfold and take the cursor as
every other row does."""

from __future__ import annotations

import asyncio

from tui_support import make_app, screen_text, settle, until
from workbench_support import EchoPool, echo_project

CASES = 1500  # over CaseTree.UNFOLDED: the group starts folded


async def test_a_big_group_makes_only_the_rows_it_draws_and_they_sit_on_their_lines(tmp_path):
    echo_project(tmp_path / "sample_agents", {"echo": [f"hello {i}" for i in range(CASES)]})
    app = make_app(tmp_path, EchoPool())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot, timeout=60)
        tree = app.main.tree
        ids = tree.visible_ids
        assert len(ids) == CASES
        group = tree._case_nodes[ids[0]].parent
        tree.select_case(ids[-1])  # unfolds the group, the cursor on its last case
        await until(pilot, lambda: tree.current_case_id == ids[-1])
        assert group.is_expanded
        assert tree.cursor_line == group.line + CASES  # the group's line, then one line per case
        await pilot.pause()
        assert ids[-1].rsplit("::", 1)[1] in screen_text(app)
        made = sum(tree._case_nodes.made(case_id) is not None for case_id in ids)
        assert made < 100  # a screenful (and the first case, where the cursor was)
        await pilot.press("shift+space")  # Textual's expand-all of a case's siblings: nothing to unfold
        await pilot.pause()
        assert sum(tree._case_nodes.made(case_id) is not None for case_id in ids) == made
        await pilot.press("k")
        assert tree.current_case_id == ids[-2] and tree.cursor_line == group.line + CASES - 1
        middle = ids[CASES // 2]
        tree.select_case(middle)
        await until(pilot, lambda: tree.current_case_id == middle)
        assert tree.cursor_node.line == group.line + 1 + CASES // 2
        assert tree._tree_lines[tree.cursor_line].node is tree.cursor_node
        await pilot.press("h")  # folds the group: its cases' lines go, the cursor on its row
        await until(pilot, lambda: not group.is_expanded and tree.cursor_node is group)
        assert len(tree._tree_lines) < CASES and tree._case_nodes[middle].line == -1
        await pilot.press("right")
        await until(pilot, lambda: group.is_expanded and tree.current_case_id == ids[0])
        assert tree._case_nodes[middle].line == group.line + 1 + CASES // 2


async def test_a_bulk_change_relabels_the_rows_on_screen_first_and_the_rest_a_share_a_repaint(tmp_path):
    echo_project(tmp_path / "sample_agents", {"echo": [f"hello {i}" for i in range(CASES)]})
    pool = EchoPool()
    app = make_app(tmp_path, pool)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot, timeout=60)
        tree, screen = app.main.tree, app.main
        ids = tree.visible_ids
        tree.select_case(ids[-1])
        await until(pilot, lambda: tree.current_case_id == ids[-1])
        await pilot.pause()
        shown = {case_id for case_id in ids if tree._case_nodes.made(case_id) is not None}
        screen.ROWS_AT_ONCE = 100
        passes: list[set[str]] = []
        relabel = tree.update_cases
        ticks: list[set[str]] = []  # the per-second tick's: the running rows (the pool's window)

        def spy(rows):
            ids_ = {row.state.ref.id for row in rows}
            (ticks if rows and all(row.elapsed is not None for row in rows) else passes).append(ids_)
            relabel(rows)

        tree.update_cases = spy
        pool.gate = asyncio.Event()  # every run held: the rows show them queued
        app.workbench.run(ids, "by hand")
        await until(pilot, lambda: len(set().union(*passes, *ticks)) >= CASES, timeout=30)
        assert shown <= passes[0] and len(passes[0]) <= 100 + len(shown)  # what is on screen first
        assert all(len(ids_) <= 100 + len(shown) for ids_ in passes), [len(p) for p in passes]
        assert set().union(*passes, *ticks) >= set(ids)
        assert "○" in tree._case_nodes[ids[-1]].label.plain  # queued
        state = app.workbench.cases[ids[-1]]
        state.reason = "run: a reason\nover two lines"
        tree.update_cases([screen._row(state)])
        assert "\n" not in tree._case_nodes[ids[-1]].label.plain  # one line, as Textual's labels are
        pool.gate.set()
        await settle(app, pilot, timeout=60)
        assert tree._case_nodes[ids[-1]].label.plain.startswith("✓")
