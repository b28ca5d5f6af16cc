"""The case filter of the `/` key: words and `key:value` tokens, `!` inverts one.

    refund status:failed          cases whose id holds "refund" and that failed
    agent:trip_planner !label:"flaky model"   quotes hold a value with spaces
    status:failed,error           either status
    status:fail                   a status by its beginning, as `layer:tool`

An unknown key or status or layer is an error that lists the valid ones (`parse_error`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

KEYS = ("status", "agent", "label", "mode", "layer")
STATUSES = ("passed", "failed", "error", "not_evaluated", "flaky", "inconclusive", "new", "stale", "running", "not run")
LAYERS = ("request", "tool_calls", "response", "session", "nodes")


@dataclass(frozen=True)
class CaseFacts:
    id: str
    status: str  # passed | failed | error | not_evaluated | flaky | inconclusive | new | stale | running | not run
    agent: str = ""
    label: str = ""
    mode: str = ""
    changed_layers: tuple[str, ...] = ()


def _token_matches(token: str, case: CaseFacts) -> bool:
    key, sep, value = token.partition(":")
    if sep and key in KEYS:
        wanted = [v.strip().lower() for v in value.split(",") if v.strip()]
        if not wanted:  # `status:` still being typed: no constraint yet
            return True
        if key == "status":
            return any(case.status.lower().startswith(w) for w in wanted)
        if key == "layer":
            return any(layer.startswith(w) for layer in case.changed_layers for w in wanted)
        have = {"agent": case.agent, "label": case.label, "mode": case.mode}[key].lower()
        return any(w in have for w in wanted)
    return token.lower() in case.id.lower()


def _tokens(query: str) -> list[str]:
    """Split on spaces, keeping a quoted value whole (`label:"flaky model"`); an unclosed quote
    runs to the end."""
    return [token.replace('"', "") for token in re.findall(r'(?:[^\s"]+|"[^"]*"?)+', query)]


def matches(query: str, case: CaseFacts) -> bool:
    for token in _tokens(query):
        negate = token.startswith("!")
        token = token[1:] if negate else token
        if not token:
            continue
        if _token_matches(token, case) == negate:
            return False
    return True


def parse_error(query: str) -> Optional[str]:
    """Why the query cannot match as meant: an unknown key, or a status or layer no value begins with."""
    for token in _tokens(query):
        key, sep, value = token.lstrip("!").partition(":")
        if sep and key not in KEYS and "/" not in key and "." not in key:
            return f"unknown filter key {key!r} (use {', '.join(KEYS)})"
        known = {"status": STATUSES, "layer": LAYERS}.get(key) if sep else None
        for wanted in (v.strip().lower() for v in value.split(",") if v.strip()) if known else ():
            if not any(k.startswith(wanted) for k in known):
                return f"unknown {key} {wanted!r} (use {', '.join(known)})"
    return None
