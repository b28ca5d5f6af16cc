"""A one-line question (a comment, a label): returns the text, or None when cancelled. Given
`suggestions` (the labels already in use), it completes as you type: tab or → takes the suggestion."""

from __future__ import annotations

from typing import Optional, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.suggester import SuggestFromList
from textual.widgets import Input, Static

from .dialog import Dialog


class PromptModal(Dialog[Optional[str]]):
    BINDINGS = [("escape", "cancel", "Cancel"), Binding("tab", "complete", "Complete", show=False)]

    def __init__(self, question: str, value: str = "", placeholder: str = "", hint: str = "", suggestions: Sequence[str] = ()) -> None:
        super().__init__()
        self.question, self.value, self.placeholder, self.hint = question, value, placeholder, hint
        self.suggestions = list(suggestions)

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-dialog"):
            yield Static(self.question, classes="prompt-question")
            suggester = SuggestFromList(self.suggestions, case_sensitive=False) if self.suggestions else None
            yield Input(value=self.value, placeholder=self.placeholder, suggester=suggester, id="prompt-input")
            if self.hint:
                yield Static(self.hint, classes="prompt-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_complete(self) -> None:
        field = self.query_one(Input)
        if field._suggestion:
            field.value = field._suggestion
            field.cursor_position = len(field.value)
