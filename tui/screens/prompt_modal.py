"""A one-line question (the filter, a comment, a label): returns the text, or None when cancelled."""

from __future__ import annotations

from typing import Optional

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class PromptModal(ModalScreen[Optional[str]]):
    BINDINGS = [("escape", "cancel", "Cancel")]

    def __init__(self, question: str, value: str = "", placeholder: str = "", hint: str = "") -> None:
        super().__init__()
        self.question, self.value, self.placeholder, self.hint = question, value, placeholder, hint

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-dialog"):
            yield Static(self.question, classes="prompt-question")
            yield Input(value=self.value, placeholder=self.placeholder, id="prompt-input")
            if self.hint:
                yield Static(self.hint, classes="prompt-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
