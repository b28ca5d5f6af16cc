"""The pieces every answer of `agentdiff mcp` is made of: bounded texts and lists, the status words of
the filter, and the error a model reads."""

from __future__ import annotations

from typing import Any, Optional

from agentdiff.core.workbench.events import CaseState

MAX_TEXT = 4000  # characters of one string in an answer (a response, a preview, a file's diff)
MAX_ITEMS = 60  # items of one list in an answer (divergences, rows, word operations)
TURNS_PER_PAGE = 3


class ToolError(Exception):
    """A request that cannot be met, with what to do instead (shown to the model as the tool's error)."""


def cut(text: Optional[str], limit: int = MAX_TEXT) -> Optional[str]:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit:,} more characters]"


def bounded(value: Any) -> Any:
    """An answer with its texts and lists cut to size (what was cut says how much)."""
    if isinstance(value, str):
        return cut(value)
    if isinstance(value, list):
        kept = [bounded(v) for v in value[:MAX_ITEMS]]
        return kept + [f"… {len(value) - MAX_ITEMS} more"] if len(value) > MAX_ITEMS else kept
    if isinstance(value, dict):
        return {k: bounded(v) for k, v in value.items()}
    return value


def status_of(state: CaseState) -> str:
    """The filter's status words: running, stale, not run, or the verdict."""
    if state.running:
        return "running"
    if state.stale:
        return "stale"
    return state.status.value if state.status is not None else "not run"
