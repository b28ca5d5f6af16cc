"""Re-scoring a case's cached run against its current expectations and criteria: no agent call.

Each case's family re-scores it (`CaseFamily.rescore`): an EvalSet case and a live conformance case
are scored again from their outputs; a replay is diffed again against the current recordings of each
streaming mode it replayed."""

from __future__ import annotations

from typing import Sequence

from agentdiff.core.project.case_refs import CaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.run.case_run import CaseRun, summarised
from agentdiff.core.run.journey import apply_checks
from agentdiff.core.run.judging import Judged
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.pass_rule import held_to_rule


def rescore_case(ref: CaseRef, previous: CaseRun, options: RunOptions, judged: Sequence[Judged] = ()) -> CaseRun:
    """`judged`: an EvalSet case's judged metrics for each cached run (`judge_again`). Its journey
    checks are applied again too."""
    return summarised(held_to_rule(apply_checks(_rescored(ref, previous, options, judged)), options, before=previous))


def _rescored(ref: CaseRef, previous: CaseRun, options: RunOptions, judged: Sequence[Judged] = ()) -> CaseRun:
    if not previous.outputs:
        raise ValueError("no cached run to re-score")
    return family_of(ref).rescore(ref, previous, judged, options)


async def judge_again(ref: CaseRef, previous: CaseRun, pool, options: RunOptions) -> list[Judged]:
    """The judged metrics of a case's cached runs, against the case as loaded now (from the judge
    cache when nothing the judge sees changed); a dataset case's, its eval config's local metrics."""
    return await family_of(ref).judge_again(ref, previous, pool, options)
