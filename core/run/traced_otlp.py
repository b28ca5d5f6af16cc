"""OpenTelemetry traces scored with no agent call (`agentdiff score TRACES`): each traced conversation is
the project's case it maps to, its run what the trace did (`traces.otlp_cases.as_run_output`), judged and
scored by the case's family as a kept run of it is re-scored (`CaseFamily.judge_again`, `rescore`), and
diffed against the case's baseline.

A conversation maps to the case whose id is its session id (as `run --report otlp` names it), or whose
eval key is (as `agentdiff import` names it), else to the one case whose user messages are its user
messages, turn for turn."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any, Optional, Sequence

from agentdiff.core.project.agent_memo import AgentMemo
from agentdiff.core.project.family import family_of
from agentdiff.core.run.case_run import CaseRun, summarised, unrun
from agentdiff.core.run.options import RunOptions
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.traces.otlp import Conversation
from agentdiff.core.traces.otlp_cases import as_run_output, case_id_of, unusable


def _user_texts(ref: Any) -> Optional[tuple[str, ...]]:
    try:
        messages = family_of(ref).messages(ref)
    except (NotImplementedError, ValueError):
        return None
    return tuple("".join(p.get("text", "") for p in (m.content.get("parts") or []) if isinstance(p, dict)) for m in messages)


def match(conversation: Conversation, refs: Sequence[Any]) -> tuple[Optional[Any], str]:
    """The case a conversation maps to, or None and why (a case standing in for one, a pending traced
    conversation, is none: it is what the trace did, not what was expected)."""
    refs = [ref for ref in refs if family_of(ref).stands_in_for(ref) is None]
    named = [ref for ref in refs if ref.id in (conversation.id, conversation.case)] or \
        [ref for ref in refs if family_of(ref).eval_key(ref) == case_id_of(conversation)]
    if len(named) == 1:
        return named[0], ""
    said = tuple(turn.user_text for turn in conversation.trace.turns)
    alike = [ref for ref in refs if _user_texts(ref) == said] if all(said) else []
    if len(alike) == 1:
        return alike[0], ""
    if named or alike:
        cases = named or alike
        return None, (f"maps to {len(cases)} cases ({', '.join(ref.id for ref in cases[:3])}), by "
                      + ("its id" if named else "its user messages") + ": score it with one of them only (or name the case by its session id)")
    return None, "maps to no case here, by its id or its user messages: `agentdiff import` makes it one"


async def score_conversations(conversations: Sequence[Conversation], refs: Sequence[Any], pool, options: RunOptions,
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
        family = family_of(ref)
        agent = memo.resolve(ref, options.agents_dirs, options.mapping).agent
        stub = unrun(ref, agent, "score", CaseStatus.NOT_EVALUATED, "")
        traced = CaseRun(stub.ref, stub.result, agent, outputs=(as_run_output(conversation),))  # a kept run of it, as the trace has it
        judged = await family.judge_again(ref, traced, pool, options) if pool is not None else []
        run = summarised(await asyncio.to_thread(family.rescore, ref, traced, judged, options))  # its seconds and calls, as a run's
        return dataclasses.replace(run, result=dataclasses.replace(run.result, mode="score"))

    runs = await asyncio.gather(*(one(c) for c in conversations))
    return [run for run in runs if run is not None], said
