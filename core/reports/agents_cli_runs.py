"""agents-cli's grade results (`results_<ts>.json`) as a run `compare` and `gate` read: one case per
graded case (named by its eval_case_id), each metric's score and explanation. agents-cli has no
thresholds, so a score is shown and compared, never a pass or a fail: a case is `not_evaluated`, or
`error` when a metric could not grade it (its error kept as the reason)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Optional

from agentdiff.core.formats.agents_cli.grade_results import LoadedResults

SOURCE = "agents-cli eval grade"
GRADE_RESULTS_DIR = Path("artifacts") / "grade_results"  # where `eval grade` writes, under an agents-cli project


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
    return {"cases": cases, "run": {"source": SOURCE}}


def is_grade_report(report: dict[str, Any]) -> bool:
    return (report.get("run") or {}).get("source") == SOURCE


def grade_result_files(roots: Iterable[Path]) -> list[Path]:
    """The `results_<ts>.json` files `eval grade` wrote (and a team may have committed) in these
    agents-cli projects, newest first."""
    found: dict[Path, None] = {}
    for root in roots:
        folder = root / GRADE_RESULTS_DIR
        try:
            found.update((path, None) for path in folder.glob("results_*.json") if path.is_file())
        except OSError:
            continue
    return sorted(found, key=lambda path: path.name, reverse=True)


def rekeyed(cases: dict[str, dict[str, Any]], ids_by_eval_id: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Grade results' cases (named by eval_case_id) under the ids of the dataset cases they grade: a
    name that is one dataset case's; the others are left out (two datasets' cases may share one)."""
    out = {}
    for key, case in cases.items():
        ids = ids_by_eval_id.get(key) or []
        if len(ids) == 1:
            out[ids[0]] = {**case, "id": ids[0]}
    return out


def score_changes(then: Optional[dict[str, Any]], now: Iterable[tuple[str, Optional[float]]]) -> list[str]:
    """`name then → now` for each metric scored in both."""
    before = {m.get("name"): m.get("score") for m in (then or {}).get("metrics") or [] if m.get("scored")}
    return [f"{name} {_number(before[name])} → {_number(score)}" for name, score in now if before.get(name) is not None]


def _number(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:g}"

