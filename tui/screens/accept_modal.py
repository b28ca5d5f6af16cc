"""The preview of an accept: the exact file change, then yes or no."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from ..diff_render import diff_preview
from ..safe_text import pictured, shown
from .dialog import Dialog


QUESTION = "Write this change? It is journaled: z undoes it."


class AcceptModal(Dialog[bool]):
    """Returns True when the user confirms the write, False when not; None for the other choice it was
    given (`alternative`: a repeated case's majority run instead of the run shown), `m`."""

    BINDINGS = [
        ("y", "confirm", "Write it"), ("n", "cancel", "Cancel"), ("escape", "cancel", "Cancel"), ("m", "alternative", "The other"),
        ("j", "scroll(1)", "Down"), ("k", "scroll(-1)", "Up"), ("space", "scroll(10)", "Page down"),
        ("g", "edge(0)", "Top"), ("G", "edge(1)", "Bottom"),
    ]

    def __init__(self, description: str, preview: str, question: str = QUESTION, yes: str = "Write", alternative: str = "") -> None:
        super().__init__()
        self.description = description
        self.preview = preview
        self.question, self.yes, self.alternative = question, yes, alternative

    def compose(self) -> ComposeResult:
        with Vertical(id="accept-dialog"):
            yield Static(shown(Text(self.description, style="bold")), id="accept-title")
            with VerticalScroll(id="accept-preview"):
                yield Static(diff_preview(pictured(self.preview)), id="accept-diff")
            yield Static(Text(self.question, style="dim"), id="accept-question")
            with Horizontal(id="accept-buttons"):
                yield Button(f"{self.yes} (y)", id="yes", variant="success")
                yield Button(f"{self.alternative} (m)", id="other", variant="primary")
                yield Button("Cancel (n)", id="no", variant="error")

    def on_mount(self) -> None:
        self.query_one("#other", Button).display = bool(self.alternative)

    def show(self, description: str, preview: str, question: str = QUESTION, yes: str = "Write", alternative: str = "") -> None:
        """The same dialog for another change: composed once, it opens again without mounting anything."""
        self.description, self.preview, self.question, self.yes, self.alternative = description, preview, question, yes, alternative
        if not self.is_mounted:
            return
        other = self.query_one("#other", Button)
        other.display, other.label = bool(alternative), f"{alternative} (m)"
        self.query_one("#accept-title", Static).update(shown(Text(description, style="bold")))
        self.query_one("#accept-diff", Static).update(diff_preview(pictured(preview)))
        self.query_one("#accept-question", Static).update(Text(question, style="dim"))
        self.query_one("#yes", Button).label = f"{yes} (y)"
        self.query_one("#accept-preview", VerticalScroll).scroll_home(animate=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "other" else event.button.id == "yes")

    def action_alternative(self) -> None:
        if self.alternative:
            self.dismiss(None)

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    def action_scroll(self, lines: int) -> None:
        self.query_one("#accept-preview", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_edge(self, end: int) -> None:
        preview = self.query_one("#accept-preview", VerticalScroll)
        preview.scroll_end(animate=False) if end else preview.scroll_home(animate=False)
