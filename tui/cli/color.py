"""Colour on a terminal: `--color auto|always|never` (https://no-color.org for `auto`), as plain ANSI
codes, so output that is not coloured is byte for byte what it was before colour existed."""

from __future__ import annotations

import os
import re
from typing import Mapping, Optional, TextIO

from agentdiff.core.scoring.results import CaseStatus

from ..safe_text import ESC

CHOICES = ("auto", "always", "never")
RESET = f"{ESC}[0m"
STATUS_CODES = {
    CaseStatus.PASSED: "32",  # green
    CaseStatus.FAILED: "31",  # red
    CaseStatus.ERROR: "35",  # magenta
    CaseStatus.FLAKY: "33",  # yellow
    CaseStatus.NOT_EVALUATED: "2",  # dim
    CaseStatus.NEW: "36",  # cyan
    CaseStatus.INCONCLUSIVE: "33",  # yellow
}
REMOVED, ADDED, BOLD, DIM = "31", "32", "1", "2"


def is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def wants_color(choice: Optional[str], stream: TextIO, environ: Optional[Mapping[str, str]] = None) -> bool:
    """`always`: yes; `never`: no; `auto` (the default): when `stream` is a terminal and NO_COLOR is
    unset or empty. A flag given on the command line wins over NO_COLOR, as no-color.org asks."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if environ is None else environ
    return is_terminal(stream) and not env.get("NO_COLOR")


def paint(text: str, code: str, on: bool) -> str:
    return f"{ESC}[{code}m{text}{RESET}" if on and text else text


def paint_status(text: str, status: CaseStatus, on: bool) -> str:
    return paint(text, STATUS_CODES[status], on)


# How core/reports/diff_text.py marks changed words (git's --word-diff): `[-removed-]{+added+}`.
_WORDS = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.S)


def paint_word_diff(text: str, on: bool) -> str:
    """The diff text with removed words red and added words green (the marks stay, so the text
    reads the same without colour)."""
    if not on:
        return text
    return _WORDS.sub(lambda m: paint(m.group(0), REMOVED if m.group(1) is not None else ADDED, True), text)
