"""Two long texts line by line, as delta and lazygit show them: lines are matched first, so a line
inserted or removed leaves the rest level on both sides; inside a changed line the words that
changed are marked; runs of unchanged lines are folded to a count, keeping a little context around
each change. A summary quotes the first changed line as it is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

from .sequence import WordOp, align, word_diff

LineKind = Literal["same", "changed", "deleted", "inserted", "folded"]


@dataclass(frozen=True)
class LineRow:
    """One row of the two sides: a line of each (None where that side has none)."""

    kind: LineKind
    expected: Optional[str] = None
    actual: Optional[str] = None
    expected_number: Optional[int] = None  # 1-based
    actual_number: Optional[int] = None
    words: tuple[WordOp, ...] = ()  # a changed line's word diff
    folded: int = 0  # a folded run: how many unchanged lines it hides


def is_multiline(expected: object, actual: object) -> bool:
    """Whether a text change reads better line by line (either side holds a line break)."""
    return any(isinstance(value, str) and "\n" in value for value in (expected, actual))


def line_rows(expected: str, actual: str, context: int = 2) -> list[LineRow]:
    """The rows of the two texts, unchanged runs longer than `2 × context + 1` lines folded."""
    a, b = expected.split("\n"), actual.split("\n")
    rows: list[LineRow] = []
    for tag, i1, i2, j1, j2 in align(a, b):
        if tag == "equal":
            rows.extend(_equal(a, i1, i2, j1, at_start=i1 == 0, at_end=i2 == len(a), context=context))
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(paired):
            old, new = a[i1 + k], b[j1 + k]
            rows.append(LineRow("changed", old, new, i1 + k + 1, j1 + k + 1, tuple(word_diff(old, new))))
        for i in range(i1 + paired, i2):
            rows.append(LineRow("deleted", a[i], None, i + 1, None))
        for j in range(j1 + paired, j2):
            rows.append(LineRow("inserted", None, b[j], None, j + 1))
    return rows


def _equal(lines: list[str], i1: int, i2: int, j1: int, at_start: bool, at_end: bool, context: int) -> list[LineRow]:
    shown = [LineRow("same", lines[i], lines[i], i + 1, j1 + (i - i1) + 1) for i in range(i1, i2)]
    head = 0 if at_start else context  # context after the change before it
    tail = 0 if at_end else context  # context before the change after it
    hidden = len(shown) - head - tail
    if hidden <= 1:
        return shown
    folded = LineRow("folded", expected_number=i1 + head + 1, actual_number=j1 + head + 1, folded=hidden)
    return [*shown[:head], folded, *shown[len(shown) - tail:]]


def first_changed_line(expected: str, actual: str) -> Optional[LineRow]:
    """The first row that is not the same on both sides, and has text (a blank line added before a
    paragraph says less than the paragraph)."""
    block: list[LineRow] = []  # the first place changed: its rows, side by side
    for row in line_rows(expected, actual, context=0):
        if row.kind in ("same", "folded"):
            if block:
                break
            continue
        block.append(row)
    return next((row for row in block if (row.actual or "").strip() or (row.expected or "").strip()), block[0] if block else None)
