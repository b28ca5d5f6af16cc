"""CSV in AgentEvaluator's `output_file` layout: one row per metric × invocation × run, appended.

Columns: eval_set_id, eval_id, metric_name, threshold, score, eval_status, prompt, expected_response,
actual_response, expected_tool_calls, actual_tool_calls. The header is written only when the file
is new, and parent folders are created, as ADK does.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.formats.genai_types import content_text
from agentdiff.core.scoring.results import CaseResult

COLUMNS = (
    "eval_set_id", "eval_id", "metric_name", "threshold", "score", "eval_status", "prompt",
    "expected_response", "actual_response", "expected_tool_calls", "actual_tool_calls",
)


def _number(value: Optional[float]) -> str:
    return "" if value is None else repr(float(value))


def _calls(invocation: Optional[Invocation]) -> str:
    return "" if invocation is None else "\n".join(call.adk_repr() for call in invocation.tool_calls())


def csv_rows(cases: Sequence[CaseResult]) -> list[list[str]]:
    rows: list[list[str]] = []
    for case in cases:
        names: list[str] = []
        for run in case.runs:
            names += [m.name for m in run.metrics if m.name not in names]
        for name in names:
            for run in case.runs:
                evaluation = next((m for m in run.metrics if m.name == name), None)
                if evaluation is None:
                    continue
                for index, scored in enumerate(evaluation.per_invocation):
                    actual = run.actual[index]
                    expected = run.expected[index] if run.expected is not None else None
                    prompt_source = expected if expected is not None else actual
                    rows.append([
                        case.eval_set_id or "",
                        case.eval_id,
                        name,
                        _number(evaluation.metric.threshold),
                        _number(scored.score),
                        scored.status.name,
                        content_text(prompt_source.user_content),
                        content_text(expected.final_response) if expected is not None else "",
                        content_text(actual.final_response),
                        _calls(expected),
                        _calls(actual),
                    ])
    return rows


def render_csv(cases: Sequence[CaseResult], header: bool = True) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(COLUMNS)
    writer.writerows(csv_rows(cases))
    return buffer.getvalue()


def append_csv(cases: Sequence[CaseResult], path: Path) -> None:
    """Append the rows (with the header when the file is new). A symlink is refused, never followed
    (`OSError` ELOOP): appending through it would write into whatever file it points to."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "a", encoding="utf-8", newline="") as handle:
        new = os.fstat(fd).st_size == 0
        handle.write(render_csv(cases, header=new))
