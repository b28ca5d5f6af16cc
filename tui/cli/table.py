"""Plain-text tables of case results for the terminal, as `score` and `run` print them (readable
when piped, too)."""

from __future__ import annotations

from typing import Sequence

from agentdiff.core.diff.clusters import clusters
from agentdiff.core.formats.eval_config import EFFICIENCY_METRICS
from agentdiff.core.reports.judge_text import judge_lines
from agentdiff.core.reports.text import format_score, usage_line
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus, summarize

from .color import paint_status
from ..safe_text import one_line

GLYPHS = {
    CaseStatus.PASSED: "✓",
    CaseStatus.FAILED: "✗",
    CaseStatus.ERROR: "!",
    CaseStatus.FLAKY: "~",
    CaseStatus.NOT_EVALUATED: "?",
    CaseStatus.NEW: "+",
    CaseStatus.INCONCLUSIVE: "≈",
}


CHECK = "check: "  # a journey check's metric name begins so (`core.run.journey`)


def _metric_cell(case: CaseResult) -> str:
    cells = []
    checks = [m for m in case.metrics if m.name.startswith(CHECK)]
    for metric in case.metrics:
        if metric.status is MetricStatus.INFORMATIONAL and metric.name not in EFFICIENCY_METRICS and metric.score is not None:
            cells.append(f"{one_line(metric.name)} {format_score(metric.score)}")  # a score that decides nothing (agents-cli's)
            continue
        if metric.status is MetricStatus.INFORMATIONAL or (metric.name.startswith(CHECK) and metric.status is MetricStatus.PASSED):
            continue
        if metric.status is MetricStatus.NOT_EVALUATED:
            cells.append(f"{one_line(metric.name)} n/a")
        else:
            mark = "" if metric.status is MetricStatus.PASSED else " ✗"
            cells.append(f"{one_line(metric.name)} {format_score(metric.score)}/{format_score(metric.threshold)}{mark}")
    passed = sum(m.status is MetricStatus.PASSED for m in checks)
    if checks:  # the checks that hold, as one count
        cells.append(f"checks {passed}/{len(checks)} held")
    return "  ".join(cells)


def render_case_table(cases: Sequence[CaseResult], color: bool = False, prices=None) -> str:
    """The table; with `color`, each verdict's glyph and word in its colour (the padding stays outside
    the colour codes, so the columns line up as without)."""
    lines: list[str] = []
    width = max((len(one_line(case.id)) for case in cases), default=0)
    for case in cases:
        runs = f" ({len(case.runs)} runs)" if len(case.runs) > 1 else ""
        verdict = paint_status(f"{GLYPHS[case.status]} {case.status.value}", case.status, color)
        padding = " " * (13 - len(case.status.value))
        lines.append(f"{verdict}{padding} {one_line(case.id):<{width}}  {_metric_cell(case)}{runs}")
        if case.origin:  # (a traced conversation scored against it: several may map to one case)
            lines.append(f"    from {one_line(case.origin)}")
        if case.pass_rate is not None and (not case.error or case.status is CaseStatus.FLAKY):  # the rate beside the plain verdict
            lines.append(f"    {one_line(case.pass_rate.line())}")
        if case.error:  # where in the project's code, when it is there: `agent.py:34: SyntaxError: …`
            lines.append(f"    {one_line(case.located_error)}")
        elif case.status is not CaseStatus.PASSED:
            # the divergence the case leads with first, as `diff` names it
            changed = [layer.first_divergence for layer in sorted(case.layers, key=lambda layer: not layer.lead)
                       if layer.status == "changed" and layer.first_divergence]
            lead = changed[0] if changed else None
            said = None  # the check the lead divergence already names: said once, with its line
            for metric in case.metrics:
                if lead and metric.status is MetricStatus.FAILED and metric.name.startswith(CHECK) and metric.reason \
                        and lead.endswith(f"check {metric.name[len(CHECK):]}: {metric.reason}"):
                    said, lead = metric, f"{lead}  ({(metric.details or {}).get('source', '')})"
                    break
            if lead:
                lines.append(f"    {one_line(lead)}")
            for metric in case.metrics:
                if metric is said:
                    continue
                if metric.status is MetricStatus.FAILED and metric.name.startswith(CHECK) and metric.reason:
                    lines.append(f"    {one_line(metric.name)}: {one_line(metric.reason)}  ({one_line(str((metric.details or {}).get('source', '')))})")
                elif metric.status is MetricStatus.FAILED:
                    lines += [f"    {one_line(metric.name)} {one_line(line)}" if not line.startswith(" ") else f"      {one_line(line.strip())}"
                              for line in judge_lines(case, metric)]
        if not case.error:
            lines += [f"    {one_line(m.name)} not evaluated: {one_line(m.reason)}" for m in case.metrics if m.status is MetricStatus.NOT_EVALUATED and m.reason]
    grouped = clusters(cases)
    if grouped and any(len(members) > 1 for _, members in grouped):  # worth a look: several broke the same way
        lines += ["", "failure clusters (by first divergence):"]
        for signature, members in grouped:
            names = ", ".join(one_line(m.eval_id) for m in members[:4]) + (" …" if len(members) > 4 else "")
            lines.append(f"  {len(members):>3}  {one_line(signature)}  ({names})")
    summary = summarize(cases)
    lines.append("")
    scored_as = sorted({case.scored_as for case in cases if case.scored_as})
    lines.append(
        f"{summary.total} case{'' if summary.total == 1 else 's'}: {summary.passed} passed, {summary.failed} failed, {summary.error} error, "
        f"{summary.not_evaluated} not evaluated, {summary.flaky} flaky" + (f", {summary.new} new" if summary.new else "")
        + (f", {summary.inconclusive} inconclusive" if summary.inconclusive else "")
        + (f" · scored as {' and '.join(scored_as)} scores" if scored_as else "")
    )
    spent = usage_line(cases, prices)
    if spent:
        lines.append(spent)
    return "\n".join(lines) + "\n"
