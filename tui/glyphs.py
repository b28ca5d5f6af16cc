"""The glyphs and colours of verdicts, shared by the tree, the header and the detail."""

from __future__ import annotations

from typing import Optional

from agentdiff.core.scoring.results import CaseStatus
from rich.text import Text

GLYPH = {
    CaseStatus.PASSED: "✓",
    CaseStatus.FAILED: "✗",
    CaseStatus.ERROR: "!",
    CaseStatus.FLAKY: "~",
    CaseStatus.NOT_EVALUATED: "?",
    CaseStatus.NEW: "+",
    CaseStatus.INCONCLUSIVE: "≈",
}
STYLE = {
    CaseStatus.PASSED: "green",
    CaseStatus.FAILED: "red",
    CaseStatus.ERROR: "bold red",
    CaseStatus.FLAKY: "yellow",
    CaseStatus.NOT_EVALUATED: "magenta",
    CaseStatus.NEW: "cyan",
    CaseStatus.INCONCLUSIVE: "yellow",
}
STALE, RUNNING, NOT_RUN = "○", "⟳", "·"


def glyph(status: Optional[CaseStatus], running: bool = False, stale: bool = False) -> tuple[str, str]:
    if running:
        return RUNNING, "cyan"
    if stale:
        return STALE, "dim"
    if status is None:
        return NOT_RUN, "dim"
    return GLYPH[status], STYLE[status]


SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: list[Optional[float]]) -> str:
    out = []
    for value in values:
        if value is None:
            out.append("·")
        else:
            out.append(SPARK[min(len(SPARK) - 1, max(0, int(round(value * (len(SPARK) - 1)))))])
    return "".join(out)


#: More runs than this are counted in the detail's header, not listed one by one.
MANY_RUNS = 20


def runs_line(run) -> Text:
    """A case run more than once (`repeats`): each run's verdict, and which one the detail shows
    (`o` / `O` step through them): `runs ✓1 ✗2 ✓3 · showing run 2 · o: next`."""
    line = Text("\nruns ")
    records = run.result.runs
    if len(records) > MANY_RUNS:  # too many to list: how many passed and failed, and the one shown
        counts: dict = {}
        for record in records:
            counts[record.status] = counts.get(record.status, 0) + 1
        for status, count in counts.items():
            mark, style = glyph(status)
            line.append(f"{mark}{count} ", style=style)
        mark, style = glyph(records[run.shown].status) if run.shown < len(records) else ("", "")
        line.append(f"of {len(records)} · showing run {run.shown + 1} ", style="dim")
        line.append(mark, style=f"{style} reverse")
        line.append(" · o: next", style="dim")
        return line
    for index, record in enumerate(records):
        mark, style = glyph(record.status)
        line.append(f"{mark}{index + 1}", style=f"{style} reverse" if index == run.shown else style)
        line.append(" ")
    line.append(f"· showing run {run.shown + 1} · o: next", style="dim")
    return line
