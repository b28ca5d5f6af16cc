"""Markdown, in the layout of ADK's conformance report: summary table per mode, a results table
with one column per mode, then the details of each failure."""

from __future__ import annotations

import platform
from typing import Sequence

from agentdiff.core import __version__
from agentdiff.core.diff.clusters import clusters
from agentdiff.core.reports.text import case_problem, format_score, usage_line
from agentdiff.core.scoring.results import CaseResult, CaseStatus

_CELL = {CaseStatus.PASSED: "✅ PASS", CaseStatus.FLAKY: "⚠️ FLAKY", CaseStatus.ERROR: "❌ ERROR",
         CaseStatus.NOT_EVALUATED: "❌ NOT EVALUATED", CaseStatus.FAILED: "❌ FAIL",
         CaseStatus.NEW: "🆕 NEW", CaseStatus.INCONCLUSIVE: "❔ INCONCLUSIVE"}


def _one_line(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


#: The report's first line (how a later run knows the file is a report it may write over).
TITLE = "# agentdiff Test Report"


def render_markdown(cases: Sequence[CaseResult]) -> str:
    modes = sorted({case.mode for case in cases})
    out = [
        TITLE,
        "",
        "## Summary",
        "",
        f"- **agentdiff Version**: {__version__}",
        f"- **Language**: python {platform.python_version()}",
        *([f"- **Model usage**: {usage_line(cases)[len('tokens: '):]} tokens"] if usage_line(cases) else []),
        "",
        "| Mode | Total Tests | Passed | Failed | Success Rate |",
        "|------|-------------|--------|--------|--------------|",
    ]
    for mode in modes:
        members = [c for c in cases if c.mode == mode]
        passed = sum(c.status is CaseStatus.PASSED for c in members)
        rate = 100.0 * passed / len(members) if members else 0.0
        out.append(f"| {mode} | {len(members)} | {passed} | {len(members) - passed} | {rate:.1f}% |")
    out += ["", "## Test Results", "", "| Category | Test Name | Description | " + " | ".join(modes) + " |",
            "|" + "---|" * (3 + len(modes))]
    rows: dict[tuple[str, str], dict[str, CaseResult]] = {}
    for case in cases:
        rows.setdefault((case.category, case.eval_id), {})[case.mode] = case
    for (category, name), by_mode in rows.items():
        first = next(iter(by_mode.values()))
        description = first.description or ", ".join(
            f"{m.name} {format_score(m.score)}" for m in first.metrics if m.threshold is not None
        )
        cells = [_CELL[by_mode[mode].status] if mode in by_mode else "N/A" for mode in modes]
        out.append(f"| {_one_line(category)} | {_one_line(name)} | {_one_line(description)} | " + " | ".join(cells) + " |")
    grouped = clusters(cases)
    if grouped:
        out += ["", "## Failure Clusters", "", "| Cases | First divergence | Examples |", "|---|---|---|"]
        for signature, members in grouped:
            examples = ", ".join(_one_line(m.eval_id) for m in members[:3]) + (" …" if len(members) > 3 else "")
            out.append(f"| {len(members)} | {_one_line(signature)} | {examples} |")
    failures = [c for c in cases if c.status is not CaseStatus.PASSED]
    if failures:
        out += ["", "## Failed Tests Details"]
        for case in failures:
            out += ["", f"### {case.category}/{case.eval_id} ({case.mode})", ""]
            if case.description:
                out += [f"**Description**: {_one_line(case.description)}", ""]
            out += ["**Error**:", "", "```", case_problem(case), "```"]
            changed = [layer for layer in case.layers if layer.status == "changed"]
            if changed:
                out += ["", "| Layer | First divergence |", "|---|---|"]
                out += [f"| {layer.layer} | {_one_line(layer.first_divergence or '')} |" for layer in changed]
    return "\n".join(out) + "\n"
