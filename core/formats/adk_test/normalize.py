"""What `adk test` compares: a fixture's events and a run's, each normalised, sorted, and equal.

The rules (ADK 2.11 and later, `agent_test_runner`): events are ADK's camelCase JSON. From each event
the volatile fields go (`EXCLUDED`, in either spelling), then top-level nulls; a part's
`thoughtSignature`; the content's `role` in an event that asks the human (`adk_request_input`,
`adk_request_confirmation`, `adk_request_credential`); `longRunningToolIds` when empty, else sorted;
empty objects in `actions`, and `actions` when then empty; `*_join_state` keys of the state delta. The
events are then sorted by (author, node path, the event as sorted JSON).

A run's events are first renumbered as ADK renumbers them (`renumbered`): partial events dropped,
event ids `e-N`, function call ids `fc-N` in order of appearance, and every reference to a call's id
(its response, long-running ids, a call's own arguments, a task branch, a node path's `name@id`, an
isolation scope, a confirmation's keys and nested ids) moved with it.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterable, Mapping, Sequence

EXCLUDED = frozenset({"id", "timestamp", "invocation_id", "model_version", "finish_reason", "usage_metadata", "avg_logprobs",
                      "cache_metadata", "logprobs_result", "citation_metadata", "interaction_id", "turn_complete"})
HUMAN_CALLS = ("adk_request_input", "adk_request_confirmation", "adk_request_credential")


def camel(name: str) -> str:
    """`usage_metadata` → `usageMetadata`, as pydantic's alias generator spells it."""
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


_EXCLUDED_BOTH = EXCLUDED | {camel(name) for name in EXCLUDED}


def normalized(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each event as `adk test` compares it (a copy: the events given are not changed)."""
    out = []
    for event in events:
        d = {k: copy.deepcopy(v) for k, v in event.items() if k not in _EXCLUDED_BOTH and v is not None}
        content = d.get("content")
        if isinstance(content, dict) and isinstance(content.get("parts"), list):
            asks_human = False
            for part in content["parts"]:
                if isinstance(part, dict):
                    part.pop("thoughtSignature", None)
                    call = part.get("functionCall")
                    if isinstance(call, dict) and call.get("name") in HUMAN_CALLS:
                        asks_human = True
            if asks_human:
                content.pop("role", None)
        long_running = d.get("longRunningToolIds")
        if isinstance(long_running, list):
            if long_running:
                d["longRunningToolIds"] = sorted(long_running, key=_sortable)
            else:
                del d["longRunningToolIds"]
        actions = d.get("actions")
        if isinstance(actions, dict):
            for key in [k for k, v in actions.items() if v == {}]:
                del actions[key]
            if not actions:
                del d["actions"]
        delta = (d.get("actions") or {}).get("stateDelta") if isinstance(d.get("actions"), dict) else None
        if isinstance(delta, dict):
            for key in [k for k in delta if isinstance(k, str) and k.endswith("_join_state")]:
                del delta[key]
        out.append(d)
    return out


def _sortable(value: Any) -> Any:
    return (0, value) if isinstance(value, str) else (1, json.dumps(value, sort_keys=True))


def sort_key(event: Mapping[str, Any]) -> tuple[str, str, str]:
    node = event.get("nodeInfo")
    path = node.get("path", "") if isinstance(node, dict) else ""
    return (str(event.get("author", "")), str(path), json.dumps(event, sort_keys=True))


def compared(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The events normalised and sorted: what `adk test` holds side by side."""
    return sorted(normalized(events), key=sort_key)


def same(actual: Iterable[Mapping[str, Any]], expected: Iterable[Mapping[str, Any]]) -> bool:
    """`adk test`'s verdict: the run's events (renumbered) equal the fixture's."""
    return compared(actual) == compared(expected)


def _calls(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = event.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return [part["functionCall"] for part in parts or [] if isinstance(part, dict) and isinstance(part.get("functionCall"), dict)]


def _remap_path(path: str, ids: Mapping[Any, str], separator: str) -> str:
    """A branch (`a@1.b@2`: a run id after the last `@`) or a node path (`a@1/b@2`: after the first)."""
    segments = []
    for segment in path.split(separator):
        name, at, run = segment.rpartition("@") if separator == "." else segment.partition("@")
        segments.append(f"{name}@{ids[run]}" if at and run in ids else segment)
    return separator.join(segments)


def _remap_args(value: Any, ids: Mapping[Any, str]) -> None:
    if isinstance(value, dict):
        for key, inner in list(value.items()):
            if key == "id" and isinstance(inner, str) and inner in ids:
                value[key] = ids[inner]
            else:
                _remap_args(inner, ids)
    elif isinstance(value, list):
        for item in value:
            _remap_args(item, ids)


def renumbered(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A run's events with ADK's deterministic ids (a copy)."""
    events = [copy.deepcopy(dict(e)) for e in events if not e.get("partial")]
    for number, event in enumerate(events, 1):
        event["id"] = f"e-{number}"
    ids: dict[Any, str] = {}
    count = 0
    for event in events:
        for call in _calls(event):
            old = call.get("id")
            count += 1
            new = f"fc-{count}"
            ids[old] = new
            call["id"] = new
            if event.get("longRunningToolIds"):
                event["longRunningToolIds"] = list(dict.fromkeys(new if tid == old else tid for tid in event["longRunningToolIds"]))
            args = call.get("args")
            if isinstance(args, dict):
                for key, value in list(args.items()):
                    if value == old:
                        args[key] = new
    by_name: dict[Any, list[str]] = {}
    for event in events:
        for call in _calls(event):
            by_name.setdefault(call.get("name"), []).append(call.get("id"))
        branch = event.get("branch")
        if isinstance(branch, str) and branch:
            if branch.startswith("task:"):
                run = branch.split(":")[1]
                if run in ids:
                    branch = f"task:{ids[run]}"
            event["branch"] = branch = _remap_path(branch, ids, ".")
        scope = event.get("isolationScope")
        if scope in ids:
            event["isolationScope"] = ids[scope]
        node = event.get("nodeInfo")
        if isinstance(node, dict):
            if node.get("path"):
                node["path"] = _remap_path(node["path"], ids, "/")
            if node.get("outputFor"):
                node["outputFor"] = [_remap_path(p, ids, "/") for p in node["outputFor"]]
        content = event.get("content")
        for part in (content.get("parts") or []) if isinstance(content, dict) else []:
            if not isinstance(part, dict):
                continue
            response = part.get("functionResponse")
            if isinstance(response, dict):
                waiting = by_name.get(response.get("name"))
                if waiting:
                    response["id"] = waiting.pop(0)
                elif response.get("id") in ids:
                    response["id"] = ids[response["id"]]
            call = part.get("functionCall")
            if isinstance(call, dict) and call.get("args"):
                _remap_args(call["args"], ids)
        actions = event.get("actions")
        confirmations = actions.get("requestedToolConfirmations") if isinstance(actions, dict) else None
        if isinstance(confirmations, dict) and confirmations:
            actions["requestedToolConfirmations"] = {ids.get(k, k): v for k, v in confirmations.items()}
    return events
