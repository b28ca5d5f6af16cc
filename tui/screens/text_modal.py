"""A read-only page over the workbench (what changed since a case last passed): a diff, scrolled with
j/k/space/g/G, closed with esc or q."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from ..safe_text import pictured, shown
from .dialog import Dialog


class TextModal(Dialog[None]):
    BINDINGS = [
        ("escape", "dismiss", "Close"), ("q", "dismiss", "Close"),
        ("j", "scroll(1)", "Down"), ("k", "scroll(-1)", "Up"), ("space", "scroll(10)", "Page down"),
        ("g", "edge(0)", "Top"), ("G", "edge(1)", "Bottom"),
    ]

    def __init__(self, title: str, body: str, lexer: str = "diff") -> None:
        super().__init__()
        self.title_text, self.body, self.lexer = title, body, lexer

    def compose(self) -> ComposeResult:
        with Vertical(id="accept-dialog"):
            yield Static(shown(Text(self.title_text, style="bold")), id="accept-title")
            with VerticalScroll(id="accept-preview"):
                yield Static(Syntax(pictured(self.body), self.lexer, theme="ansi_dark", word_wrap=True))
            yield Static(Text("esc closes · j/k scroll", style="dim"))

    def action_scroll(self, lines: int) -> None:
        self.query_one(VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_edge(self, end: int) -> None:
        view = self.query_one(VerticalScroll)
        (view.scroll_end if end else view.scroll_home)(animate=False)
