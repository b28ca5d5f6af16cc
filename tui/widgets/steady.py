"""`Static.update` only when what a widget shows changes. Every update re-lays out the screen (Textual
measures the new content), and a case's every state change redraws the detail pane's header and
layers, most of them as they were: unchanged ones are left alone."""

from __future__ import annotations

from typing import Any, Hashable, Optional, Union

from rich.text import Text
from textual.widgets import Static

_KEY = "_agentdiff_shown"
_NOTHING = object()


def fingerprint(text: Text) -> Hashable:
    """What a `Text` looks like: its characters, its styles (its own and its spans) and its layout
    settings. (`Text.__eq__` compares the characters and the spans only.)"""
    return (text.plain, tuple(text.spans), str(text.style), text.justify, text.overflow, text.no_wrap, text.end)


def shows(static: Static, key: Hashable) -> bool:
    """Whether `static` shows what `key` identifies already (so building its content can be skipped)."""
    return getattr(static, _KEY, _NOTHING) == key


def update(static: Static, content: Any, key: Optional[Hashable] = None, layout: Union[bool, str] = True) -> bool:
    """Show `content` unless `static` shows it already (`key`: what identifies it; by default a
    `Text`'s fingerprint, or a string itself). True when it was updated. `layout="height"`: lay the
    screen out again only when the new content's height differs (measured as the layout measures it)."""
    if key is None:
        key = fingerprint(content) if isinstance(content, Text) else content
    if shows(static, key):
        return False
    setattr(static, _KEY, key)
    if layout != "height":
        static.update(content, layout=bool(layout))
        return True
    before, width = static.size.height, static.size.width
    static.update(content, layout=False)
    if not (static.display and width and before) or static.get_content_height(static.size, static.app.size, width) != before:
        static.refresh(layout=True)
    return True
