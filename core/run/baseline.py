"""The expected side of a case as a trace, with the criteria and files it is judged by; and the
actual side from ADK's stored results."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.adk_results import EvalCaseResult, EvalStatus, LoadedResults, load_eval_set_result
from agentdiff.core.diff.model import DiffCriteria
from agentdiff.core.formats.conformance import StreamingMode
from agentdiff.core.diff.layers import criteria_from_config
from agentdiff.core.project.discovery import CaseRef, EvalCaseRef
from agentdiff.core.formats.eval_config import MatchType
from agentdiff.core.formats.source_file import display_path
from agentdiff.core.diff.source_index import SourceIndex
from agentdiff.core.traces.model import Trace
from agentdiff.core.traces.from_files import eval_case_paths, trace_from_invocations, trace_from_recordings

RESULTS_SUFFIX = ".evalset_result.json"


@dataclass(frozen=True)
class Baseline:
    case_id: str
    trace: Trace
    criteria: DiffCriteria
    sources: SourceIndex
    mode: Optional[StreamingMode] = None  # conformance: the streaming mode of the recordings


class NotRecorded(Exception):
    """A conformance case with no recordings for the requested mode."""


#: Replay compares tool calls one by one, by name and args, as ADK's ReplayPlugin does.
REPLAY_CRITERIA = DiffCriteria(match_type=MatchType.EXACT)


def load_baseline(ref: CaseRef, mode: Optional[StreamingMode] = None) -> Baseline:
    if isinstance(ref, EvalCaseRef):
        index = next(i for i, case in enumerate(ref.eval_set.eval_set.eval_cases) if case.eval_id == ref.case.eval_id)
        trace = trace_from_invocations(ref.case.conversation or [], eval_case_paths(ref.eval_set, index))
        return Baseline(ref.id, trace, criteria_from_config(ref.config.config), SourceIndex([ref.eval_set.source]))
    case = ref.case
    if not case.baselines:
        raise NotRecorded(f"{case.display} has no recordings yet (record it with `agentdiff record {case.display}`)")
    chosen: StreamingMode = mode or ("none" if "none" in case.baselines else "sse")
    if chosen not in case.baselines:
        raise NotRecorded(f"{case.display} has no recordings for streaming mode {chosen}")
    baseline = case.baselines[chosen]
    sources = SourceIndex([baseline.recordings_source, baseline.session_source, case.spec_source])
    return Baseline(ref.id, trace_from_recordings(case, chosen), REPLAY_CRITERIA, sources, chosen)


def find_adk_results(ref: EvalCaseRef, root: Path) -> list[Path]:
    """ADK's stored results for the case's eval set, newest first: `.adk/eval_history/` of the
    eval set's folder and of each parent up to the project root."""
    set_id = ref.eval_set.eval_set.eval_set_id
    folder = ref.eval_set.source.path.resolve().parent
    top = root.resolve()
    found: list[Path] = []
    while True:
        history = folder / ".adk" / "eval_history"
        if history.is_dir():
            found += [p for p in history.glob(f"*{RESULTS_SUFFIX}") if f"_{set_id}_" in p.name or p.name.startswith(f"{set_id}_")]
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
        found = actual_from_results(loaded, ref.case.eval_id)
        if found is not None:
            return found[0], loaded.source.display
    return None
