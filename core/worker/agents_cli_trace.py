"""agents-cli's trace shape, built from a run: what `agents-cli eval generate` writes for a case
(`docs/agents-cli-formats.md` §4.4–4.6), and the `instance` a local custom metric is given (§2.4).
Plain dicts only, so a worker builds them too and grades a run in the process that ran it.

* An ADK event becomes a trace event when it has content or a state delta: `{author, content,
  event_time, state_delta}` (thought signatures removed), every other field dropped.
* A prompt case gains one turn `{turn_index: 0, turn_id: "turn_0", events}` (the user's message is not
  an event); a continuation's new events are appended to its last turn.
* `responses` gains the text of the last event that has text, all its text parts joined.
* `agent_data.agents` is the app's agents as ADK's `app-info` lists them, when it lists any.

`trace_case` takes the case as the SDK dumps it (`formats.agents_cli.traces.normalized`), and what it
adds is in that form already, so its result needs no second pass through the SDK's types.
"""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from typing import Any, Optional, Sequence


def trace_events(adk_events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of one `run_sse` answer (ADK's events, dumped snake_case) as trace events."""
    out = []
    for event in adk_events:
        content = event.get("content")
        delta = (event.get("actions") or {}).get("state_delta")
        if not content and not delta:
            continue
        entry: dict[str, Any] = {"author": event.get("author", "")}
        if content:
            entry["content"] = _without_signatures(content)
        if isinstance(event.get("timestamp"), (int, float)):
            entry["event_time"] = event_time(event["timestamp"])
        if delta:
            entry["state_delta"] = delta
        out.append(entry)
    return out


def generated_events(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trace events of a run's events, from after the user's message it answered."""
    events = list(events)
    while events and events[0].get("author") == "user":
        events.pop(0)
    return trace_events(events)


def event_time(seconds: float) -> str:
    """Unix seconds as the SDK dumps a UTC datetime: ISO 8601, microseconds when there are any, `Z`."""
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def _without_signatures(content: dict[str, Any]) -> dict[str, Any]:
    parts = []
    for part in content.get("parts") or []:
        if isinstance(part, dict):
            part = {key: value for key, value in part.items() if key != "thought_signature" and value is not None}
        parts.append(part)
    out = {key: value for key, value in content.items() if value is not None}
    if "parts" in content:
        out["parts"] = parts
    return out


def trace_case(case: dict[str, Any], events: Sequence[dict[str, Any]], agents: Optional[dict[str, Any]],
               root_agent: str) -> dict[str, Any]:
    """The case (as the SDK dumps it) as `eval generate` writes it after a run that produced `events`
    (trace events)."""
    case = copy.deepcopy(case)
    data = case.get("agent_data") or {}
    turns = data.get("turns") or []
    for turn in turns:
        for event in turn.get("events") or []:
            if event.get("author") == "model":
                event["author"] = root_agent
    if agents:
        data["agents"] = agents
    if turns:
        turns[-1].setdefault("events", []).extend(events)
    else:
        turns = [{"turn_index": 0, "turn_id": "turn_0", "events": list(events)}]
    data["turns"] = turns
    case["agent_data"] = {key: data[key] for key in ("agents", "turns") if key in data}
    text_event = next((e for e in reversed(events) if any(isinstance(p, dict) and p.get("text") for p in (e.get("content") or {}).get("parts") or [])), None)
    if text_event is not None:
        content = text_event["content"]
        text = "".join(p["text"] for p in content.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str))
        case["responses"] = [*(case.get("responses") or []), {"response": {"parts": [{"text": text}], "role": content.get("role") or "model"}}]
    return case


def app_agents(listed: dict[str, Any]) -> dict[str, Any]:
    """ADK's `app-info` agents (name → description, instruction, tools, sub_agents) as the trace's
    `agent_data.agents`: AgentConfigs, agent_type `LlmAgent` as agents-cli writes it."""
    agents = {}
    for name, info in listed.items():
        config = {"agent_id": name, "agent_type": "LlmAgent", "description": info.get("description"),
                  "instruction": info.get("instruction"), "tools": info.get("tools"), "sub_agents": info.get("sub_agents")}
        agents[name] = {key: value for key, value in config.items() if value is not None}
    return agents


def instance(case: dict[str, Any]) -> Optional[dict[str, Any]]:
    """What a local custom metric is given for a traced case (its first response graded), as the SDK
    builds it; None when the case has no response to grade."""
    responses = case.get("responses") or []
    if not responses:
        return None
    out = {key: value for key, value in case.items() if key != "responses"}
    out["agent_data"] = _with_content_only(out.get("agent_data"))
    if out["agent_data"] is None:
        out.pop("agent_data")
    out["response"] = responses[0].get("response")
    if "prompt" not in out and (case.get("user_scenario") or {}).get("starting_prompt"):
        out["prompt"] = {"parts": [{"text": case["user_scenario"]["starting_prompt"]}]}
    return out


def _with_content_only(data: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """`eval grade` drops every event without content before grading."""
    if not isinstance(data, dict):
        return data
    data = copy.deepcopy(data)
    for turn in data.get("turns") or []:
        turn["events"] = [event for event in turn.get("events") or [] if event.get("content")]
    return data
