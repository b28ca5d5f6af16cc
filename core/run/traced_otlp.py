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


class CaseMatcher:
    """The case each conversation maps to, looked up in tables built once (a suite of thousands maps in
    time linear in its conversations, not their product with its cases). A case standing in for
    another, a pending traced conversation, is none: it is what a trace did, not what was expected."""

    def __init__(self, refs: Sequence[Any]) -> None:
        self.refs = [ref for ref in refs if family_of(ref).stands_in_for(ref) is None]
        self.by_id: dict[str, list[Any]] = {}
        self.by_key: dict[str, list[Any]] = {}
        for ref in self.refs:
            self.by_id.setdefault(ref.id, []).append(ref)
            key = family_of(ref).eval_key(ref)
            if key is not None:
                self.by_key.setdefault(key, []).append(ref)
        self._by_texts: Optional[dict[tuple[str, ...], list[Any]]] = None  # built when a conversation is matched by what it said

    def by_texts(self, said: tuple[str, ...]) -> list[Any]:
        if self._by_texts is None:
            self._by_texts = {}
            for ref in self.refs:
                texts = _user_texts(ref)
                if texts is not None:
                    self._by_texts.setdefault(texts, []).append(ref)
        return self._by_texts.get(said, [])

    def match(self, conversation: Conversation) -> tuple[Optional[Any], str]:
        """The case a conversation maps to, or None and why."""
        named = list({ref.id: ref for ids in (conversation.id, conversation.case) if ids for ref in self.by_id.get(ids, ())}.values())
        named = named or self.by_key.get(case_id_of(conversation), [])
        if len(named) == 1:
            return named[0], ""
        said = tuple(turn.user_text for turn in conversation.trace.turns)
        alike = self.by_texts(said) if all(said) else []
        if len(alike) == 1:
            return alike[0], ""
        if named or alike:
            cases = named or alike
            return None, (f"maps to {len(cases)} cases ({', '.join(ref.id for ref in cases[:3])}), by "
                          + ("its id" if named else "its user messages") + ": score it with one of them only (or name the case by its session id)")
        return None, "maps to no case here, by its id or its user messages: `agentdiff import` makes it one"



def sent_turns(conversation: Conversation, ref: Any) -> Conversation:
    """The turns of a conversation its case sends: all of them, or the last ones when the case gives the
    earlier ones as its history (an agents-cli continuation sends its last message only)."""
    said, turns = _user_texts(ref), conversation.trace.turns
    if not said or len(said) >= len(turns) or tuple(t.user_text for t in turns[-len(said):]) != said:
        return conversation
    kept = tuple(t.model_copy(update={"index": i}) for i, t in enumerate(turns[-len(said):]))
    return dataclasses.replace(conversation, trace=conversation.trace.model_copy(update={"turns": kept}),
                               invocation_ids=conversation.invocation_ids[-len(said):])


async def score_conversations(conversations: Sequence[Conversation], refs: Sequence[Any], pool, options: RunOptions,
                              root: Path) -> tuple[list[CaseRun], list[str]]:
    """Each conversation scored against the case it maps to; and what could not be scored, said."""
    memo = AgentMemo(root)
    matcher = CaseMatcher(refs)
    said: list[str] = []

    async def one(conversation: Conversation) -> Optional[CaseRun]:
        why = unusable(conversation)
        ref, unmatched = matcher.match(conversation)
        if ref is None or why is not None:
            said.append(f"{conversation.where}: conversation {conversation.id}: {why or unmatched}")
            return None
        family = family_of(ref)
        agent = memo.resolve(ref, options.agents_dirs, options.mapping).agent
        stub = unrun(ref, agent, "score", CaseStatus.NOT_EVALUATED, "")
        traced = CaseRun(stub.ref, stub.result, agent, outputs=(as_run_output(sent_turns(conversation, ref)),))  # a kept run of it, as traced
        judged = await family.judge_again(ref, traced, pool, options) if pool is not None else []
        run = summarised(await asyncio.to_thread(family.rescore, ref, traced, judged, options))  # its seconds and calls, as a run's
        file = conversation.where.rpartition(":")[0] or conversation.where
        return dataclasses.replace(run, result=dataclasses.replace(run.result, mode="score", source=file,
                                                                   origin=f"{conversation.where}, conversation {conversation.id}"))

    runs = await asyncio.gather(*(one(c) for c in conversations))
    return [run for run in runs if run is not None], said
