"""Running an EvalSet case: live, `num_runs` repeats at once, scored with its `test_config.json`
exactly as ADK scores it; repeats that disagree make the case `flaky`."""

from __future__ import annotations

import asyncio
from typing import Optional, Sequence

from agentdiff.core.formats.eval_config import eval_metrics
from agentdiff.core.project.discovery import EvalCaseRef
from agentdiff.core.run.case_run import CaseRun, unrun
from agentdiff.core.run.expected import load_baseline
from agentdiff.core.run.jobs import eval_case_job, messages_of
from agentdiff.core.run.judging import Judged, judge_outputs
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.scored import rules_of, scored_case_run
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.worker.jobs import AgentRef, RunOutput
from agentdiff.core.run.cpu import cpu_step, small

NO_RECORDINGS = "replay needs recordings: an EvalSet case has none; run it live (--mode live) or record a conformance case"


def config_error(ref: EvalCaseRef) -> Optional[str]:
    """Why the case's `test_config.json` did not load (file:line: reason), or None when it loaded.
    A case whose criteria did not load is never scored against ADK's defaults instead."""
    if not ref.config_errors:
        return None
    return "its eval config did not load: " + "; ".join(str(error) for error in ref.config_errors)


async def run_eval_case(ref: EvalCaseRef, agent: AgentRef, pool, options: RunOptions) -> CaseRun:
    broken = config_error(ref)
    if broken is not None:
        return unrun(ref, agent, "live", CaseStatus.ERROR, broken)
    if options.mode == "replay":
        return unrun(ref, agent, "replay", CaseStatus.NOT_EVALUATED, NO_RECORDINGS)
    job = eval_case_job(ref, agent, "live")
    repeats = max(1, options.num_runs)
    outputs = await asyncio.gather(*(pool.run(job.model_copy(update={"repeat": options.first_repeat + r}), options.timeout) for r in range(repeats)))
    judged = await judge_outputs(ref, agent, outputs, pool, options)
    return await cpu_step(small(outputs), score_eval_case, ref, agent, outputs, judged)  # a big run's scoring: off the loop


def score_eval_case(ref: EvalCaseRef, agent: AgentRef, outputs: Sequence[RunOutput], judged: Sequence[Judged] = ()) -> CaseRun:
    """The outputs of an EvalSet case's repeats, scored against its current expectations and criteria
    (`judged`: each repeat's judged metrics, from `judge_outputs`). With criteria that did not load,
    an error (the outputs kept, to score again once they load)."""
    broken = config_error(ref)
    if broken is not None:
        unscored = unrun(ref, agent, "live", CaseStatus.ERROR, broken)
        return CaseRun(unscored.ref, unscored.result, agent, outputs=tuple(outputs))
    baseline = load_baseline(ref)
    metrics = eval_metrics(ref.config.config, rules_of(outputs))
    expected = list(ref.case.conversation) if ref.case.conversation is not None else None  # a scenario has none
    return scored_case_run(ref, agent, baseline, outputs, [messages_of(ref, out) for out in outputs], expected, metrics,
                           baseline.criteria, judged)
