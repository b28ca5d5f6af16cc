"""The help overlay: every key and what it does (from the bindings), and what replay and live mode can see."""

from __future__ import annotations

from typing import Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..case_filter import LAYERS, STATUSES
from .dialog import Dialog


def filter_rows() -> list[tuple[str, str]]:
    """Every token of the `/` filter and the values it takes."""
    return [
        ("word", "cases whose id holds the word"),
        ("status:", f"{', '.join(STATUSES)} (a beginning is enough: status:fail)"),
        ("agent:", "the agent's name, or part of it"),
        ("label:", 'the triage label, or part of it (quotes hold spaces: label:"flaky model")'),
        ("mode:", "replay or live: how the case last ran"),
        ("layer:", f"{', '.join(LAYERS)}: a layer with a divergence"),
        ("a,b", "either value: status:failed,error"),
        ("!token", "the cases the token does not match"),
    ]


MODES = (
    "Replay runs your agent's code with the recorded model answers: it sees prompts, tool declarations, "
    "model names, what tools write to state and tools that raise; it cannot see the model behaving "
    "differently. Live runs the model: it sees the model's behaviour."
)


class HelpScreen(Dialog[None]):
    """Shows the rows it is given: (key, what it does), made from the bindings by the screen."""

    BINDINGS = [("escape", "dismiss", "Close"), ("question_mark", "dismiss", "Close"), ("q", "dismiss", "Close"),
                ("j", "scroll('down')", "Down"), ("k", "scroll('up')", "Up"), ("g", "scroll('home')", "Top"),
                ("G", "scroll('end')", "Bottom"), ("space", "scroll('page_down')", "Page down")]

    def action_scroll(self, where: str) -> None:
        view = self.query_one(VerticalScroll)
        {"down": view.scroll_down, "up": view.scroll_up, "home": view.scroll_home, "end": view.scroll_end,
         "page_down": view.scroll_page_down}[where](animate=False)

    def __init__(self, keys: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = list(keys)

    def compose(self) -> ComposeResult:
        table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
        table.add_column("key")
        table.add_column("action")
        for key, action in self.keys:
            table.add_row(key, action)
        with VerticalScroll(id="help-dialog"):
            yield Static(Text.assemble(("agentdiff keys", "bold"), ("  (esc or ? closes)", "dim")))
            yield Static(table)
            filters = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
            filters.add_column("filter (/)")
            filters.add_column("matches")
            for token, meaning in filter_rows():
                filters.add_row(token, meaning)
            yield Static(Text("\nThe / filter: tokens are combined (all must match); tab completes, esc clears", style="bold"))
            yield Static(filters)
            yield Static(Text("\n" + MODES, style="dim"))
