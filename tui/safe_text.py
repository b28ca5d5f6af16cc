"""Output that data cannot take over: every string from data (ids, names, texts, file names, what an
agent said) reaches the terminal with its control characters shown, never obeyed, so an eval_id
cannot set the terminal's title or clear the screen.

* The command line writes through `SafeStream`: control characters become `\\x1b`. agentdiff's own
  colours and line clearing are written with private stand-ins (`ESC`, `CR`) that only the stream
  turns into the real characters.
* The TUI shows them as Unicode's control pictures (`␛`), one character for one, so the styles laid
  over a `Text` stay in place (`shown`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # the command line imports this module on every start: rich is not needed there
    from rich.text import Text

#: Write these for agentdiff's own escape and carriage return; data's own are shown, never sent.
ESC, CR = "\ue01b", "\ue00d"
# control characters, and the invisible ones that reorder or hide text (bidi overrides, zero-width)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_OWN = {ESC: "\x1b", CR: "\r"}


def visible(text: str) -> str:
    """`text` with every control character but newline and tab shown as `\\xNN` (`\\u202e` for the
    invisible ones)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100 else f"\\u{ord(m.group(0)):04x}", text)


def one_line(text: str) -> str:
    """A name from data on one line: its newlines and tabs shown (`\\n`), so it cannot forge a line."""
    return text.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


class SafeStream:
    """A text stream wrapper: `visible` on everything written, then agentdiff's stand-ins made real."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        shown = visible(text)
        for own, real in _OWN.items():
            shown = shown.replace(own, real)
        return self._stream.write(shown)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


#: A control character's picture: U+2400 + code for C0 (`␛`), `␡` for DEL, `�` for C1 and for the invisible
#: characters that reorder or hide text (bidi overrides, zero-width), as the command line shows them too.
_PICTURES = {code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\n\t"} | {0x7F: "\u2421"}
_PICTURES |= {code: "\ufffd" for code in range(0x80, 0xA0)}
_PICTURES |= {code: "\ufffd" for code in (*range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0xFEFF)}


def pictured(text: str) -> str:
    """`text` with every control character but newline and tab as its picture (same length)."""
    return text.translate(_PICTURES)


def shown(text: Text) -> Text:
    """`text` made safe to render, in place (its styles stay on the same characters); returned."""
    plain = text.plain
    safe = plain.translate(_PICTURES)
    if safe != plain:
        text.plain = safe
    return text
