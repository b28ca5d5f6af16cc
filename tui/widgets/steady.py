"""`Static.update` only when what a widget shows changes. Every update re-lays out the screen (Textual
measures the new content), and a case's every state change redraws the detail pane's header and
layers, most of them as they were: unchanged ones are left alone."""

from __future__ import annotations

from typing import Any, Hashable, Optional

from rich.text import Text
from textual.widgets import Static

_KEY = "_agentdiff_shown"
_NOTHING = object()


def fingerprint(text: Text) -> Hashable:
    """What a `Text` looks like: its characters, its styles (its own and its spans) and its layout
    settings. (`Text.__eq__` compares the characters and the spans only.)"""
    return (text.plain, tuple(text.spans), str(text.style), text.justify, text.overflow, text.no_wrap, text.end)


def update(static: Static, content: Any, key: Optional[Hashable] = None, layout: bool = True) -> bool:
    """Show `content` unless `static` shows it already (`key`: what identifies it; by default a
    `Text`'s fingerprint, or a string itself). True when it was updated."""
    if key is None:
        key = fingerprint(content) if isinstance(content, Text) else content
    if getattr(static, _KEY, _NOTHING) == key:
        return False
    setattr(static, _KEY, key)
    static.update(content, layout=layout)
    return True
