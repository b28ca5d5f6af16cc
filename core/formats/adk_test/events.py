"""A fixture's events (ADK's camelCase JSON) in the snake_case form a worker's session events take, so
that both sides of a fixture's diff become traces by the one conversion every run goes through
(`traces.from_run`). Keys are renamed down to the values the agent and its tools wrote (a call's
`args`, a response, a state delta, an output): those are kept as written."""

from __future__ import annotations

import re
from typing import Any, Sequence

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")
#: Values that are data, not ADK's structure: their keys are the agent's own.
_DATA = frozenset({"args", "response", "stateDelta", "state_delta", "artifactDelta", "artifact_delta", "output", "customMetadata",
                   "custom_metadata", "partialArgs", "requestedToolConfirmations", "requestedAuthConfigs", "parameters"})


def snake(name: str) -> str:
    """`functionCall` → `function_call`."""
    return _UPPER.sub("_", name).lower()


def _converted(value: Any) -> Any:
    if isinstance(value, dict):
        return {snake(key): (inner if key in _DATA else _converted(inner)) for key, inner in value.items()}
    if isinstance(value, list):
        return [_converted(item) for item in value]
    return value


def session_events(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events as a worker's `RunOutput.events` holds them (partial events left out)."""
    return [_converted(event) for event in events if not event.get("partial")]


def tool_calls(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each function call of the session's events (snake_case, as `session_events` gives them), turn by
    turn in order, with the response that answers it (by id, else the next of its name): the fields
    of a worker's `ToolOut`."""
    calls: list[dict[str, Any]] = []
    turn, seq = -1, 0
    open_calls: dict[Any, dict[str, Any]] = {}
    for event in events:
        if event.get("author") == "user" and not _has(event, "function_response"):
            turn, seq = turn + 1, 0
        for part in ((event.get("content") or {}).get("parts") or []):
            if not isinstance(part, dict):
                continue
            call = part.get("function_call")
            if isinstance(call, dict):
                found = {"agent": str(event.get("author", "")), "turn": max(turn, 0), "seq": seq, "name": str(call.get("name", "")),
                         "args": call.get("args") if isinstance(call.get("args"), dict) else None, "id": call.get("id"),
                         "response": None, "has_response": False}
                seq += 1
                calls.append(found)
                open_calls[call.get("id") if call.get("id") is not None else id(found)] = found
            response = part.get("function_response")
            if isinstance(response, dict):
                match = open_calls.pop(response.get("id"), None) if response.get("id") is not None else None
                if match is None:
                    match = next((c for c in calls if not c["has_response"] and c["name"] == response.get("name")), None)
                if match is not None:
                    value = response.get("response")
                    match["response"] = value if isinstance(value, dict) else {"result": value}
                    match["has_response"] = True
    return calls


def _has(event: dict[str, Any], key: str) -> bool:
    return any(isinstance(p, dict) and key in p for p in ((event.get("content") or {}).get("parts") or []))


def final_state(events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The session's state after the events, as their state deltas leave it (`temp:` keys are not kept)."""
    state: dict[str, Any] = {}
    for event in events:
        delta = (event.get("actions") or {}).get("state_delta") if isinstance(event.get("actions"), dict) else None
        for key, value in (delta or {}).items():
            if not str(key).startswith("temp:"):
                state[key] = value
    return state
