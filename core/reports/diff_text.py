"""One case's layered diff as plain text, for terminals, logs and coding assistants.

Word changes are written as git's `--word-diff` writes them: `[-removed-]{+added+}`.
"""

from __future__ import annotations

from typing import Optional, Sequence

from agentdiff.core.diff.model import (
    CaseDiff,
    ToolCallRow,
    describe_change,
    display_path,
    short,
)
from agentdiff.core.diff.nodes import node_summary
from agentdiff.core.diff.sequence import WordOp
from agentdiff.core.diff.tree import Change

_ROW_MARK = {"same": " ", "changed": "~", "inserted": "+", "deleted": "-", "moved": "↕"}


def word_markup(ops: Sequence[WordOp]) -> str:
    out = []
    for op in ops:
        if op.op == "equal":
            out.append(op.text)
        elif op.op == "delete":
            out.append(f"[-{op.text}-]")
        else:
            out.append(f"{{+{op.text}+}}")
    return "".join(out)


def changed_lines(markup: str, context: int = 1) -> str:
    """Only the lines of a word-diff markup that change, with `context` lines around them."""
    lines = markup.splitlines() or [markup]
    marked = [i for i, line in enumerate(lines) if "[-" in line or "{+" in line]
    if len(lines) <= 2 * context + 3 or not marked:
        return markup
    keep = sorted({j for i in marked for j in range(i - context, i + context + 1) if 0 <= j < len(lines)})
    out, last = [], -1
    for index in keep:
        if index != last + 1:
            out.append("…")
        out.append(lines[index])
        last = index
    if last != len(lines) - 1:
        out.append("…")
    return "\n".join(out)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _change_lines(change: Change, prefix: str) -> list[str]:
    if change.words:
        head = display_path(change) or "(value)"
        return [f"{prefix}{head}:", _indent(changed_lines(word_markup(change.words)), prefix + "    ")]
    return [prefix + describe_change(change)]


def _call_text(row: ToolCallRow) -> str:
    call = row.actual or row.expected
    assert call is not None
    return f"{call.name}({short(call.args, 70)})" + (" (simulated)" if call.simulated else "")


def render_diff_text(diff: CaseDiff, title: Optional[str] = None, actual_source: Optional[str] = None) -> str:
    lines: list[str] = [title or diff.case_id]
    if actual_source:
        lines.append(f"actual: {actual_source}")
    criteria = diff.criteria
    judged = [f"tool calls {criteria.match_type.name}" + (" (names only)" if criteria.ignore_args else "")] if criteria.trajectory_judged else []
    if criteria.response_threshold is not None:
        judged.append(f"response ROUGE-1 ≥ {criteria.response_threshold:g}")
    lines.append(f"judged by: {' · '.join(judged) or 'neither tool calls nor a response match (its other metrics decide)'}")
    if diff.error:
        lines.append(f"run error: {diff.error}")
    lines.append("")
    width = max(len(status.layer) for status in diff.layers) if diff.layers else 0
    for status in diff.layers:
        detail = status.summary or status.reason or ""
        lines.append(f"  {status.layer:<{width}}  {status.status:<7}  {detail}".rstrip())
    lines.append("")
    first = diff.first_divergence
    if first is None:
        lines.append("no divergences" if not diff.error else "no divergences before the error")
        return "\n".join(lines) + "\n"
    lines.append(f"first divergence: {first.summary}")
    if first.source is not None:
        lines.append(f"  expected value at {first.source}")
    for turn in diff.turns:
        rows_differ = any(row.differs for row in turn.tool_calls)
        requests_differ = any(row.kind != "same" for row in turn.requests)
        response_differs = turn.response is not None and not turn.response.same
        nodes_differ = any(row.kind != "same" for row in turn.nodes)
        if not (rows_differ or requests_differ or response_differs or nodes_differ or turn.missing):
            continue
        lines.append("")
        head = f"turn {turn.index + 1}"
        if turn.user_text:
            head += f"  user: {short(turn.user_text, 70)}"
        if turn.missing:
            head += f"  (no such turn on the {turn.missing} side)"
        lines.append(head)
        if nodes_differ:
            lines.append("  nodes (what ran: shown, not scored)")
            for row in turn.nodes:
                said = node_summary(row)
                step = row.actual or row.expected
                lines.append(f"    {_ROW_MARK[row.kind]} {said or (step.path if step else '')}")
        if requests_differ:
            shown_changes: tuple = ()
            lines.append("  request")
            for row in turn.requests:
                label = f"{row.agent} call {row.index + 1}"
                if row.kind == "inserted":
                    lines.append(f"    + {label}: ran past the recording")
                elif row.kind == "deleted":
                    lines.append(f"    - {label}: recorded but never made")
                elif row.kind == "changed" and row.changes == shown_changes:
                    lines.append(f"    ~ {label}: the same change as above")
                elif row.kind == "changed":
                    lines.append(f"    ~ {label}")
                    for change in row.changes:
                        lines += _change_lines(change, "        ")
                    shown_changes = row.changes
        if rows_differ:
            verdict = "" if turn.trajectory_matches is None else (" (trajectory matches)" if turn.trajectory_matches else " (trajectory fails)")
            lines.append(f"  tool_calls{verdict}")
            for row in turn.tool_calls:
                mark = _ROW_MARK[row.kind]
                counts = "   ← decides the verdict" if row.counts else ""
                if row.kind == "moved":
                    lines.append(f"    {mark} {_call_text(row)}  moved from call {row.expected_index + 1} to {row.actual_index + 1}{counts}")  # type: ignore[operator]
                elif row.kind == "changed":
                    lines.append(f"    {mark} {row.expected.name if row.expected else row.name}{counts}")
                    for change in row.changes:
                        lines += _change_lines(change, "        ")
                else:
                    lines.append(f"    {mark} {_call_text(row)}{counts}")
                for change in row.response_changes:
                    lines += _change_lines(change, "        tool ")
        if response_differs:
            response = turn.response
            assert response is not None
            score = ""
            if response.score is not None:
                score = f"  ROUGE-1 {response.score:.2f}"
                if response.threshold is not None:
                    score += f" {'≥' if response.passed else '<'} {response.threshold:g}"
            lines.append(f"  response{score}")
            lines.append(_indent(changed_lines(word_markup(response.words)) or "(empty)", "    "))
            if all(response.has_output) and response.expected_output != response.actual_output:  # shown, not scored
                lines.append(f"    workflow output {short(response.expected_output)} → {short(response.actual_output)}")
    if diff.session is not None and not diff.session.same:
        lines.append("")
        lines.append("session")
        for change in diff.session.changes:
            lines += _change_lines(change, "  ")
        for row in diff.session.events:
            if row.kind == "same":
                continue
            index = row.expected_index if row.expected_index is not None else row.actual_index
            label = f"  {_ROW_MARK[row.kind]} event {index + 1} ({row.author}, turn {row.turn + 1})"  # type: ignore[operator]
            lines.append(label)
            for change in row.changes:
                lines += _change_lines(change, "      ")
    return "\n".join(lines) + "\n"
