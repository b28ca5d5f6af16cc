"""Judged metrics (LLM-as-a-judge, rubrics, hallucinations): each run of an EvalSet case is sent,
with the case and its judged criteria, to a worker, where ADK's own evaluators score it (the app
never imports ADK). The judge's answers are cached under `.agentdiff/judge-cache/` by the exact
request, so scoring an unchanged run again makes no judge call."""

from __future__ import annotations

import asyncio
from typing import Any, Optional, Sequence

from agentdiff.core.formats import eval_config as names
from agentdiff.core.formats.eval_config import BaseCriterion
from agentdiff.core.project.discovery import EvalCaseRef
from agentdiff.core.run.jobs import messages_for
from agentdiff.core.run.options import RunOptions
from agentdiff.core.traces.from_run import invocations_from_output
from agentdiff.core.worker.jobs import AgentRef, Job, RunOutput

#: One run's judged metrics: metric name → the worker's result (see `core/worker/judge.py`), or
#: `{"error": why}` when the judge could not run at all.
Judged = Optional[dict[str, Any]]


def judged_criteria(ref: EvalCaseRef) -> dict[str, Any]:
    """The judged criteria of the case's config, as written: name → threshold or criterion."""
    criteria: dict[str, Any] = {}
    for name, value in ref.config.config.criteria.items():
        if name in names.JUDGE_METRICS:
            criteria[name] = value.model_dump(mode="json") if isinstance(value, BaseCriterion) else value
    return criteria


def judge_job(ref: EvalCaseRef, agent: AgentRef, out: RunOutput, criteria: dict[str, Any], options: RunOptions) -> Job:
    from agentdiff.core.run.scored import rules_of

    actual = invocations_from_output(out, messages_for(ref), rules_of([out]))
    return Job(
        case_id=ref.id, agent=agent, mode="live", app_name=agent.name, messages=[], repeat=0,
        judge={
            "eval_case": ref.case.model_dump(mode="json", exclude_none=True),
            "criteria": criteria,
            "actual": [inv.model_dump(mode="json", exclude_none=True) for inv in actual],
            "cache_dir": str(options.judge_cache) if options.judge_cache else None,
        },
    )


async def judge_outputs(ref: EvalCaseRef, agent: Optional[AgentRef], outputs: Sequence[RunOutput], pool,
                        options: RunOptions) -> list[Judged]:
    """Each run's judged metrics (None for a run that failed, or a case with none)."""
    criteria = judged_criteria(ref)
    if not criteria or agent is None or ref.case.conversation is None:
        return [None] * len(outputs)

    async def one(out: RunOutput) -> Judged:
        if out.error is not None:
            return None
        answer = await pool.run(judge_job(ref, agent, out, criteria, options), options.timeout)
        if answer.error is not None or answer.judged is None:
            return {"error": answer.error or "the judge's process gave no answer"}
        return answer.judged

    return list(await asyncio.gather(*(one(out) for out in outputs)))
