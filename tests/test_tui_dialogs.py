"""The dialogs' backdrop: the workbench beneath, dimmed, drawn once while the dialog repaints (Textual
draws it anew on each repaint of a translucent modal), and drawn again when the terminal is resized.
The accept dialog is made once and opened again for the next change."""

from __future__ import annotations

import io

from agentdiff.core.scoring.results import CaseStatus
from fake_pool import CannedPool
from rich.console import Console
from textual._compositor import Compositor
from tui_support import copy_samples, make_app, settle, until

DIM = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"
REFUND = "sample_agents/customer_service/customer_service.evalset.json::refund_too_late"


def _text(renderable) -> str:
    console = Console(file=io.StringIO(), width=200)
    console.print(renderable)
    return console.file.getvalue()


def _backdrop_text(app) -> str:
    return "".join(segment.text for segment in app.screen._kept.segments)


async def test_the_accept_preview_draws_the_workbench_beneath_once_until_the_terminal_is_resized(tmp_path, monkeypatch):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    drawn = []  # each time a screen beneath a dialog is composited whole, for its backdrop
    composite = Compositor.__rich__

    def counted(compositor):
        drawn.append(app.size)
        return composite(compositor)

    monkeypatch.setattr(Compositor, "__rich__", counted)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        await pilot.pause(0.2)
        assert len(drawn) == 1
        dialog, description = app.screen, app.screen.description
        assert "dim_living_room" in _backdrop_text(app)  # the workbench, with its tree, is what lies beneath
        for _ in range(4):  # the focus moves between the buttons: the dialog repaints, its backdrop stays
            await pilot.press("tab")
            await pilot.pause(0.05)
        assert len(drawn) == 1
        await pilot.resize_terminal(120, 40)
        await pilot.pause(0.2)
        assert len(drawn) > 1 and drawn[-1].width == 120
        assert max(len(line) for line in _backdrop_text(app).split("\n")) == 120  # the workbench at its new width
        resized = len(drawn)
        await pilot.press("tab")
        await pilot.pause(0.05)
        assert len(drawn) == resized
        await pilot.press("n")
        await until(pilot, lambda: type(app.screen).__name__ == "WorkbenchScreen")

        drawn.clear()
        app.main.tree.select_case(REFUND)  # another failing case: the same dialog, shown again with its change
        await pilot.pause(0.1)
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        await pilot.pause(0.2)
        assert app.screen is dialog and app.screen.description != description
        assert "customer_service.evalset.json" in app.screen.preview
        shown = _text(app.screen.query_one("#accept-diff").content)
        assert "customer_service.evalset.json" in shown and "home_automation" not in shown  # not the first change's
        assert len(drawn) == 1
        await pilot.press("y")
        await until(pilot, lambda: app.workbench.cases[REFUND].status is CaseStatus.PASSED)


async def test_a_change_asked_about_while_the_accept_dialog_opens_gets_a_dialog_of_its_own(tmp_path):
    import asyncio

    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen, answers = app.main, []
        await asyncio.gather(screen._confirm(lambda yes: answers.append(("first", yes)), "first change", "a\n"),
                             screen._confirm(lambda yes: answers.append(("second", yes)), "second change", "b\n"))
        await until(pilot, lambda: len(app.screen_stack) == 3)
        assert [getattr(s, "description", None) for s in app.screen_stack[1:]] == ["first change", "second change"]
        await pilot.press("n")  # the second, on top
        await until(pilot, lambda: len(app.screen_stack) == 2)
        await pilot.press("y")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        assert answers == [("second", False), ("first", True)]
