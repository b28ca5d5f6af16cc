"""Report writers: results and diffs in, text out (JSON, JUnit, Markdown, CSV; a diff as text or
JSON). None of them prints: the CLI decides where the text goes.

May import: `diff`, `traces`, `scoring`, `formats`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from agentdiff.core.reports.csv_report import append_csv, render_csv
from agentdiff.core.reports.json_report import render_json
from agentdiff.core.reports.junit import render_junit
from agentdiff.core.reports.markdown import render_markdown
from agentdiff.core.scoring.results import CaseResult

RENDERERS: dict[str, Callable[[Sequence[CaseResult]], str]] = {
    "json": render_json,
    "junit": render_junit,
    "markdown": render_markdown,
    "csv": render_csv,
}
REPORT_KINDS = tuple(RENDERERS)


def write_report(kind: str, cases: Sequence[CaseResult], path: Path) -> None:
    """Write one report; CSV appends (as AgentEvaluator does), the others replace the file."""
    if kind not in RENDERERS:
        raise ValueError(f"unknown report kind {kind!r}; choose from {', '.join(REPORT_KINDS)}")
    if kind == "csv":
        append_csv(cases, path)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RENDERERS[kind](cases), encoding="utf-8")


__all__ = ["REPORT_KINDS", "RENDERERS", "write_report"]
