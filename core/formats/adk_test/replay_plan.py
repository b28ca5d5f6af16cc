"""What a replay of a fixture needs, read from its events as `adk test` reads them: the user's first
message, the model responses the mock model serves in order, the later user events fed to the agent,
and the call ids the fixture recorded (a later response names the call it answers by them).

The model's responses are the fixture's model-role contents, in order, except: the one right after a
`set_model_response` tool's response (ADK produces it, not the model); a workflow's request for human
confirmation or credentials, or for input from inside a workflow node (ADK asks those itself); and the
contents of parallel authors (`name__N`), which are served grouped and in `N`'s order (by the worker,
after it drops what ADK cannot read: `worker.fixture_replay.in_order`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

SET_MODEL_RESPONSE = "set_model_response"
_ASKS_WORKFLOW = ("adk_request_confirmation", "adk_request_credential")


@dataclass(frozen=True)
class ReplayPlan:
    user_message: str
    responses: list[dict[str, Any]] = field(default_factory=list)  # {"author", "content"}, as the fixture has them
    later: list[dict[str, Any]] = field(default_factory=list)  # {"content", "branch"}: the user's later events
    call_ids: list[Any] = field(default_factory=list)  # every recorded function call's id, in order
    response_ids: list[Any] = field(default_factory=list)  # every recorded function response's id, in order
    mocks: dict[str, Any] = field(default_factory=dict)


def first_message(events: Sequence[dict[str, Any]]) -> Optional[str]:
    if not events or events[0].get("author") != "user":
        return None
    parts = (events[0].get("content") or {}).get("parts") or []
    return parts[0]["text"] if parts and isinstance(parts[0], dict) and parts[0].get("text") else None


def picked(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fixture's model responses (its events after the first) the mock model may serve, each with
    its author, in the fixture's order. The worker drops those ADK cannot read and then orders
    parallel authors (`fixture_replay.in_order`), as ADK does, in that order."""
    found: list[dict[str, Any]] = []
    after_set_response = False
    for event in events:
        content = event.get("content")
        if not isinstance(content, dict):
            continue
        role = content.get("role")
        if role == "user":
            for part in content.get("parts") or []:
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict) and response.get("name") == SET_MODEL_RESPONSE:
                    after_set_response = True
        elif role == "model":
            if after_set_response:
                after_set_response = False
                continue
            if _asks_in_workflow(event, content):
                continue
            found.append({"author": str(event.get("author", "")), "content": content})
    return found


def _asks_in_workflow(event: dict[str, Any], content: dict[str, Any]) -> bool:
    node = event.get("nodeInfo")
    path = node.get("path", "") if isinstance(node, dict) else ""
    for part in content.get("parts") or []:
        call = part.get("functionCall") if isinstance(part, dict) else None
        if isinstance(call, dict):
            if call.get("name") in _ASKS_WORKFLOW:
                return True
            if call.get("name") == "adk_request_input" and isinstance(path, str) and len(path.split("/")) > 1:
                return True
    return False


def user_content(event: dict[str, Any]) -> Optional[dict[str, Any]]:
    """A later user event's content as it is sent again: text, function responses and calls only; none
    for an event the agent wrote itself (it has a node path)."""
    if event.get("author") != "user":
        return None
    node = event.get("nodeInfo")
    if isinstance(node, dict) and node.get("path"):
        return None
    content = event.get("content")
    if not isinstance(content, dict) or not content:
        return None
    parts = []
    for part in content.get("parts") or []:
        if not isinstance(part, dict):
            continue
        if "functionResponse" in part:
            response = part["functionResponse"] or {}
            parts.append({"functionResponse": {"id": response.get("id"), "name": response.get("name"), "response": response.get("response")}})
        elif "text" in part:
            parts.append({"text": part["text"]})
        elif "functionCall" in part:
            call = part["functionCall"] or {}
            parts.append({"functionCall": {"id": call.get("id"), "name": call.get("name"), "args": call.get("args")}})
    return {"role": "user", "parts": parts} if parts else None


def replay_plan(events: Sequence[dict[str, Any]], mocks: Optional[dict[str, Any]] = None) -> Optional[ReplayPlan]:
    """The plan of a fixture's replay; None when ADK would skip it (no user text first)."""
    message = first_message(events)
    if message is None:
        return None
    later = [{"content": content, "branch": event.get("branch")}
             for event in events[1:] if (content := user_content(event)) is not None]
    return ReplayPlan(message, picked(events[1:]), later, _ids(events, "functionCall"), _ids(events, "functionResponse"), dict(mocks or {}))


def _ids(events: Sequence[dict[str, Any]], kind: str) -> list[Any]:
    """The ids of every part of `kind` (`functionCall`, `functionResponse`) the events hold, in order."""
    return [part[kind]["id"] for event in events for part in ((event.get("content") or {}).get("parts") or [])
            if isinstance(part, dict) and isinstance(part.get(kind), dict) and "id" in part[kind]]


def user_messages(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user's messages as a re-record (`adk test --rebuild`) sends them: every user event's content."""
    return [content for event in events if (content := user_content(event)) is not None]
