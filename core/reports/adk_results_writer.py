"""Results ADK can read: a run's EvalSet cases as ADK 2.13 `EvalSetResult` files in each app's
`.adk/eval_history/` (`<agents_dir>/<app>/.adk/eval_history/<app>_<eval_set_id>_<time>.evalset_result.json`),
as ADK's `LocalEvalSetResultsManager` writes them, so `adk web`'s eval tab, `agentdiff score` and
other tools that read ADK's results see agentdiff's runs.

Each repeat of a case is one `EvalCaseResult` (as ADK's evaluator records them): its overall metric
results, and per invocation the actual and expected invocation with each metric's result. Statuses
are ADK's integers (1 passed, 2 failed, 3 not evaluated, 4 informational). For agents on an ADK before
1.22 the file holds the JSON as a JSON string, as those versions write and read it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Sequence

from agentdiff.core.baselines.journal import atomic_write
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus

EVAL_HISTORY = Path(".adk") / "eval_history"
_METRIC_STATUS = {MetricStatus.PASSED: 1, MetricStatus.FAILED: 2, MetricStatus.NOT_EVALUATED: 3, MetricStatus.INFORMATIONAL: 4}
_CASE_STATUS = {CaseStatus.PASSED: 1, CaseStatus.FAILED: 2}


def _metric(metric, score, status) -> dict[str, Any]:
    definition = metric.metric
    return {"metric_name": definition.metric_name, "threshold": definition.threshold, "criterion": definition.criterion,
            "custom_function_path": definition.custom_function_path, "score": score,
            "eval_status": _METRIC_STATUS.get(status, 3)}


def _dump(invocation) -> Any:
    return invocation.model_dump(mode="json") if invocation is not None else None


def case_results(result: CaseResult) -> list[dict[str, Any]]:
    """One ADK `EvalCaseResult` (as data) per repeat of an EvalSet case that kept its invocations."""
    out = []
    for repeat, record in enumerate(result.runs):
        per_invocation = []
        for index, actual in enumerate(record.actual):
            expected = record.expected[index] if record.expected is not None and index < len(record.expected) else None
            scores = []
            for metric in record.metrics:
                one = metric.per_invocation[index] if index < len(metric.per_invocation) else None
                scores.append(_metric(metric, one.score if one else None, one.status if one else MetricStatus.NOT_EVALUATED))
            per_invocation.append({"actual_invocation": _dump(actual), "expected_invocation": _dump(expected), "eval_metric_results": scores})
        out.append({
            "eval_set_file": result.eval_set_id, "eval_set_id": result.eval_set_id or "", "eval_id": result.eval_id,
            "final_eval_status": _CASE_STATUS.get(record.status, 3),
            "overall_eval_metric_results": [_metric(m, m.score, m.status) for m in record.metrics],
            "eval_metric_result_per_invocation": per_invocation,
            "session_id": f"agentdiff-{result.eval_id}-{repeat + 1}", "session_details": None, "user_id": "agentdiff",
        })
    return out


def adk_case_results(runs: Sequence[CaseRun]) -> list[dict[str, Any]]:
    return [item for run in runs for item in case_results(run.result)]


def app_of(result: CaseResult) -> str:
    return (result.agent or "agent").split("/")[0]


def _parts(relative: Any) -> list[Path]:
    """`a/b/c` → [`a`, `a/b`, `a/b/c`]."""
    parts = Path(relative).parts
    return [Path(*parts[: n + 1]) for n in range(len(parts))]


def write_adk_results(cases: Sequence[CaseResult], agents_dir: Path) -> list[Path]:
    """Each app's EvalSet cases, one file per (app, eval set); conformance and unrun cases are left
    out (ADK has no results for them). Returns the files written."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for case in cases:
        if case.mode == "live" and case.runs and case.eval_set_id and "::" in case.id:
            groups.setdefault((app_of(case), case.eval_set_id), []).extend(case_results(case))
    versions = {(app_of(c), c.eval_set_id): c.scored_as for c in cases if c.scored_as}
    written = []
    for (app, eval_set_id), results in sorted(groups.items()):
        stamp = time.time()
        result_id = f"{app}_{eval_set_id}_{stamp}".replace("/", "_")
        data = {"eval_set_result_id": result_id, "eval_set_result_name": result_id, "eval_set_id": eval_set_id,
                "eval_case_results": results, "creation_timestamp": stamp}
        # the file's name as ADK names it, where a name can hold it: no NUL or other control character
        # (an eval_set_id may hold them; the id inside the file stays as written), at most 200 bytes
        name = "".join("_" if ord(ch) < 32 else ch for ch in result_id)
        name = name.encode("utf-8")[:200].decode("utf-8", "ignore")
        path = agents_dir / app / EVAL_HISTORY / f"{name}.evalset_result.json"
        for folder in (agents_dir, agents_dir / app, *(agents_dir / app / part for part in _parts(EVAL_HISTORY))):
            if folder.is_symlink():  # a link a cloned repository committed: never written through
                raise OSError(f"{folder} is a symlink; the ADK results are written into folders of the project's own only")
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=2, ensure_ascii=False)
        if _before_1_22(versions.get((app, eval_set_id))):  # ADK before 1.22 stores (and reads) the JSON as a JSON string
            text = json.dumps(json.dumps(data))
        atomic_write(path, text, durable=False)
        written.append(path)
    return written


def _before_1_22(scored_as: "str | None") -> bool:
    """Whether the ADK that scored the cases (`ADK 1.19.0`) is one that reads its results double-encoded."""
    try:
        major, minor = (int(part) for part in (scored_as or "").split()[-1].split(".")[:2])
    except (ValueError, IndexError):
        return False
    return (major, minor) < (1, 22)
