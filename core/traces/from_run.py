"""What a worker brought back, as a trace (for the diff) and as ADK invocations (for scoring).

The invocations are built from the session's events the way ADK's evaluation generator builds the
actual Invocation, in the version whose `AdkRules` are given (2.13 by default): the user event, the
final response (the last final-response event with parts; from 2.6 a text-bearing one preferred),
and every other agent event with a function call, function response, text or (from 1.34) inline data
as `invocation_events`. Which final events are left out changed: before 1.29 every final event; to
2.2 the chosen one; from 2.3 the chosen one unless it holds function calls; from 2.8 grounding-only
events count and a final event with grounding stays (its content cleared); from 2.10 the final event
always stays (content cleared unless it holds function calls), with usage and model version.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from agentdiff.core.formats.adk_rules import RULES_NEWEST, AdkRules
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.formats.genai_types import Content, content_text
from agentdiff.core.traces.model import (
    LlmExchange,
    SessionSnapshot,
    TextResponse,
    ToolCall,
    Trace,
    Turn,
)
from agentdiff.core.traces.nodes import node_steps, workflow_output
from agentdiff.core.worker.jobs import Message, RunOutput


def split_turns(events: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The events of each turn: a user-authored event starts one."""
    turns: list[list[dict[str, Any]]] = []
    for event in events:
        if event.get("author") == "user" or not turns:
            turns.append([])
        turns[-1].append(event)
    return turns


def _parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    content = event.get("content") or {}
    return [p for p in content.get("parts") or [] if isinstance(p, dict)]


def is_final_response(event: dict[str, Any], rules: AdkRules = RULES_NEWEST) -> bool:
    actions = event.get("actions") or {}
    if actions.get("skip_summarization") or event.get("long_running_tool_ids"):
        return True
    parts = _parts(event)
    if rules.error_code_final and event.get("error_code") and not event.get("partial") and not any(p.get("function_call") for p in parts):
        return True
    if any(p.get("function_call") or p.get("function_response") for p in parts):
        return False
    if event.get("partial"):
        return False
    return not (parts and parts[-1].get("code_execution_result"))


def _final_candidates(events: Sequence[dict[str, Any]], rules: AdkRules) -> list[int]:
    return [i for i, e in enumerate(events) if e.get("author") != "user" and is_final_response(e, rules) and _parts(e)]


def _final_index(events: Sequence[dict[str, Any]], rules: AdkRules = RULES_NEWEST) -> Optional[int]:
    candidates = _final_candidates(events, rules)
    with_text = [i for i in candidates if any(p.get("text") for p in _parts(events[i]))] if rules.prefer_text_final else []
    if with_text:
        return with_text[-1]
    return candidates[-1] if candidates else None


def _has_calls(parts: Sequence[dict[str, Any]]) -> bool:
    return any(p.get("function_call") for p in parts)


def _invocation_event(event: dict[str, Any], i: int, final: Optional[int], finals: set[int], rules: AdkRules) -> Optional[dict[str, Any]]:
    """The `invocation_events` entry an agent event makes, or None when the version leaves it out."""
    parts = _parts(event)
    grounding = event.get("grounding_metadata") if rules.grounding_events else None
    if not grounding and not any(p.get("function_call") or p.get("function_response") or p.get("text")
                                 or (rules.inline_data_events and p.get("inline_data")) for p in parts):
        return None
    calls = _has_calls(parts)
    if rules.grounding_events:  # 2.8 on
        if i == final and not calls and not grounding and not rules.efficiency_metrics:
            return None
        entry = {"author": event.get("author", ""), "content": None if i == final and not calls else event.get("content"),
                 "grounding_metadata": grounding}
        if rules.efficiency_metrics:  # 2.10 on: every such event stays, with its usage and model
            entry |= {"usage_metadata": event.get("usage_metadata"), "model_version": event.get("model_version")}
        return entry
    if not rules.keep_other_final_events:
        if i in finals:
            return None
    elif i == final and not (rules.keep_final_with_calls and calls):
        return None
    return {"author": event.get("author", ""), "content": event.get("content")}


def _invocation(
    message: Message, events: Sequence[dict[str, Any]], durations: Sequence[Optional[float]] = (None, None, None),
    rules: AdkRules = RULES_NEWEST,
) -> Invocation:
    final = _final_index(events, rules)
    finals = set(_final_candidates(events, rules))
    intermediate = [
        entry
        for i, event in enumerate(events)
        if event.get("author") != "user"
        for entry in [_invocation_event(event, i, final, finals, rules)]
        if entry is not None
    ]
    return Invocation.model_validate(
        {
            "invocation_id": str(events[0].get("invocation_id", "")) if events else "",
            "user_content": {"role": "user", **message.content},
            "final_response": events[final].get("content") if final is not None else None,
            "intermediate_data": {"invocation_events": intermediate},
            # timings are part of an invocation from ADK 2.10 (its model and tool parts from 2.13)
            "duration": durations[0] if rules.efficiency_metrics else None,
            "model_duration": durations[1] if rules.efficiency_metrics else None,
            "tool_duration": durations[2] if rules.efficiency_metrics else None,
        }
    )


def invocations_from_output(out: RunOutput, messages: Sequence[Message], rules: AdkRules = RULES_NEWEST) -> list[Invocation]:
    """One actual Invocation per message that was answered (a run that stopped early has fewer).

    Each one's `duration` is the turn's wall-clock time as the worker measured it while the agent ran,
    which is ADK's rule: never rebuilt from the events' timestamps (an event is stamped when it is
    built, for a model call before the request is sent), so a turn not measured has none. Its model and
    tool parts are those ADK's own instrumentation collected in the worker, where that ADK has it."""
    turns = split_turns(out.events)
    return [
        _invocation(message, turns[i], (out.turn_seconds.get(i), out.turn_model_seconds.get(i), out.turn_tool_seconds.get(i)), rules)
        for i, message in enumerate(messages)
        if i < len(turns)
    ]


def trace_from_output(out: RunOutput, messages: Sequence[Message]) -> Trace:
    turns_events = split_turns(out.events)
    turns = []
    for t, message in enumerate(messages):
        events = turns_events[t] if t < len(turns_events) else []
        final = _final_index(events)
        final_text = content_text(Content.model_validate(events[final]["content"])) if final is not None else None
        has_output, output = workflow_output(events)
        intermediate = tuple(
            TextResponse(author=str(e.get("author", "")), text=text)
            for i, e in enumerate(events)
            if i != final and e.get("author") != "user" and not e.get("partial")
            for text in ["\n".join(p["text"] for p in _parts(e) if isinstance(p.get("text"), str) and p["text"])]
            if text
        )
        turns.append(
            Turn(
                index=t,
                user_text=content_text(Content.model_validate({"role": "user", **message.content})),
                llm=tuple(
                    LlmExchange(agent=x.agent, index=x.index, seq=x.seq, request=x.request, responses=tuple(x.responses), error=x.error,
                                start=x.start, end=x.end)
                    for x in out.exchanges
                    if x.turn == t
                ),
                tool_calls=tuple(
                    ToolCall(name=c.name, args=c.args, id=c.id, agent=c.agent, seq=c.seq, response=c.response, has_response=c.has_response, error=c.error,
                             simulated=c.simulated, start=c.start, end=c.end)
                    for c in out.tools
                    if c.turn == t
                ),
                final_response=final_text if events else None,
                intermediate_responses=intermediate,
                nodes=node_steps(events),
                workflow_output=output,
                has_workflow_output=has_output,
                error=out.turn_errors.get(t),
            )
        )
    session = SessionSnapshot(app_name=out.app_name, user_id=out.user_id, state=out.state, events=tuple(out.events))
    return Trace(turns=tuple(turns), session=session, error=out.error, transfer_parents=tuple(out.transfer_parents))
