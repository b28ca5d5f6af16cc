"""Re-scoring stored actual invocations (ADK `*.evalset_result.json`) with zero agent calls."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional, Sequence

from agentdiff.core.formats.adk_results import (
    EvalCaseResult,
    EvalSetResult,
    EvalStatus,
    LoadedResults,
    load_eval_set_result,
)
from agentdiff.core.formats.adk_rules import RULES_NEWEST, AdkRules
from agentdiff.core.formats.eval_config import (
    EFFICIENCY_METRICS,
    JUDGE_METRICS,
    VERTEX_METRICS,
    EvalConfig,
    EvalMetric,
    eval_metrics,
)
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.source_file import display_path
from agentdiff.core.project.case_ids import CaseIds
from agentdiff.core.scoring.results import CaseResult, CaseStatus, RunRecord
from agentdiff.core.scoring.verdicts import (
    aggregate,
    case_verdict,
    failed_run,
    score_run,
)


def stored_metrics(case: EvalCaseResult, rules: AdkRules = RULES_NEWEST) -> list[EvalMetric]:
    """The metrics a stored result was scored with, in its order (from ADK 2.10, the efficiency ones
    always added)."""
    metrics = [
        EvalMetric(
            metric_name=m.metric_name,
            threshold=m.threshold,
            criterion=m.criterion,
            custom_function_path=m.custom_function_path,
        )
        for m in case.overall_eval_metric_results
        if rules.efficiency_metrics or m.metric_name not in EFFICIENCY_METRICS  # ADK 2.10+ added them, not the config
    ]
    named = {m.metric_name for m in metrics}
    if rules.efficiency_metrics:
        metrics.extend(EvalMetric(metric_name=name) for name in EFFICIENCY_METRICS if name not in named)
    return metrics


def _run(case: EvalCaseResult, metrics: Sequence[EvalMetric], rules: AdkRules) -> RunRecord:
    pairs = case.eval_metric_result_per_invocation
    actual = [p.actual_invocation for p in pairs]
    expected_items = [p.expected_invocation for p in pairs]
    expected = None if any(e is None for e in expected_items) else expected_items
    if not pairs and not case.overall_eval_metric_results and case.final_eval_status is EvalStatus.FAILED:
        return failed_run(actual, expected, "inference failed: ADK recorded the run as failed with no metric results")
    return score_run(metrics, actual, expected, rules, _as_judged(case, metrics))


def _status_at(score: Optional[float], threshold: Optional[float], stored: EvalStatus) -> str:
    if score is None or threshold is None:
        return stored.name.lower()
    return "passed" if score >= threshold else "failed"


def _as_judged(case: EvalCaseResult, metrics: Sequence[EvalMetric]) -> dict[str, Any]:
    """The judged metrics of a stored result as ADK's judge scored them (the judge is not asked
    again): each score kept, its verdict taken at the threshold now in force, rubric rationales kept."""
    judged: dict[str, Any] = {}
    stored = {m.metric_name: m for m in case.overall_eval_metric_results}
    for metric in metrics:
        name = metric.metric_name
        if name not in JUDGE_METRICS | VERTEX_METRICS or name not in stored:
            continue
        threshold = metric.criterion_threshold() if (metric.criterion or metric.threshold is not None) else None
        per_invocation = []
        for pair in case.eval_metric_result_per_invocation:
            result = next((r for r in pair.eval_metric_results if r.metric_name == name), None)
            if result is None:
                per_invocation = []
                break
            rubrics = (result.details or {}).get("rubric_scores") if isinstance(result.details, dict) else None
            per_invocation.append({"score": result.score, "status": _status_at(result.score, threshold, result.eval_status),
                                   "rubric_scores": rubrics or [], "samples": []})
        overall = stored[name]
        judged[name] = {"score": overall.score, "status": _status_at(overall.score, threshold, overall.eval_status),
                        "per_invocation": per_invocation, "reason": None if overall.score is not None else
                        "ADK's judge gave no score in the stored result"}
    return judged


def app_name_of(loaded: LoadedResults) -> Optional[str]:
    """`<agents_dir>/<app>/.adk/eval_history/<file>` names the app; else parse the result id."""
    path = loaded.source.path
    if path.parent.name == "eval_history" and path.parent.parent.name == ".adk":
        return path.parent.parent.parent.name
    result = loaded.result
    match = re.match(rf"^(.*)_{re.escape(result.eval_set_id)}_[0-9.]+$", result.eval_set_result_id)
    return match.group(1) if match else None


def rescore_result(
    loaded: LoadedResults, config: Optional[EvalConfig] = None, case_ids: Optional[CaseIds] = None, rules: AdkRules = RULES_NEWEST,
) -> list[CaseResult]:
    """Score every eval case of one results file as `rules`' ADK version scores; the runs of one
    eval_id are grouped.

    A case is named as `run` names it when `case_ids` knows its eval set file; else `<eval_set_id>::<eval_id>`."""
    result: EvalSetResult = loaded.result
    groups: dict[str, list[EvalCaseResult]] = {}
    for case in result.eval_case_results:
        groups.setdefault(case.eval_id, []).append(case)
    configured = eval_metrics(config, rules) if config is not None else None
    app = app_name_of(loaded)
    cases: list[CaseResult] = []
    for eval_id, stored_runs in groups.items():
        runs = tuple(_run(case, configured or stored_metrics(case, rules), rules) for case in stored_runs)
        metrics = aggregate(runs)
        status, error = case_verdict(runs, metrics)
        set_id = stored_runs[0].eval_set_id or result.eval_set_id
        cases.append(
            CaseResult(
                id=(case_ids.find(set_id, eval_id) if case_ids else None) or f"{set_id}::{eval_id}",
                source=loaded.source.display,
                eval_set_id=set_id,
                eval_id=eval_id,
                agent=app,
                mode="score",
                status=status,
                metrics=metrics,
                error=error,
                runs=runs,
                scored_as=None if status is CaseStatus.ERROR else rules.label,
            )
        )
    return cases


def rescore_files(
    paths: Sequence[Path], config: Optional[EvalConfig] = None, root: Optional[Path] = None, case_ids: Optional[CaseIds] = None,
    rules: AdkRules = RULES_NEWEST,
) -> tuple[list[CaseResult], list[LoadError]]:
    cases: list[CaseResult] = []
    errors: list[LoadError] = []
    for path in paths:
        loaded, load_errors = load_eval_set_result(path, display_path(path, root))
        errors.extend(load_errors)
        if loaded is not None:
            cases.extend(rescore_result(loaded, config, case_ids, rules))
    return cases, errors

