"""OpenTelemetry traces scored with no agent call (`agentdiff score TRACES`): each traced conversation is
the project's EvalSet case it maps to, its run what the trace did (`traces.otlp_cases.as_run_output`),
scored by the case's criteria exactly as a live run is (judged metrics through the judge, and its cache)
and diffed against the case's baseline.

A conversation maps to the case whose id is its session id (as `run --report otlp` names it), or whose
eval_id is (as `agentdiff import` names it), else to the one case whose user messages are its user
messages, turn for turn."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.project.agent_memo import AgentMemo
from agentdiff.core.project.discovery import EvalCaseRef
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.eval_case import score_eval_case
from agentdiff.core.run.judging import judge_outputs
from agentdiff.core.run.options import RunOptions
from agentdiff.core.traces.otlp import Conversation
from agentdiff.core.traces.otlp_cases import as_run_output, case_id_of, unusable


def _user_texts(ref: EvalCaseRef) -> Optional[tuple[str, ...]]:
    conversation = ref.case.conversation
    if conversation is None:
        return None
    return tuple("".join(p.text or "" for p in (turn.user_content.parts or []) if p.text) for turn in conversation)


def match(conversation: Conversation, refs: Sequence[EvalCaseRef]) -> tuple[Optional[EvalCaseRef], str]:
    """The case a conversation maps to, or None and why."""
    named = [ref for ref in refs if ref.id == conversation.id] or [ref for ref in refs if ref.eval_id == case_id_of(conversation)]
    if len(named) == 1:
        return named[0], ""
    said = tuple(turn.user_text for turn in conversation.trace.turns)
    alike = [ref for ref in refs if _user_texts(ref) == said] if all(said) else []
    if len(alike) == 1:
        return alike[0], ""
    if named or alike:
        cases = named or alike
        return None, f"maps to {len(cases)} cases ({', '.join(ref.id for ref in cases[:3])}): give them distinct eval_ids"
    return None, "maps to no eval case here, by its id or its user messages: `agentdiff import` makes it one"


async def score_conversations(conversations: Sequence[Conversation], refs: Sequence[EvalCaseRef], pool, options: RunOptions,
                              root: Path) -> tuple[list[CaseRun], list[str]]:
    """Each conversation scored against the case it maps to; and what could not be scored, said."""
    memo = AgentMemo(root)
    said: list[str] = []

    async def one(conversation: Conversation) -> Optional[CaseRun]:
        why = unusable(conversation)
        ref, unmatched = match(conversation, refs)
        if ref is None or why is not None:
            said.append(f"{conversation.where}: conversation {conversation.id}: {why or unmatched}")
            return None
        agent = memo.resolve(ref, options.agents_dirs, options.mapping).agent
        out = as_run_output(conversation)
        judged = await judge_outputs(ref, agent, [out], pool, options) if pool is not None else [None]
        run = await asyncio.to_thread(score_eval_case, ref, agent, [out], judged)  # type: ignore[arg-type]
        return dataclasses.replace(run, result=dataclasses.replace(run.result, mode="score"))

    runs = await asyncio.gather(*(one(c) for c in conversations))
    return [run for run in runs if run is not None], said

