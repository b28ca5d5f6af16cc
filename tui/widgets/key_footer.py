"""The footer: the screen's keys from the left, and `?` help and `q` quit always in sight on the right,
however narrow the terminal (lazygit keeps its "Keybindings: ?" there for the same reason). Below
`COMPACT_BELOW` columns the keys are drawn with less space between them."""

from __future__ import annotations

from textual import events
from textual.containers import HorizontalGroup
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: The keys that are never cut off: the way to learn the rest, and the way out.
PINNED = ("question_mark", "q")


class KeyFooter(Footer):
    DEFAULT_CSS = """
    KeyFooter #pinned-keys {
        dock: right;
        width: auto;
        height: 1;
        padding-left: 1;
        border-left: vkey $foreground 20%;
    }
    """
    COMPACT_BELOW = 120

    def compose(self):
        pinned, palette = [], []
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.has_class("-command-palette"):
                widget.remove_class("-command-palette")  # it docks itself otherwise, over the pinned keys
                palette.append(widget)
            elif isinstance(widget, FooterKey) and widget.key in PINNED:
                pinned.append(widget)
            else:
                yield widget
        with HorizontalGroup(id="pinned-keys"):
            yield from sorted(pinned, key=lambda widget: PINNED.index(widget.key))
            yield from palette

    def bindings_changed(self, screen) -> None:
        """Drawn whether or not the app has focus: Textual's footer waits for it, and a browser page
        (`agentdiff serve`) gives none until its first key, so the footer stayed blank until then."""
        self._bindings_ready = True
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self.recompose)

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < self.COMPACT_BELOW
