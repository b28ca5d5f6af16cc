"""Two columns of rows, each row's sides wrapped on their own and the next row starting level: what a
two-column `Table.grid` draws, for a fraction of its cost (no measuring of every cell for column widths,
and the wrapped lines kept per width, so Textual's measuring and painting at one width wrap once)."""

from __future__ import annotations

from typing import Iterable, Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

GAP = 1  # columns between the sides


class _Wrapped:
    """A renderable whose lines are wrapped once per width (`_wrapped`) and kept for a few widths:
    Textual measures and paints at more than one, and a resize brings new ones."""

    least = 2  # the narrowest it can be drawn

    def __init__(self) -> None:
        self._lines: dict[int, list[list[Segment]]] = {}

    def _wrapped(self, console: Console, width: int) -> Iterable[list[Segment]]:
        raise NotImplementedError

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(options.max_width, self.least), options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        if width not in self._lines:
            if len(self._lines) >= 4:
                self._lines.clear()
            self._lines[width] = list(self._wrapped(console, width))
        new_line = Segment.line()
        for segments in self._lines[width]:
            yield from segments
            yield new_line


class SideBySide(_Wrapped):
    least = 2 + GAP

    def __init__(self, rows: Sequence[tuple[Text, Text]]) -> None:
        super().__init__()
        self.rows = rows

    def _wrapped(self, console: Console, width: int) -> Iterable[list[Segment]]:
        left_width = max(1, (width - GAP) // 2)
        right_width = max(1, width - GAP - left_width)
        for left, right in self.rows:
            lefts, rights = _wrap(console, left, left_width), _wrap(console, right, right_width)
            for index in range(max(len(lefts), len(rights))):
                line = lefts[index].copy() if index < len(lefts) else Text()
                line.rstrip()
                line.pad_right(left_width - line.cell_len + GAP)
                if index < len(rights):
                    line.append_text(rights[index])
                line.rstrip()
                line.end = ""
                yield list(line.render(console))


def _wrap(console: Console, text: Text, width: int) -> list[Text]:
    """`text` wrapped to `width`; a line that says how far its wrapped lines hang (`hang`: past a line
    number) wraps its text alone and indents the lines after the first by as much."""
    if not text.plain:
        return [Text()]
    hang = getattr(text, "hang", 0)
    if not hang or width - hang < 12:
        return list(text.wrap(console, width, overflow="fold"))
    prefix, body = text[:hang], text[hang:]
    lines = list(body.wrap(console, width - hang, overflow="fold")) or [Text()]
    return [prefix + lines[0], *(Text(" " * hang) + line for line in lines[1:])]


class Stacked(_Wrapped):
    """Lines one under the other, each wrapped on its own; a line with a `hang` (past a line number)
    wraps under its text, as in `SideBySide`."""

    def __init__(self, lines: Sequence[Text]) -> None:
        super().__init__()
        self.lines = lines

    def _wrapped(self, console: Console, width: int) -> Iterable[list[Segment]]:
        return [list(piece.render(console)) for line in self.lines for piece in _ended(_wrap(console, line, width))]


def _ended(pieces: list[Text]) -> list[Text]:
    for piece in pieces:
        piece.rstrip()
        piece.end = ""
    return pieces
