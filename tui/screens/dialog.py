"""The base of the app's dialogs: a modal screen whose dimmed backdrop is drawn once.

Textual draws a translucent modal's background by compositing the whole screen beneath and tinting
every segment, and it does so on each repaint of the modal: five times while an accept's preview
opens (7-25 ms each on a busy workbench). A dialog keeps the backdrop it draws for its size, so the
workbench beneath shows as it was when the dialog opened until the dialog closes or is resized.
`open_dialog` composites the screen beneath in a loop pass of its own before the dialog is pushed, so
the dialog's first paint only tints it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional, TypeVar

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from textual.app import App
from textual.color import Color
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import ModalScreen, Screen

Result = TypeVar("Result")


class _KeptBackdrop:
    """The screen beneath, composited and tinted, kept while its size and the size of the screen
    beneath stay the same (on a resize the dialog may repaint before the screen beneath is laid out)."""

    def __init__(self) -> None:
        self.screen: Optional[Screen] = None
        self.color: Optional[Color] = None
        self.size: tuple[object, ...] = ()
        self.composited: list[Segment] = []  # the screen beneath as it is drawn, untinted
        self.segments: list[Segment] = []

    def composite(self, console: Console, options: ConsoleOptions) -> None:
        assert self.screen is not None
        self.size = (options.max_width, options.height, self.screen._compositor.size)
        self.composited = list(console.render(self.screen._compositor, options))
        self.segments = []

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        assert self.screen is not None and self.color is not None
        if (options.max_width, options.height, self.screen._compositor.size) != self.size or not self.composited:
            self.composite(console, options)
        if not self.segments:
            self.segments = _tinted(self.composited, self.color)
        return self.segments


def _tinted(segments: list[Segment], color: Color) -> list[Segment]:
    """`segments` as Textual tints a translucent modal's background, each distinct style tinted once."""
    styles: dict[Optional[Style], Style] = {}
    out = []
    for segment in segments:
        text, style, control = segment
        if control:
            out.append(segment)
            continue
        tinted = styles.get(style)
        if tinted is None:
            tinted = styles[style] = next(iter(BackgroundScreen.process_segments([Segment(" ", style)], color))).style
        out.append(Segment(text, tinted))
    return out


class Dialog(ModalScreen[Result]):
    """A ModalScreen that draws the screen beneath it once per size, not on every repaint."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._kept = _KeptBackdrop()

    def keep_backdrop(self, screen: Screen) -> None:
        """Composite `screen`, which the dialog is about to cover, at the terminal's size."""
        kept, console = self._kept, screen.app.console
        kept.screen = screen
        kept.composite(console, console.options.update_dimensions(*screen.app.size))

    def render(self) -> RenderableType:
        rendered = super().render()
        if not isinstance(rendered, BackgroundScreen):
            return rendered
        kept = self._kept
        if kept.screen is not rendered.screen:
            kept.screen, kept.composited, kept.segments = rendered.screen, [], []
        if kept.color != rendered.color:
            kept.color, kept.segments = rendered.color, []
        return kept


async def open_dialog(app: App, dialog: Dialog, callback: Optional[Callable[[Any], None]] = None) -> None:
    """Push `dialog` over the app's screen, having composited that screen in a loop pass before."""
    dialog.keep_backdrop(app.screen)
    await asyncio.sleep(0)
    app.push_screen(dialog, callback)
