"""What one run of a case produced, as one value: the resolved agent, the result, the diff, the
traces, every repeat's raw output, and which repeat is shown."""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from agentdiff.core.diff.clusters import cluster_signature
from agentdiff.core.diff.model import CaseDiff
from agentdiff.core.formats.source_file import display_path
from agentdiff.core.project.case_refs import CaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.run.expected import Baseline
from agentdiff.core.scoring.results import (
    CaseResult,
    CaseStatus,
    LayerSummary,
    RunRecord,
)
from agentdiff.core.traces.model import Trace
from agentdiff.core.worker.jobs import AgentRef, RunOutput


def shown_index(runs: Sequence[RunRecord]) -> int:
    """The repeat a case shows (its diff, what accept takes): the first that did not pass, else the first."""
    return next((i for i, run in enumerate(runs) if run.status is not CaseStatus.PASSED), 0)


@dataclass(frozen=True)
class CaseRun:
    ref: CaseRef
    result: CaseResult
    agent: Optional[AgentRef] = None  # the agent it ran with (None: none was found)
    diff: Optional[CaseDiff] = None
    baseline: Optional[Baseline] = None
    trace: Optional[Trace] = None  # the actual trace of the shown repeat
    outputs: tuple[RunOutput, ...] = ()  # every repeat's output (replay: one per streaming mode)
    shown: int = 0  # the index into `outputs` (and `result.runs`) of the repeat shown
    modes: tuple[str, ...] = ()  # replay: the streaming mode each output replayed
    #: Another repeat's actual trace and diff, made when asked (`showing`); None: only one is shown.
    restage: Optional[Callable[[int], tuple[Trace, CaseDiff]]] = dataclasses.field(default=None, compare=False, repr=False)

    def full(self) -> "CaseRun":
        """The whole run (itself; a `LightRun` kept on disk reads its whole back)."""
        return self

    def showing(self, index: int) -> "CaseRun":
        """This run with repeat `index` shown: its actual side, its diff (the case's verdict and
        scores stay those of all its repeats). Itself when that repeat is shown or cannot be."""
        if index == self.shown or self.restage is None or not 0 <= index < len(self.outputs):
            return self
        trace, diff = self.restage(index)
        return dataclasses.replace(self, trace=trace, diff=diff, shown=index)

    @property
    def has_outputs(self) -> bool:
        """It ran (a re-score has something to score), known without reading a run kept on disk."""
        return bool(self.outputs)

    @property
    def changed_layers(self) -> tuple[str, ...]:
        """The layers its diff found changed (what `layer:` filters by)."""
        return tuple(s.layer for s in self.diff.layers if s.status == "changed") if self.diff else ()

    @property
    def files_read(self) -> frozenset[str]:
        return frozenset(path for out in self.outputs for path in out.files_read)

    @property
    def shown_output(self) -> Optional[RunOutput]:
        return self.outputs[self.shown] if self.shown < len(self.outputs) else None

    @property
    def shown_record(self) -> Optional[RunRecord]:
        """The scored repeat shown, with its actual invocations (scored runs only)."""
        runs = self.result.runs
        return runs[self.shown] if self.shown < len(runs) else None


def layer_summaries(diff: Optional[CaseDiff]) -> tuple[LayerSummary, ...]:
    if diff is None:
        return ()
    first = diff.first_divergence
    return tuple(LayerSummary(s.layer, s.status, s.summary, first is not None and first.layer == s.layer)
                 for s in diff.layers if s.status != "absent")


def case_result(ref: CaseRef, agent: Optional[AgentRef], mode: str, status: CaseStatus, **extra: Any) -> CaseResult:
    set_id, eval_id, description = family_of(ref).names(ref)
    return CaseResult(
        id=ref.id, source=ref.source, eval_set_id=set_id, eval_id=eval_id, agent=agent.label if agent else None,
        mode=mode, status=status, description=description, **extra,
    )


def unrun(ref: CaseRef, agent: Optional[AgentRef], mode: str, status: CaseStatus, error: Optional[str]) -> CaseRun:
    """A case that ends before any run: no agent, not recorded, nothing to score."""
    return CaseRun(ref, case_result(ref, agent, mode, status, error=error), agent)


def summarised(run: CaseRun) -> CaseRun:
    """The run with its result's seconds, tool calls and model calls per run (the mean over its
    repeats) and, when it failed, its failure cluster."""
    outputs = run.outputs
    failing = run.result.status in (CaseStatus.FAILED, CaseStatus.FLAKY)
    cluster = cluster_signature(run.diff) if failing else None
    if not outputs:
        return dataclasses.replace(run, result=dataclasses.replace(run.result, cluster=cluster)) if cluster else run
    seconds, tools, calls = measures(outputs)
    located = next((out for out in outputs if out.error and out.error_file), None) if run.result.error else None
    where = {"error_location": f"{display_path(Path(located.error_file), Path.cwd())}:{located.error_line}",
             "error_trace": located.error_trace} if located else {}
    return dataclasses.replace(run, result=dataclasses.replace(run.result, seconds=seconds, tool_calls=tools, model_calls=calls, cluster=cluster,
                                                               **where))


def measures(outputs: Sequence[RunOutput]) -> tuple[float, float, float]:
    """One run's seconds, tool calls and model calls: the means over the repeats."""
    count = len(outputs)
    return (round(sum(out.seconds for out in outputs) / count, 3), round(sum(len(out.tools) for out in outputs) / count, 2),
            round(sum(len(out.exchanges) for out in outputs) / count, 2))
