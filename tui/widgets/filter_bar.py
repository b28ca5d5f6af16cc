"""The filter line of the `/` key: the tree follows as you type, with the match count beside, or
why the query cannot match (an unknown key or value, with the valid ones). Enter keeps the filter;
Esc clears it. Tab completes the token under the cursor (keys, statuses, layers, agents, labels)."""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Input, Static

from ..case_filter import KEYS


class FilterSuggester(Suggester):
    """Completes the query's last token: a key (`sta` → `status:`), or a value of a key
    (`status:fa` → `status:failed`, agents and labels from the project)."""

    def __init__(self, values: Callable[[str], Sequence[str]]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.values = values

    async def get_suggestion(self, value: str) -> Optional[str]:
        options = self.candidates(value)
        return options[0] if options else None

    def candidates(self, value: str) -> list[str]:
        """Every completion of the query's last token, in order (Tab takes the first, Tab again the next)."""
        out = []
        head, _, token = value.rpartition(" ")
        negate = "!" if token.startswith("!") else ""
        token = token[len(negate):]
        if not token:
            return out
        key, sep, partial = token.partition(":")
        if not sep:
            options = [f"{k}:" for k in KEYS]
            wanted = token
        else:
            done, _, partial = partial.rpartition(",")
            options = [f"{key}:{done + ',' if done else ''}{v}" for v in self.values(key)]
            wanted = f"{key}:{done + ',' if done else ''}{partial}"
        for option in options:
            if option.lower().startswith(wanted.lower()) and option != wanted:
                shown = f'{option.split(":", 1)[0]}:"{option.split(":", 1)[1]}"' if " " in option else option
                out.append(f"{head} {negate}{shown}" if head else f"{negate}{shown}")
        return out


class InOrderInput(Input):
    """An Input whose editing keys act when they arrive, in order with the characters typed after
    them. (An Input's bindings run once its key has bubbled up to the app, so in one burst — a
    script's `send-keys C-u kitchen` — the characters after C-u would be typed before it cleared the
    line, and be cleared with it.)"""

    EDITS = {"backspace": "delete_left", "ctrl+u": "delete_left_all", "ctrl+w": "delete_left_word",
             "ctrl+k": "delete_right_all", "delete": "delete_right", "ctrl+d": "delete_right",
             "home": "home", "ctrl+a": "home", "end": "end", "ctrl+e": "end", "left": "cursor_left", "right": "cursor_right"}

    async def _on_key(self, event) -> None:
        action = self.EDITS.get(event.key)
        if action is not None:
            event.stop()
            event.prevent_default()
            getattr(self, f"action_{action}")()
            return
        await super()._on_key(event)


class FilterBar(Horizontal):
    BINDINGS = [Binding("escape", "clear", "Clear the filter", show=False), Binding("tab", "complete", "Complete", show=False)]

    class Changed(Message):
        def __init__(self, value: str) -> None:
            super().__init__()
            self.value = value

    class Closed(Message):
        """Enter (keep the filter) or Esc (`cleared`)."""

        def __init__(self, value: str, cleared: bool) -> None:
            super().__init__()
            self.value, self.cleared = value, cleared

    def __init__(self, values: Callable[[str], Sequence[str]], **kwargs) -> None:
        super().__init__(**kwargs)
        self.values = values

    def compose(self) -> ComposeResult:
        yield Static("/", id="filter-prompt")
        # not selecting all on focus: the Focus event comes after the keys of a burst typed in already,
        # and selecting them would let the next key replace them
        yield InOrderInput(placeholder="status:failed agent:x … (tab completes)",
                           suggester=FilterSuggester(self.values), id="filter-input", select_on_focus=False)
        yield Static(id="filter-count")

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    def open(self, value: str) -> None:
        self.display = True
        self.input.value = value
        self.input.cursor_position = len(value)
        # focused now, not after the queued messages: keys that came in one burst with `/` (a paste, a
        # script's send-keys) are the filter's text, never commands of the screen
        self.screen.set_focus(self.input)

    def show_count(self, shown: int, total: int, problem: Optional[str]) -> None:
        """The count beside the line; a problem (long: it lists the valid values) goes on the status
        line below, full width, by the screen."""
        text = Text(f"{shown} of {total} case{'s' if total != 1 else ''}", style="bold red" if problem else "cyan")
        self.query_one("#filter-count", Static).update(text)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(event.value))

    def _close(self) -> None:
        """Hidden, and its input no longer takes keys: a key typed right after Enter or Esc goes to the
        screen, not into the hidden line (the screen focuses the tree when it handles `Closed`)."""
        self.display = False
        self.screen.set_focus(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close()
        self.post_message(self.Closed(event.value, cleared=False))

    _cycle: tuple[list[str], int] = ([], 0)  # the completions Tab steps through, and the one shown

    def action_complete(self) -> None:
        """Tab: the first completion of the last token; Tab again, the next one, round (as a shell does)."""
        options, at = self._cycle
        if options and self.input.value == options[at]:
            at = (at + 1) % len(options)
        else:
            options, at = self.input.suggester.candidates(self.input.value), 0
        self._cycle = (options, at)
        if options:
            self.input.value = options[at]
            self.input.cursor_position = len(self.input.value)

    def action_clear(self) -> None:
        self._close()
        self.post_message(self.Closed("", cleared=True))
