"""The diff criteria a case's `test_config.json` implies: match type, ignore_args, response threshold."""

from __future__ import annotations

from agentdiff.core.diff.model import (
    DiffCriteria,
)
from agentdiff.core.formats.eval_config import (
    RESPONSE_MATCH,
    TOOL_TRAJECTORY,
    EvalConfig,
    MatchType,
    eval_metrics,
)


def criteria_from_config(config: EvalConfig) -> DiffCriteria:
    """The match type, ignore_args and response threshold a case's config scores with."""
    from agentdiff.core.scoring.metrics import MetricNotEvaluated, trajectory_criterion

    match_type, ignore_args, threshold, trajectory = MatchType.EXACT, False, None, False
    for metric in eval_metrics(config):
        if metric.metric_name == TOOL_TRAJECTORY:
            try:
                criterion = trajectory_criterion(metric)
            except MetricNotEvaluated:
                continue
            match_type, ignore_args, trajectory = criterion.match_type, criterion.ignore_args, True
        elif metric.metric_name == RESPONSE_MATCH:
            threshold = metric.criterion_threshold()
    return DiffCriteria(match_type=match_type, ignore_args=ignore_args, response_threshold=threshold, trajectory_judged=trajectory)
