"""agents-cli's grade results (`results_<ts>.json`) as a run `compare` and `gate` read: one case per
graded case (named by its eval_case_id), each metric's score and explanation. agents-cli has no
thresholds, so a score is shown and compared, never a pass or a fail: a case is `not_evaluated`, or
`error` when a metric could not grade it (its error kept as the reason)."""

from __future__ import annotations

from typing import Any

from agentdiff.core.formats.agents_cli.grade_results import LoadedResults


def report_from_grade_results(loaded: LoadedResults) -> dict[str, Any]:
    cases = []
    for graded in loaded.graded():
        metrics = []
        for name, result in graded.metrics.items():
            failed = result.error_message is not None or result.score is None
            metrics.append({"name": result.metric_name or name, "score": result.score, "threshold": None,
                            "status": "not_evaluated" if failed else "informational", "scored": not failed,
                            "reason": result.error_message if failed else result.explanation})
        errored = [m["reason"] for m in metrics if m["status"] == "not_evaluated"]
        cases.append({"id": graded.key, "source": loaded.source.display, "eval_set_id": None, "eval_id": graded.key,
                      "agent": None, "mode": "live", "status": "error" if errored else "not_evaluated", "metrics": metrics,
                      "layers": [], "error": errored[0] if errored else None})
    return {"cases": cases, "run": {"source": "agents-cli eval grade"}}
