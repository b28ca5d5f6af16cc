"""A traced conversation (`traces.otlp`) as what agentdiff makes of a run: the worker's `RunOutput` (its
session events, model calls and tool calls, so it is scored and diffed as a run is, with no agent call),
and as an ADK EvalSet case whose expectations are what the trace did (`agentdiff import`)."""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

from agentdiff.core.traces.otlp import Conversation
from agentdiff.core.worker.jobs import ExchangeOut, RunOutput, ToolOut

_ID = re.compile(r"[^A-Za-z0-9_.-]+")


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def as_run_output(conversation: Conversation) -> RunOutput:
    """The conversation as a run's output: per turn its user message, each model answer and, after one
    that asked for tools, their responses, as ADK's session events would hold them."""
    events: list[dict[str, Any]] = []
    exchanges: list[ExchangeOut] = []
    tools: list[ToolOut] = []
    errors: dict[int, str] = {}
    seconds: dict[int, float] = {}
    for turn in conversation.trace.turns:
        times = [t for x in (*turn.llm, *turn.tool_calls) for t in (x.start, x.end) if t is not None]
        if times:  # the turn's span of model and tool calls, as its trace timed them
            seconds[turn.index] = round(max(times) - min(times), 3)
        events.append({"author": "user", "content": _user(turn.user_text)})
        steps = sorted([(x.seq, "model", x) for x in turn.llm] + [(c.seq, "tool", c) for c in turn.tool_calls], key=lambda s: s[0])
        answered: list[dict[str, Any]] = []
        for _, kind, step in steps:
            if kind == "model":
                if answered:
                    events.append({"author": answered[0]["author"], "content": {"role": "user", "parts": [a["part"] for a in answered]}})
                    answered = []
                exchanges.append(ExchangeOut(agent=step.agent, turn=turn.index, index=step.index, seq=step.seq, request=step.request or {},
                                             responses=list(step.responses), error=step.error, start=step.start, end=step.end))
                content = (step.responses[-1] if step.responses else {}).get("content")
                if content:
                    events.append({"author": step.agent, "content": content})
            else:
                tools.append(ToolOut(agent=step.agent or "", turn=turn.index, seq=step.seq, name=step.name, args=step.args, id=step.id,
                                     response=step.response, has_response=step.has_response, error=step.error, start=step.start,
                                     end=step.end))
                if step.has_response:
                    answered.append({"author": step.agent or conversation.agent,
                                     "part": {"function_response": {"name": step.name, "response": step.response or {}}}})
        if answered:
            events.append({"author": answered[0]["author"], "content": {"role": "user", "parts": [a["part"] for a in answered]}})
        if turn.error:
            errors[turn.index] = turn.error
    first_error = next(iter(errors.items()), None)  # a turn that raised ended the run, as a live run's does
    return RunOutput(events=events, exchanges=exchanges, tools=tools, turn_errors=errors, adk_version=conversation.adk_version,
                     app_name=conversation.agent, root_agent=conversation.agent, turn_seconds=seconds, seconds=sum(seconds.values()),
                     error=f"{first_error[1]} (turn {first_error[0] + 1})" if first_error else None)


def case_id_of(conversation: Conversation) -> str:
    """The eval_id a conversation's case is given: its session id, as ADK ids go."""
    return _ID.sub("_", conversation.id).strip("_")[:120] or "conversation"


def not_yet(conversations: Iterable[Conversation], have: set) -> tuple[list[tuple[Conversation, str]], list[str]]:
    """The conversations whose case ids (`case_id_of`) a file does not `have` yet, each once with its id;
    and the ids it has already."""
    new: list[tuple[Conversation, str]] = []
    already: list[str] = []
    seen = set(have)
    for conversation in conversations:
        eval_id = case_id_of(conversation)
        if eval_id in seen:
            already.append(eval_id)
        else:
            seen.add(eval_id)
            new.append((conversation, eval_id))
    return new, already


def eval_case(conversation: Conversation, eval_id: Optional[str] = None, app_name: Optional[str] = None) -> dict[str, Any]:
    """The conversation as an EvalSet case expecting what it did: each turn's user message, final
    response and tool calls with their responses; `app_name`: its agent's folder, when known (the
    traced agent's own name may be another)."""
    turns = []
    for turn, invocation in zip(conversation.trace.turns, conversation.invocation_ids):
        entry: dict[str, Any] = {"invocation_id": invocation or f"{case_id_of(conversation)}-{turn.index + 1}",
                                 "user_content": _user(turn.user_text)}
        if turn.final_response is not None:
            entry["final_response"] = {"role": "model", "parts": [{"text": turn.final_response}]}
        entry["intermediate_data"] = {
            "tool_uses": [{"name": c.name, "args": c.args or {}} for c in turn.tool_calls],
            "tool_responses": [{"name": c.name, "response": c.response or {}} for c in turn.tool_calls if c.has_response],
            "intermediate_responses": [],
        }
        turns.append(entry)
    return {"eval_id": eval_id or case_id_of(conversation), "conversation": turns,
            "session_input": {"app_name": app_name or conversation.agent or "app", "user_id": "user", "state": {}}}


def unusable(conversation: Conversation) -> Optional[str]:
    """Why a conversation cannot be a case (its content was left out, or it has no turn), or None."""
    if conversation.missing:
        return f"its trace holds no message content ({conversation.missing[0]})"
    if not conversation.trace.turns or any(not turn.user_text for turn in conversation.trace.turns):
        return "a turn has no user message in its trace"
    return None
