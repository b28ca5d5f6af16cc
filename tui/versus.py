"""A kept run the workbench is compared with (`B`): each case's verdict then, and its actual then on
the expected side of the layers, against the actual now. Or agents-cli's grade results: each case's
metric scores then, beside its scores now."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Optional

from agentdiff.core.diff.case import diff_case
from agentdiff.core.diff.model import CaseDiff
from agentdiff.core.project.family import family_of
from agentdiff.core.reports.agents_cli_runs import is_grade_report, rekeyed
from agentdiff.core.reports.kept_runs import KeptRun, load_traces, read_run
from agentdiff.core.traces.model import Trace
from agentdiff.core.workbench.events import CaseState


class Versus:
    """A kept run the workbench is compared with (`B`): its cases' verdicts, and its actual traces,
    read when a case is shown."""

    def __init__(self, run: KeptRun, ids_by_eval_id: Optional[dict[str, list[str]]] = None) -> None:
        self.run, self.name = run, run.name
        #: agents-cli grade results: their scores are shown beside the current ones; they have no verdicts
        self.scores_only = is_grade_report(run.report)
        self.folder = run.path if self.scores_only else run.path.parent  # what the picker names it by
        self.cases = rekeyed(run.cases, ids_by_eval_id or {}) if self.scores_only else run.cases
        self._traces: Optional[dict[str, Any]] = None
        self._diffs: dict[str, tuple[Any, Optional[CaseDiff], Optional[Trace]]] = {}  # case id → (the run diffed, its diff, the kept trace)

    @classmethod
    def load(cls, folder: str, ids_by_eval_id: Optional[dict[str, list[str]]] = None) -> "Versus":
        """A kept run's folder, or an agents-cli grade results file (its cases named by eval_case_id,
        found under the ids of `ids_by_eval_id`)."""
        path = Path(folder)
        return cls(read_run(path, path.name if path.is_file() else None), ids_by_eval_id)

    @property
    def verdicts(self) -> Optional[dict[str, dict[str, Any]]]:
        """The cases whose verdicts then the tree compares with now (none for grade results)."""
        return None if self.scores_only else self.cases

    def diff(self, state: CaseState) -> Optional[CaseDiff]:
        """The run's actual (expected side) against the current actual; None when it did not keep one."""
        if state.run is None or state.run.trace is None or self.scores_only:
            return None
        cached = self._diffs.get(state.ref.id)
        if cached is None or cached[0] is not state.run:  # a new run of the case: diffed anew
            if self._traces is None:
                self._traces = load_traces(self.run)
            data = self._traces.get(state.ref.id)
            try:
                base = Trace.model_validate(data) if data is not None else None
            except ValueError:
                base = None
            self._diffs[state.ref.id] = (state.run, diff_case(base, state.run.trace, case_id=state.ref.id) if base is not None else None, base)
        return self._diffs[state.ref.id][1]

    def trace(self, state: CaseState) -> Optional[Trace]:
        """The kept run's trace of the case (its timings for the timeline); None when it kept none."""
        return self._diffs[state.ref.id][2] if self.diff(state) is not None else None


def agents_cli_roots(root: Path, states: Iterable[CaseState]) -> list[Path]:
    """The agents-cli projects a workbench holds cases of (where their grade results are), its root first."""
    roots = {root: None}
    for state in states:
        found = family_of(state.ref).results_root(state.ref)
        if found is not None:
            roots[found] = None
    return list(roots)


def ids_by_eval_id(states: Iterable[CaseState]) -> dict[str, list[str]]:
    """A workbench's dataset cases by eval_case_id (what agents-cli's grade results name them by)."""
    out: dict[str, list[str]] = {}
    for state in states:
        key = family_of(state.ref).results_key(state.ref)
        if key is not None:
            out.setdefault(key, []).append(state.ref.id)
    return out
