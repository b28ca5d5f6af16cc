"""agents-cli trace events on both sides of a dataset case's diff, and a played scenario's trace.

A trace keeps of each ADK event only its author, content, time and state delta (`worker.
agents_cli_trace`). So that a run and its baseline differ only where the agent did, both are seen through that
view: the run's events as its trace file would hold them, the baseline's as its file holds them,
each turned back into the run output the rest of agentdiff reads (events with the user's message
first, and the tool calls their function calls and responses make).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from agentdiff.core.formats.agents_cli.traces import normalized, snake_case
from agentdiff.core.worker.agents_cli_trace import event_time, generated_events
from agentdiff.core.worker.jobs import ExchangeOut, RunOutput, ToolOut


def run_view(out: RunOutput, message: dict[str, Any]) -> RunOutput:
    """A run as its trace file would hold it (its LLM exchanges kept: the trace has none, the
    baseline's are agentdiff's own)."""
    return as_output(message, generated_events(out.events), out, out.exchanges)


def baseline_output(message: dict[str, Any], events: Sequence[dict[str, Any]], exchanges: Sequence[dict[str, Any]] = ()) -> RunOutput:
    """An accepted run, from the trace events its baseline file holds after the user's message."""
    return as_output(message, events, None, [ExchangeOut.model_validate(x) for x in exchanges])


def as_output(message: dict[str, Any], events: Sequence[dict[str, Any]], out: Optional[RunOutput],
              exchanges: Sequence[ExchangeOut]) -> RunOutput:
    adk_events = [{"author": "user", "content": message}]
    tools: list[ToolOut] = []
    pending: dict[str, ToolOut] = {}
    for seq, event in enumerate(events, start=1):
        shaped: dict[str, Any] = {"author": event.get("author", "")}
        if event.get("content") is not None:
            shaped["content"] = event["content"]
        if event.get("state_delta"):
            shaped["actions"] = {"state_delta": event["state_delta"]}
        adk_events.append(shaped)
        for part in (event.get("content") or {}).get("parts") or []:
            if not isinstance(part, dict):
                continue
            call, response = part.get("function_call"), part.get("function_response")
            if isinstance(call, dict):
                tool = ToolOut(agent=str(event.get("author", "")), turn=0, seq=seq, name=str(call.get("name", "")),
                               args=call.get("args") if isinstance(call.get("args"), dict) else None, id=call.get("id"))
                tools.append(tool)
                pending[str(call.get("id") or f"#{len(tools)}")] = tool
            elif isinstance(response, dict):
                key = str(response.get("id") or next((k for k, t in pending.items() if t.name == response.get("name")), ""))
                tool = pending.pop(key, None)
                if tool is not None:
                    tool.response = response.get("response") if isinstance(response.get("response"), dict) else None
                    tool.has_response = True
    ran = {tool.id: tool for tool in (out.tools if out is not None else []) if tool.id}
    for tool in tools:  # the run's own record of a call keeps when it ran (the timeline)
        if tool.id in ran:
            tool.start, tool.end = ran[tool.id].start, ran[tool.id].end
    state: dict[str, Any] = {}  # what the events changed (a trace keeps no session: not its app, user or earlier state)
    for event in events:
        state.update(event.get("state_delta") or {})
    update = {"events": adk_events, "tools": tools, "exchanges": list(exchanges), "app_name": "", "user_id": "", "state": state}
    if out is None:
        return RunOutput(**update)
    return out.model_copy(update=update)


def scenario_case(written: dict[str, Any], turns: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A scenario case as `eval dataset synthesize` writes it after playing it: its id and scenario,
    one turn per invocation `{turn_index, turn_id, events}` whose events are the user's message
    (`author: user`), the invocation's events and its final response (`author: agent`), all at the
    invocation's time; `responses` the last final response with text. `turns` are the invocations:
    `{invocation_id, time, user_content, events: [{author, content}], final_response}`."""
    scenario = snake_case(written).get("user_scenario") or {}
    out_turns, last_text = [], None
    for index, turn in enumerate(turns):
        when = event_time(turn["time"]) if turn.get("time") is not None else None
        events = [{"author": "user", "content": turn["user_content"]}] if turn.get("user_content") else []
        events += [{"author": e.get("author", ""), "content": e.get("content")} for e in turn.get("events") or []]
        final = turn.get("final_response")
        if final:
            events.append({"author": "agent", "content": final})
            texts = [p.get("text") for p in final.get("parts") or [] if isinstance(p, dict) and p.get("text")]
            if texts:
                last_text = {"response": {"parts": [{"text": "".join(texts)}], "role": final.get("role") or "model"}}
        for event in events:
            if when is not None:
                event["event_time"] = when
        out_turns.append({"turn_index": index, "turn_id": turn.get("invocation_id") or f"turn_{index}", "events": events})
    case: dict[str, Any] = {"eval_case_id": snake_case(written).get("eval_case_id"),
                            "user_scenario": {key: scenario.get(key) for key in ("starting_prompt", "conversation_plan")},
                            "agent_data": {"turns": out_turns}}
    if last_text is not None:
        case["responses"] = [last_text]
    return normalized(case)
