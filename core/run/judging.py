"""Judged metrics (LLM-as-a-judge, rubrics, hallucinations): each run of an EvalSet case is sent,
with the case and its judged criteria, to a worker, where ADK's own evaluators score it (the app
never imports ADK). The judge's answers are cached under `.agentdiff/judge-cache/` by the exact
request, so scoring an unchanged run again makes no judge call."""

from __future__ import annotations

import asyncio
from typing import Any, Optional, Sequence

from agentdiff.core.formats import eval_config as names
from agentdiff.core.formats.adk_rules import AdkRules, rules_for
from agentdiff.core.formats.eval_config import BaseCriterion
from agentdiff.core.project.discovery import EvalCaseRef
from agentdiff.core.project.doctor import vertex_configured
from agentdiff.core.run.jobs import messages_of
from agentdiff.core.run.options import RunOptions
from agentdiff.core.traces.from_run import invocations_from_output
from agentdiff.core.worker.jobs import AgentRef, Job, RunOutput

#: One run's judged metrics: metric name → the worker's result (see `core/worker/judge.py`), or
#: `{"error": why}` when the judge could not run at all.
Judged = Optional[dict[str, Any]]


def judged_criteria(ref: EvalCaseRef) -> dict[str, Any]:
    """The criteria of the case's config that a model scores (ADK's evaluators, in a worker), as
    written: name → threshold or criterion. Vertex AI's metrics are among them only when Google Cloud
    is configured (else they are not evaluated, saying what to set)."""
    criteria: dict[str, Any] = {}
    judged_here = names.JUDGE_METRICS | (names.VERTEX_METRICS if vertex_configured() else frozenset())
    for name, value in ref.config.config.criteria.items():
        if name in judged_here:
            criteria[name] = value.model_dump(mode="json") if isinstance(value, BaseCriterion) else value
    return criteria


def rules_of(outputs: Sequence[RunOutput]) -> AdkRules:
    """The scoring rules of the ADK version the repeats ran on (the newest for agents without ADK)."""
    return rules_for(next((out.adk_version for out in outputs if out.adk_version), None))


def judge_job(ref: EvalCaseRef, agent: AgentRef, out: RunOutput, criteria: dict[str, Any], options: RunOptions) -> Job:
    actual = invocations_from_output(out, messages_of(ref, out), rules_of([out]))
    actual = [inv.model_copy(update={"app_details": app_details(out, turn)}) for turn, inv in enumerate(actual)]
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
    if not criteria or agent is None:
        return [None] * len(outputs)

    async def one(out: RunOutput) -> Judged:
        if out.error is not None:
            return None
        answer = await pool.run(judge_job(ref, agent, out, criteria, options), options.timeout)
        if answer.error is not None or answer.judged is None:
            return {"error": answer.error or "the judge's process gave no answer"}
        return answer.judged

    return list(await asyncio.gather(*(one(out) for out in outputs)))


def app_details(out: RunOutput, turn: int) -> Optional[dict[str, Any]]:
    """ADK's `AppDetails` of one turn, as its evaluation generator builds them: per agent that called
    the model, the system instruction and tool declarations of its first request. Rubric and
    hallucination judges read them (the agent's instructions and tools)."""
    agents: dict[str, Any] = {}
    for exchange in sorted((e for e in out.exchanges if e.turn == turn), key=lambda e: e.seq):
        if exchange.agent in agents:
            continue
        config = exchange.request.get("config") or {}
        instruction = config.get("system_instruction")
        if isinstance(instruction, dict):  # a Content: its text, as ADK would see it
            instruction = "".join(part.get("text") or "" for part in instruction.get("parts") or [])
        agents[exchange.agent] = {"name": exchange.agent, "instructions": instruction or "",
                                  "tool_declarations": config.get("tools") or []}
    return {"agent_details": agents} if agents else None
