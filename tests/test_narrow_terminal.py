"""At 80×24: the way to help and out stays in sight, a load error says why, the review's keys and the
accept dialog's buttons are never covered or cut, and a wrapped `+` line of a preview still reads as
added."""

from __future__ import annotations

from fake_pool import CannedPool
from rich.console import Console
from textual.widgets import Button
from textual.widgets._footer import FooterKey
from tui_support import FakeEditor, copy_samples, make_app, screen_text, settle, until

DIM = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"


async def test_at_80_columns_the_footer_keeps_help_and_quit_in_sight(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        keys = {key.key: key for key in app.screen.query(FooterKey)}
        for name in ("question_mark", "q"):
            region = keys[name].region
            assert region.width and region.right <= 80 and region.y == 23, (name, region)
        assert keys["question_mark"].region.x < keys["q"].region.x  # help, then quit
        for name in ("question_mark", "q"):  # drawn on top of the keys that scroll beneath them
            region = keys[name].region
            assert all(app.screen.get_widget_at(x, 23)[0] is keys[name] for x in range(region.x, region.right))
        assert "? Help" in screen_text(app) and "q Quit" in screen_text(app)


async def test_a_load_error_row_says_where_and_why_and_e_opens_that_line(tmp_path):
    samples = copy_samples(tmp_path)
    broken = samples / "customer_service" / "broken.evalset.json"
    broken.write_text('{"eval_set_id": "broken", "eval_cases": [\n  {"eval_id": "x", "conversation": [}\n]}\n')
    editor = FakeEditor()
    app = make_app(tmp_path, CannedPool(tmp_path), editor=editor)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        tree = app.main.tree
        error_row = next(node for node in tree.root.children[0].children)
        tree.move_cursor(error_row)
        await pilot.pause(0.1)
        await until(pilot, lambda: tree.current_load_error() is not None)
        header = str(app.main.detail.query_one("#detail-header").render())
        assert "could not load this file" in header and "broken.evalset.json:2:" in header, header
        assert "No case selected" not in header
        await pilot.press("e")
        await pilot.pause(0.1)
        assert editor.opened == [(tmp_path / "sample_agents" / "customer_service" / "broken.evalset.json", 2)]


async def test_toasts_over_the_accept_dialog_leave_its_buttons_uncovered(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(DIM)
        await pilot.pause(0.1)
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        for n in range(3):
            app.notify(f"a notice that arrives while the dialog is open, number {n}")
        await pilot.pause(0.3)
        toasts = [toast.region for toast in app.screen.query("Toast")]
        assert toasts
        for button in app.screen.query(Button):
            assert all(not toast.overlaps(button.region) for toast in toasts), (button.id, toasts)


async def test_the_review_keys_wrap_at_80_columns_instead_of_losing_quit(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("V")
        await until(pilot, lambda: type(app.screen).__name__ == "ReviewScreen")
        await pilot.pause(0.2)
        keys = app.screen.query_one("#review-keys")
        assert keys.region.height >= 2 and "quit" in screen_text(app).replace("Quit", ""), screen_text(app)[-400:]


def test_a_wrapped_added_line_of_a_preview_stays_added_on_every_row():
    from agentdiff.tui.diff_render import diff_preview

    long = "+" + " ".join(f"word{n}" for n in range(40))
    console = Console(width=40, color_system="truecolor")
    lines = console.render_lines(diff_preview(f"--- a/x.json\n+++ b/x.json\n@@ -1 +1 @@\n-old\n{long}\n context"), console.options)
    rows = ["".join(segment.text for segment in line) for line in lines]
    added = [n for n, row in enumerate(rows) if "word" in row]
    assert len(added) > 2 and rows[added[0]].startswith("+ ") and all(rows[n].startswith("  ") for n in added[1:]), rows
    for n in added:  # every row of the wrapped line is drawn as added
        words = [segment for segment in lines[n] if "word" in segment.text]
        assert words and all(segment.style.color.name == "green" for segment in words), lines[n]


async def test_at_80_columns_a_long_case_name_gives_way_to_its_score(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.pause(0.2)
        shown = screen_text(app)
        assert "refund_delivere… " in shown and "ask_for_missing…  1.00" in shown, shown  # cut with an ellipsis, the score whole
        assert "customer_service.evalse…" in shown  # a group's row too
        assert "no_second_refund  0.50" in shown
