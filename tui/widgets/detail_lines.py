"""Lines of the case detail's header about the case rather than its run: its recent runs (`history_line`)
and its triage label and note (`triage_line`)."""

from __future__ import annotations

from agentdiff.core.workbench.triage import Triage
from rich.text import Text

from ..glyphs import GLYPH, STYLE, sparkline

STATUS_GLYPH = {status.value: mark for status, mark in GLYPH.items()}
STATUS_STYLE = {status.value: style for status, style in STYLE.items()}


def history_line(entries: list[dict]) -> Text:
    """The case's recent runs: one glyph per run, oldest first, each the run's verdict (its score's
    height when it had one), then the last five verdicts in words."""
    if not entries:
        return Text()
    line = Text("\nhistory: ", style="dim")
    for entry in entries:
        status = entry.get("status", "")
        score = entry.get("score")
        mark = sparkline([score]) if isinstance(score, (int, float)) else STATUS_GLYPH.get(status, "·")
        line.append(mark, style=STATUS_STYLE.get(status, "dim"))
    words = [entry.get("status", "") for entry in entries[-5:]]
    line.append(f"  (last {len(words)}: {', '.join(words)})" if len(entries) > len(words) else f"  ({', '.join(words)})", style="dim")
    return line


def triage_line(triage: Triage, case_id: str) -> Text:
    """`label: double refund at turn 2 · tool_calls · call 3 [block] — refunds one order twice · note: …`."""
    label, note = triage.label_of(case_id), triage.note_of(case_id)
    if not (label or note):
        return Text()
    case, entry = triage.cases.get(case_id, {}), triage.entry(label or "")
    line = f"\nlabel: {label or '-'}"
    if case.get("element"):
        line += f" at {case['element']}"
    if entry.get("blocking"):
        line += f" [{entry['blocking']}]"
    if entry.get("description"):
        line += f" — {entry['description']}"
    if note:
        line += f" · note: {note}"
    text = Text(line, style="magenta")
    retired = triage.retired_binding(case_id)
    if retired:
        text.append(f" · {retired}", style="dim")
    return text
