"""ADK's stored runs (`.adk/eval_history/*.evalset_result.json`) as the actual side of a diff."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.adk_results import (
    RESULT_SUFFIX,
    EvalCaseResult,
    EvalStatus,
    LoadedResults,
    load_eval_set_result,
)
from agentdiff.core.formats.source_file import display_path, resolved
from agentdiff.core.project.discovery import EvalCaseRef
from agentdiff.core.traces.from_files import trace_from_invocations
from agentdiff.core.traces.model import Trace


def find_adk_results(ref: EvalCaseRef, root: Path) -> list[Path]:
    """ADK's stored results for the case's eval set, newest first: `.adk/eval_history/` of the
    eval set's folder and of each parent up to the project root."""
    set_id = ref.eval_set.eval_set_id
    folder = resolved(ref.eval_set.source.path).parent
    top = root.resolve()
    found: list[Path] = []
    while True:
        history = folder / ".adk" / "eval_history"
        if history.is_dir():
            found += [p for p in history.glob(f"*{RESULT_SUFFIX}") if f"_{set_id}_" in p.name or p.name.startswith(f"{set_id}_")]
        if folder == top or folder.parent == folder or top not in folder.parents:
            break
        folder = folder.parent
    return sorted(found, key=lambda p: (p.stat().st_mtime, p.name), reverse=True)


def actual_from_results(loaded: LoadedResults, eval_id: str) -> Optional[tuple[Trace, EvalCaseResult]]:
    """The actual trace of one case in a results file: its first failing run, else its first run."""
    runs = [case for case in loaded.result.eval_case_results if case.eval_id == eval_id]
    if not runs:
        return None
    run = next((case for case in runs if case.final_eval_status == EvalStatus.FAILED), runs[0])
    actual = [per.actual_invocation for per in run.eval_metric_result_per_invocation]
    return trace_from_invocations(actual), run


def latest_actual(ref: EvalCaseRef, root: Path, candidates: Optional[Sequence[Path]] = None) -> Optional[tuple[Trace, str]]:
    """The newest stored ADK run of this case: (trace, the results file it came from)."""
    for path in candidates if candidates is not None else find_adk_results(ref, root):
        loaded, errors = load_eval_set_result(path, display_path(path, root))
        if loaded is None:
            continue
        found = actual_from_results(loaded, ref.eval_id)
        if found is not None:
            return found[0], loaded.source.display
    return None
