"""Re-scoring a case's cached run against its current expectations and criteria: no agent call.

An EvalSet case and a live conformance case are scored again from their outputs; a replay is diffed
again against the current recordings of each streaming mode it replayed."""

from __future__ import annotations

from typing import Sequence

from agentdiff.core.project.dataset_cases import DatasetCaseRef
from agentdiff.core.project.discovery import CaseRef, EvalCaseRef
from agentdiff.core.run.dataset_case import grade_outputs, score_dataset_case
from agentdiff.core.run.case_run import CaseRun, unrun, summarised
from agentdiff.core.run.conformance import judge_replay, score_live_conformance
from agentdiff.core.run.eval_case import score_eval_case
from agentdiff.core.run.journey import apply_checks
from agentdiff.core.run.judging import Judged, judge_outputs, judged_criteria
from agentdiff.core.run.options import RunOptions
from agentdiff.core.scoring.results import CaseStatus


def rescore_case(ref: CaseRef, previous: CaseRun, options: RunOptions, judged: Sequence[Judged] = ()) -> CaseRun:
    """`judged`: an EvalSet case's judged metrics for each cached run (`judge_again`). Its journey
    checks are applied again too."""
    return summarised(apply_checks(_rescored(ref, previous, options, judged)))


def _rescored(ref: CaseRef, previous: CaseRun, options: RunOptions, judged: Sequence[Judged] = ()) -> CaseRun:
    if not previous.outputs:
        raise ValueError("no cached run to re-score")
    agent, outputs = previous.agent, previous.outputs
    if isinstance(ref, DatasetCaseRef):
        return score_dataset_case(ref, agent, outputs, judged, previous.result.mode)  # type: ignore[arg-type]
    if isinstance(ref, EvalCaseRef):
        return score_eval_case(ref, agent, outputs, judged)  # type: ignore[arg-type]
    if previous.result.mode == "live":
        streaming = previous.baseline.mode if previous.baseline and previous.baseline.mode else "none"
        return score_live_conformance(ref, agent, streaming, outputs, options)
    replayed = [(mode, out) for mode, out in zip(previous.modes, outputs) if mode in ref.case.baselines]
    if not replayed:
        return unrun(ref, agent, "replay", CaseStatus.NOT_EVALUATED, f"no longer recorded: record it with `agentdiff record {ref.id}`")
    return judge_replay(ref, agent, [mode for mode, _ in replayed], [out for _, out in replayed])


async def judge_again(ref: CaseRef, previous: CaseRun, pool, options: RunOptions) -> list[Judged]:
    """The judged metrics of a case's cached runs, against the case as loaded now (from the judge
    cache when nothing the judge sees changed); a dataset case's, its eval config's local metrics."""
    if isinstance(ref, DatasetCaseRef) and previous.outputs and previous.agent is not None:
        return await grade_outputs(ref, previous.agent, previous.outputs, pool, options, again=True)
    if not isinstance(ref, EvalCaseRef) or not previous.has_outputs:
        return []
    if not judged_criteria(ref) or previous.agent is None:  # nothing to judge: its run is not read (it may be on disk)
        return [None] * len(previous.result.runs)
    return await judge_outputs(ref, previous.agent, previous.outputs, pool, options)
