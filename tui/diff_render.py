"""A layer of a case diff as two Rich texts, Expected | Actual, with the differences highlighted.

Pure functions of the core's diff data; the detail pane lays them out side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from agentdiff.core.diff.model import (
    CaseDiff,
    Divergence,
    LayerStatus,
    TurnDiff,
    display_path,
    short,
)
from agentdiff.core.diff.sequence import WordOp
from agentdiff.core.diff.text_lines import is_multiline
from agentdiff.core.diff.tree import Change
from rich.table import Table
from rich.text import Text

from .text_rows import DELETED, INSERTED, line_words, marked, text_rows

CHANGED = "yellow"
DIM = "dim"
CURRENT = "reverse"
MAX_LINES = 40


Row = tuple[Text, Text]


@dataclass
class LayerView:
    """A layer as rows of (expected, actual): a row's two sides are laid out together, so each side
    wraps on its own and the next row starts level on both."""

    title: str
    rows: list[Row]
    status: str  # same | changed | absent

    @property
    def expected(self) -> Text:
        return _join([left for left, _ in self.rows])

    @property
    def actual(self) -> Text:
        return _join([right for _, right in self.rows])


def _rows(left: list[Text], right: list[Text]) -> list[Row]:
    width = max(len(left), len(right))
    return list(zip(left + [Text("")] * (width - len(left)), right + [Text("")] * (width - len(right))))


def _words(ops: Sequence[WordOp], side: str) -> Text:
    return _around_changes(line_words(ops, side))


def _around_changes(text: Text, context: int = 1) -> Text:
    """Only the lines with a highlighted span, and `context` lines around them, for long texts."""
    lines = text.split("\n")
    if len(lines) <= 2 * context + 4:
        return text
    marked = [i for i, line in enumerate(lines) if any(span.style in (DELETED, INSERTED) for span in line.spans)]
    if not marked:
        return Text("\n").join(lines[: 2 * context + 1] + [Text("…", style=DIM)])
    keep = sorted({j for i in marked for j in range(i - context, i + context + 1) if 0 <= j < len(lines)})
    out, last = [], -1
    for index in keep:
        if index != last + 1:
            out.append(Text("…", style=DIM))
        out.append(lines[index])
        last = index
    if last != len(lines) - 1:
        out.append(Text("…", style=DIM))
    return Text("\n").join(out)


def _mark(text: Text, current: bool, counts: bool = False) -> Text:
    prefix = Text("▶ " if current else "  ", style="bold cyan")
    if counts:
        prefix.append("● ", style="red")
    else:
        prefix.append("  ")
    return marked(prefix, text)


def _call(row_call, style: str = "") -> Text:
    if row_call is None:
        return Text("")
    text = Text(f"{row_call.name}({short(row_call.args, 80)})", style=style)
    if getattr(row_call, "simulated", False):
        text.append(" simulated", style=DIM)  # answered without the tool running (ADK's Environment Simulator)
    return text


def _change_rows(change: Change, indent: str = "    ") -> list[Row]:
    """A change as rows: its path and values; a text of several lines line by line, aligned."""
    where = display_path(change) or "(value)"
    if change.words and is_multiline(change.expected, change.actual):
        head = Text(f"{indent}{where}:", style=CHANGED)
        return [(head, head.copy()), *text_rows(str(change.expected or ""), str(change.actual or ""), indent)]
    return [_change_pair(change, indent)]


def _change_pair(change: Change, indent: str = "    ") -> tuple[Text, Text]:
    where = display_path(change) or "(value)"
    if change.words:
        left = Text(f"{indent}{where}:\n", style=CHANGED) + _words(change.words, "expected")
        right = Text(f"{indent}{where}:\n", style=CHANGED) + _words(change.words, "actual")
        return left, right
    left = Text(f"{indent}{where} ", style=CHANGED)
    right = Text(f"{indent}{where} ", style=CHANGED)
    if change.kind != "added":
        left.append(short(change.expected, 60), style=DELETED)
    else:
        left.append("(absent)", style=DIM)
    if change.kind != "removed":
        right.append(short(change.actual, 60), style=INSERTED)
    else:
        right.append("(absent)", style=DIM)
    return left, right


def _join(parts: list[Text]) -> Text:
    return Text("\n").join(parts) if parts else Text("")


def tool_calls_view(turn: TurnDiff, status: LayerStatus, current: Optional[Divergence]) -> LayerView:
    left: list[Text] = []
    right: list[Text] = []
    verdict = "" if turn.trajectory_matches is None else (" · trajectory matches" if turn.trajectory_matches else " · trajectory fails")
    for r, row in enumerate(turn.tool_calls):
        is_current = current is not None and current.layer == "tool_calls" and current.turn == turn.index and current.row == r
        style = {"same": DIM, "changed": CHANGED, "inserted": "green", "deleted": "red", "moved": "magenta"}[row.kind]
        e_text = _call(row.expected, style if row.kind != "inserted" else "")
        a_text = _call(row.actual, style if row.kind != "deleted" else "")
        if row.kind == "moved":
            a_text.append(f"  ↕ from call {row.expected_index + 1}", style="magenta")  # type: ignore[operator]
        if row.kind == "inserted":
            e_text = Text("(no such call)", style=DIM)
        if row.kind == "deleted":
            a_text = Text("(missing)", style="red")
        left.append(_mark(e_text, is_current, row.counts))
        right.append(_mark(a_text, is_current, row.counts))
        for change in row.changes + row.response_changes:
            for l, rr in _change_rows(change):
                left.append(l)
                right.append(rr)
    if not turn.tool_calls:
        left.append(Text("(no tool calls)", style=DIM))
        right.append(Text("(no tool calls)", style=DIM))
    return LayerView(f"2 tool_calls{verdict}", _rows(left, right), status.status)


def response_view(turn: TurnDiff, status: LayerStatus, current: Optional[Divergence]) -> LayerView:
    response = turn.response
    if response is None:
        return LayerView("3 response", [(Text("(no response)", style=DIM), Text("(no response)", style=DIM))], status.status)
    title = "3 response"
    if response.score is not None:
        title += f" · ROUGE-1 {response.score:.2f}"
        if response.threshold is not None:
            title += f" {'≥' if response.passed else '<'} {response.threshold:g}"
    is_current = current is not None and current.layer == "response" and current.turn == turn.index
    lines: list[Row] = []
    if response.expected is not None and response.actual is not None and response.expected != response.actual \
            and is_multiline(response.expected, response.actual):  # answers of several lines: line by line, aligned
        lines = text_rows(response.expected, response.actual)
        left, right = Text(""), Text("")
    else:
        left = _words(response.words, "expected") if response.expected is not None else Text("(none)", style=DIM)
        right = _words(response.words, "actual") if response.actual is not None else Text("(none)", style=DIM)
    if response.expected_intermediate or response.actual_intermediate:
        left += Text("\n\nintermediate: " + " | ".join(r.text for r in response.expected_intermediate), style=DIM)
        right += Text("\n\nintermediate: " + " | ".join(r.text for r in response.actual_intermediate), style=DIM)
    if any(response.has_output):  # the workflow's own output, beside ADK's final response: shown, not scored
        for side, (has, value) in (("left", (response.has_output[0], response.expected_output)), ("right", (response.has_output[1], response.actual_output))):
            line = Text("\n\nworkflow output: " + (short(value, 200) if has else "(not recorded)"), style=DIM)
            if side == "left":
                left += line
            else:
                right += line
    marked = bool(current and current.counts and is_current)
    if lines:
        rows = [(_mark(l, is_current and i == 0, marked and i == 0), _mark(r, is_current and i == 0)) for i, (l, r) in enumerate(lines)]
        if left.plain or right.plain:  # intermediate texts, a workflow's output: after the answer
            rows.append((_mark(left.copy(), False), _mark(right.copy(), False)))
        return LayerView(title, rows, status.status)
    return LayerView(title, [(_mark(left, is_current, marked), _mark(right, is_current))], status.status)


def request_view(turn: TurnDiff, status: LayerStatus, current: Optional[Divergence]) -> LayerView:
    left: list[Text] = []
    right: list[Text] = []
    for r, row in enumerate(turn.requests):
        is_current = current is not None and current.layer == "request" and current.turn == turn.index and current.index == r
        label = f"{row.agent} call {row.index + 1}"
        if row.kind == "same":
            left.append(_mark(Text(label + " · same", style=DIM), is_current))
            right.append(_mark(Text(label + " · same", style=DIM), is_current))
        elif row.kind == "inserted":
            left.append(_mark(Text(f"{label} · (not recorded)", style=DIM), is_current, True))
            right.append(_mark(Text(f"{label} · ran past the recording", style="green"), is_current, True))
        elif row.kind == "deleted":
            left.append(_mark(Text(f"{label} · recorded", style="red"), is_current, True))
            right.append(_mark(Text(f"{label} · never made", style="red"), is_current, True))
        else:
            left.append(_mark(Text(label, style=CHANGED), is_current, True))
            right.append(_mark(Text(label, style=CHANGED), is_current, True))
            for change in row.changes:
                for l, rr in _change_rows(change):
                    left.append(l)
                    right.append(rr)
    if turn.requests:
        notes = sorted({note for row in turn.requests for note in row.notes}) if any(row.kind != "same" for row in turn.requests) else []
        if notes:
            left.append(Text("normalised: " + "; ".join(notes), style=DIM))
    return LayerView("1 request", _rows(left, right), status.status)


def _instruction(request: dict) -> str:
    value = (request.get("config") or {}).get("system_instruction") or ""
    if isinstance(value, dict):
        return "\n".join(str(p.get("text", "")) for p in value.get("parts") or [] if isinstance(p, dict))
    return str(value)


def sent_view(turn: TurnDiff, status: LayerStatus) -> LayerView:
    """The requests the agent sent, where the baseline records none to compare them with (an eval
    set's): each call's messages and tools, and its system instruction where it differs from the call
    before, so a prompt edit shows in the run itself."""
    right: list[Text] = []
    shown_instruction = None
    for exchange in turn.actual_llm:
        request = exchange.request or {}
        contents = request.get("contents") or []
        tools = [d.get("name") for t in (request.get("config") or {}).get("tools") or [] if isinstance(t, dict)
                 for d in t.get("function_declarations") or [] if isinstance(d, dict)]
        head = Text(f"{exchange.agent} call {exchange.index + 1}", style="bold")
        head.append(f" · {len(contents)} message{'s' if len(contents) != 1 else ''}" + (f" · tools: {', '.join(map(str, tools))}" if tools else ""), style=DIM)
        right.append(head)
        instruction = _instruction(request).strip()
        if instruction and instruction != shown_instruction:
            lines = [line for line in instruction.splitlines() if line.strip()]
            right.append(Text("system: " + "\n".join(lines[:4]) + ("\n…" if len(lines) > 4 else ""), style=DIM))
            shown_instruction = instruction
    left = [Text(status.reason or "", style=DIM)]
    return LayerView("1 request · as sent", _rows(left, right), "absent")


def session_view(diff: CaseDiff, status: LayerStatus, current: Optional[Divergence]) -> LayerView:
    session = diff.session
    if session is None:
        return LayerView("4 session", [(Text(status.reason or "(no session)", style=DIM), Text(""))], status.status)
    left: list[Text] = []
    right: list[Text] = []
    for change in session.changes:
        for l, rr in _change_rows(change, indent=""):
            left.append(l)
            right.append(rr)
    for r, row in enumerate(session.events):
        if row.kind == "same":
            continue
        is_current = current is not None and current.layer == "session" and current.index == r
        index = row.expected_index if row.expected_index is not None else row.actual_index
        label = Text(f"event {index + 1} ({row.author}, turn {row.turn + 1}) {row.kind}", style=CHANGED)  # type: ignore[operator]
        left.append(_mark(label, is_current, True))
        right.append(_mark(label.copy(), is_current, True))
        for change in row.changes[:6]:
            for l, rr in _change_rows(change):
                left.append(l)
                right.append(rr)
    if not left:
        left.append(Text("same state and events", style=DIM))
        right.append(Text("same state and events", style=DIM))
    return LayerView("4 session", _rows(left, right), status.status)


def _step(step, style: str = "") -> Text:
    """`classify → refund`, `writer  ⑂ inner@1`, `merge = {"a": 1}`: one node run."""
    text = Text(step.path, style=style)
    if step.route is not None:
        text.append(f" → {step.route if isinstance(step.route, str) else short(step.route, 30)}", style=style or CHANGED)
    if step.has_output and not step.message_output:
        text.append(f" = {short(step.output, 40)}", style=DIM)
    if step.branch:
        text.append(f"  ⑂ {step.branch}", style=DIM)
    return text


def nodes_view(turn: TurnDiff, status: LayerStatus, current: Optional[Divergence]) -> LayerView:
    """The workflow's node runs of the turn, aligned like tool calls; with no node path in the
    baseline, what ran on the actual side."""
    title = "5 nodes"
    left: list[Text] = []
    right: list[Text] = []
    if not turn.nodes:  # no node path in the baseline: what ran, the node a check names (or the route's first) marked ▶
        here = current is not None and current.layer == "nodes" and current.turn == turn.index
        marked = (current.index if current.index is not None else current.row) if here else None
        left.append(Text(status.reason or "(no node ran)", style=DIM))
        right += [_mark(_step(step), i == marked) for i, step in enumerate(turn.actual_nodes)] or [Text("(no node ran)", style=DIM)]
        return LayerView(title, _rows(left, right), status.status)
    for r, row in enumerate(turn.nodes):
        is_current = current is not None and current.layer == "nodes" and current.turn == turn.index and current.row == r
        style = {"same": DIM, "changed": CHANGED, "inserted": "green", "deleted": "red", "moved": "magenta"}[row.kind]
        e_text = _step(row.expected, style) if row.expected else Text("(did not run)", style=DIM)
        a_text = _step(row.actual, style) if row.actual else Text("(did not run)", style="red")
        left.append(_mark(e_text, is_current))
        right.append(_mark(a_text, is_current))
        for change in row.changes:
            if change.path != ("node",):
                for l, rr in _change_rows(change):
                    left.append(l)
                    right.append(rr)
    return LayerView(title, _rows(left, right), status.status)


def layer_views(diff: CaseDiff, turn_index: int, current: Optional[Divergence]) -> list[LayerView]:
    """The views of every layer, `nodes` first (None when the case is not a workflow: no such layer)."""
    statuses = {s.layer: s for s in diff.layers}
    turn = diff.turns[turn_index] if 0 <= turn_index < len(diff.turns) else None
    workflow = turn is not None and bool(turn.nodes or turn.actual_nodes)  # nodes are a workflow's: no such layer otherwise
    views: list = [nodes_view(turn, statuses["nodes"], current) if "nodes" in statuses and workflow else None]
    for layer in ("request", "tool_calls", "response"):
        status = statuses[layer]
        if layer == "request" and status.status == "absent" and turn is not None and turn.actual_llm:
            views.append(sent_view(turn, status))
        elif status.status == "absent" or turn is None:
            number = {"request": 1, "tool_calls": 2, "response": 3}[layer]
            views.append(LayerView(f"{number} {layer}", [(Text(status.reason or "", style=DIM), Text(""))], "absent"))
        elif layer == "request":
            views.append(request_view(turn, status, current))
        elif layer == "tool_calls":
            views.append(tool_calls_view(turn, status, current))
        else:
            views.append(response_view(turn, status, current))
    views.append(session_view(diff, statuses["session"], current))
    return views


_PREVIEW_STYLES = {"+": "green", "-": "red", "@": "cyan", "\\": "dim"}


def diff_preview(diff: str) -> Table:
    """A unified diff (an accept's preview) as a grid: the sign in a column of its own, so a line that
    wraps stays indented under its text and keeps its colour (a wrapped `+` line never reads as context)."""
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=1, no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            grid.add_row("", Text(line, style="bold"))
            continue
        sign, text = (line[:1], line[1:]) if line[:1] in ("+", "-", " ") else ("", line)
        style = _PREVIEW_STYLES.get(line[:1], "")
        grid.add_row(Text(sign, style=style), Text(text, style=style))
    return grid
