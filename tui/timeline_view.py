"""The timeline of a turn (`6`): its model and tool calls on a time axis, each with its latency, who
made it and its tokens, the compared side (a kept run, `B`) beside the run now when it kept timings."""

from __future__ import annotations

from typing import Optional, Sequence

from agentdiff.core.traces.model import Trace
from agentdiff.core.traces.timeline import Span, turn_spans, window
from rich.text import Text

from .diff_render import LayerView
from .text_rows import hanging

BAR = 24  # cells of the time axis
STYLES = {"model": "cyan", "tool": "magenta"}
NO_TIMINGS = "no timings (a run made now keeps them)"
BASELINE = "the baseline keeps no timings (B: a kept run's beside these)"


def timeline_view(expected: Optional[Trace], actual: Optional[Trace], turn: int) -> LayerView:
    """The turn's calls of each side, in the order they began, on one scale (the longer side's time)."""
    left = turn_spans(_turn(expected, turn))
    right = turn_spans(_turn(actual, turn))
    if not left and not right:
        return LayerView("6 timeline", [(Text(NO_TIMINGS, style="dim"), Text(""))], "absent")
    spans = right or left
    start, end = window(spans)
    models = sum(span.kind == "model" for span in spans)
    title = (f"6 timeline · {models} model call{'s' if models != 1 else ''} · {len(spans) - models} tool "
             f"call{'s' if len(spans) - models != 1 else ''} · {duration(end - start)}")
    scale = max(_length(left), _length(right)) or 1.0
    if not left:  # the run's calls alone, the whole width (drawn stacked: a row the same on both sides shows once)
        note = Text(BASELINE, style="dim")
        return LayerView(title, [(note, note.copy()), *((line, line.copy()) for line in (_line(right, i, scale) for i in range(len(right))))], "info")
    rows = [(_line(left, index, scale), _line(right, index, scale)) for index in range(max(len(left), len(right)))]
    return LayerView(title, rows, "info")


def duration(seconds: float) -> str:
    """`820 ms`, `1.24 s`."""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _turn(trace: Optional[Trace], index: int):
    return trace.turns[index] if trace is not None and 0 <= index < len(trace.turns) else None


def _length(spans: Sequence[Span]) -> float:
    start, end = window(spans)
    return end - start


def _line(spans: Sequence[Span], index: int, scale: float) -> Text:
    """`▕  ████      ▏ 0.82 s  model gemini-2.5-flash · home_automation · 296→12 tok`."""
    if index >= len(spans):
        return Text("")
    span, origin = spans[index], spans[0].start
    offset = min(BAR - 1, int((span.start - origin) / scale * BAR))
    length = max(1, min(BAR - offset, round(span.seconds / scale * BAR)))
    style = "red" if span.error else STYLES[span.kind]
    line = Text("▕", style="dim")
    line.append(" " * offset)
    line.append("█" * length, style=style)
    line.append(" " * (BAR - offset - length))
    line.append("▏", style="dim")
    line.append(f" {duration(span.seconds):>7}  ", style="bold")
    line = hanging(line, Text(f"{span.kind} {span.name}", style=style))  # wrapped: under the name, past the bar
    if span.by:
        line.append(f" · {span.by}", style="dim")
    if span.prompt_tokens is not None or span.output_tokens is not None:
        line.append(f" · {span.prompt_tokens or 0}→{span.output_tokens or 0} tok", style="dim")
    if span.error:
        line.append(f" · {span.error}", style="red")
    return line
