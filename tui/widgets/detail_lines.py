"""Lines of the case detail's header about the case rather than its run: its recent runs (`history_line`)
and its triage label and note (`triage_line`)."""

from __future__ import annotations

import re

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


def error_lines(error: str, short: bool) -> Text:
    """A run's error for the header, what to do first: `turn 1: ValueError: No API key… (no model
    credentials: set GOOGLE_API_KEY…)` reads as the fix (red), then what was raised (dim); on a short
    terminal the fix alone, a line or two. An error with no such closing clause is shown as it is."""
    first = error.splitlines()[0] if error else ""
    said, hint = split_hint(first)
    if not hint:
        return Text(f"\n{first if short else error}", style="red")
    place = _PLACE.match(said)  # the project's line it failed at leads, as `e` opens it
    if place:
        hint, said = f"{place.group(1)}: {hint}", said[place.end():]
    text = Text(f"\n{hint}", style="red")
    if not short:
        rest = error[len(first):]
        text.append(f"\n{said}{rest}", style="dim")
    return text


_PLACE = re.compile(r"^([^\s:]+\.py:\d+): ")


def split_hint(line: str) -> tuple[str, str]:
    """`message (what to do)` → (message, what to do): the clause closing the line, in its own
    parentheses; ("", "") parts when there is none."""
    if not line.endswith(")"):
        return line, ""
    depth = 0
    for index in range(len(line) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(line[index], 0)
        if depth == 0:
            if index > 0 and line[index - 1] == " " and len(line) - index > 30:  # a clause, not a call's `(x)`
                return line[:index - 1], line[index + 1:-1]
            return line, ""
    return line, ""
