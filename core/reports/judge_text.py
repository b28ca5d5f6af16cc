"""The judge's reasons, as text: per invocation of a judged metric, the verdict, how the samples
split, the judge's rationale, and each rubric that was not met."""

from __future__ import annotations

import json
import re
from typing import Any, Optional, Sequence

from agentdiff.core.formats.eval_config import JUDGE_METRICS
from agentdiff.core.scoring.results import CaseResult, MetricResult

_REASONING = re.compile(r'"reasoning"\s*:\s*"((?:[^"\\]|\\.)*)"', re.DOTALL)
MAX_REASON = 300


def judge_details(case: CaseResult, metric: MetricResult) -> list[list[dict[str, Any]]]:
    """Each scored run's per-invocation judge details of `metric` (rubric scores, samples)."""
    if metric.name not in JUDGE_METRICS:
        return []
    runs = []
    for run in case.runs:
        evaluation = next((e for e in run.metrics if e.name == metric.name), None)
        if evaluation is not None and evaluation.details:
            runs.append(list(evaluation.details.get("per_invocation") or []))
    if not runs and metric.details:  # results read back without their runs
        runs.append(list(metric.details.get("per_invocation") or []))
    return runs


def reasoning(text: Optional[str]) -> str:
    """The judge's explanation in one line: its `reasoning` field when it answered in JSON."""
    if not text:
        return ""
    found = _REASONING.search(text)
    if found:
        try:
            text = json.loads(f'"{found.group(1)}"')
        except ValueError:
            text = found.group(1)
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "…"


def sample_split(samples: Sequence[dict[str, Any]]) -> str:
    """`2/3 valid` for verdict samples (scores 1 or 0), else the samples' scores."""
    scores = [s.get("score") for s in samples]
    if len(scores) < 2:
        return ""
    if all(score in (0.0, 1.0, None) for score in scores):
        unparsed = scores.count(None)
        return f"{scores.count(1.0)}/{len(scores)} valid" + (f", {unparsed} unreadable" if unparsed else "")
    return "samples " + ", ".join("n/a" if s is None else f"{s:g}" for s in scores)


def judge_lines(case: CaseResult, metric: MetricResult, only_failing: bool = True, turn_only: Optional[int] = None) -> list[str]:
    """One line per judged invocation (with `only_failing`, those that did not pass; with `turn_only`,
    that turn's), and one per rubric it did not meet."""
    from agentdiff.core.reports.values import format_score

    runs = judge_details(case, metric)
    lines: list[str] = []
    for r, per_invocation in enumerate(runs):
        scores = _scores(case, metric, r)
        for turn, detail in enumerate(per_invocation):
            detail = detail or {}  # a turn the judge gave no result for
            score = scores[turn] if turn < len(scores) else None
            if only_failing and score is not None and metric.threshold is not None and score >= metric.threshold:
                continue
            if turn_only is not None and turn != turn_only:
                continue
            where = f"turn {turn + 1}" + (f" of run {r + 1}" if len(runs) > 1 else "")
            split = sample_split(detail.get("samples") or [])
            said = next((reasoning(s.get("text")) for s in detail.get("samples") or [] if s.get("score") == score and s.get("text")), "")
            said = said or next((reasoning(s.get("text")) for s in detail.get("samples") or [] if s.get("text")), "")
            head = f"{where}: {format_score(score)}" + (f" ({split})" if split else "")
            rubrics = [rubric for rubric in detail.get("rubric_scores") or [] if rubric.get("score") != 1.0]
            if said and not detail.get("rubric_scores"):
                head += f" · judge: {said}"
            lines.append(head)
            for rubric in rubrics:
                verdict = "no" if rubric.get("score") == 0.0 else "unclear" if rubric.get("score") is None else format_score(rubric["score"])
                lines.append(f"  {rubric.get('rubric_id')}: {verdict} · {reasoning(rubric.get('rationale'))}")
    return lines


def _scores(case: CaseResult, metric: MetricResult, run_index: int) -> list[Optional[float]]:
    scored = [run for run in case.runs if any(e.name == metric.name and e.details for e in run.metrics)]
    if run_index < len(scored):
        evaluation = next(e for e in scored[run_index].metrics if e.name == metric.name)
        return [p.score for p in evaluation.per_invocation]
    return list(metric.per_invocation)
