"""Two long texts as rows of a side-by-side layer, line by line (`core/diff/text_lines.py`)."""

from __future__ import annotations

from typing import Optional, Sequence

from agentdiff.core.diff.sequence import WordOp
from agentdiff.core.diff.text_lines import line_rows
from rich.text import Text

DELETED = "bold red on #3b1d1d"
INSERTED = "bold green on #1d3b22"
DIM = "dim"
Row = tuple[Text, Text]


class Hanging(Text):
    """A line whose wrapped lines hang under its text, past its first `hang` cells (its line number),
    as delta wraps a long line (`side_by_side.SideBySide` reads `hang`)."""

    hang = 0


def marked(mark: Text, line: Text) -> Text:
    """`mark` put before `line`; a line that hangs (a numbered line of a long text) still hangs under its
    text, past the mark too."""
    hang = getattr(line, "hang", 0)
    return hanging(mark, line, mark.cell_len + hang) if hang else mark + line


def hanging(prefix: Text, body: Text, hang: Optional[int] = None) -> Text:
    """`prefix` then `body`, wrapped lines hanging `hang` cells in (by default, past the prefix)."""
    line = Hanging()
    line.append_text(prefix)
    line.append_text(body)
    line.hang = prefix.cell_len if hang is None else hang
    return line


def text_rows(expected: str, actual: str, indent: str = "") -> list[Row]:
    """Two texts line by line (`core/diff/text_lines.py`): a line of each side per row, numbered, the
    words that changed marked inside a changed line, unchanged runs folded to a count."""
    rows = line_rows(expected, actual)
    width = len(str(max(expected.count("\n"), actual.count("\n")) + 1))

    def number(value: Optional[int]) -> Text:
        return Text(f"{indent}{value:>{width}} " if value else f"{indent}{'':>{width}} ", style=DIM)

    out: list[Row] = []
    for row in rows:
        if row.kind == "folded":
            fold = Text(f"{indent}{'':>{width}} ⋯ {row.folded} unchanged line{'s' if row.folded != 1 else ''}", style=DIM)
            out.append((fold, fold.copy()))
        elif row.kind == "same":
            out.append((hanging(number(row.expected_number), Text(row.expected or "")), hanging(number(row.actual_number), Text(row.actual or ""))))
        elif row.kind == "changed":
            out.append((hanging(number(row.expected_number), line_words(row.words, "expected")),
                        hanging(number(row.actual_number), line_words(row.words, "actual"))))
        elif row.kind == "deleted":
            out.append((hanging(number(row.expected_number), Text(row.expected or "↵", style=DELETED)), Text("")))
        else:
            out.append((Text(""), hanging(number(row.actual_number), Text(row.actual or "↵", style=INSERTED))))
    return out


def line_words(ops: Sequence[WordOp], side: str) -> Text:
    """One side of a word diff: the words both share, and that side's own marked."""
    text = Text()
    for op in ops:
        if op.op == "equal":
            text.append(op.text)
        elif op.op == "delete" and side == "expected":
            text.append(op.text, style=DELETED)
        elif op.op == "insert" and side == "actual":
            text.append(op.text, style=INSERTED)
    return text
