"""A turn's model and tool calls on a time axis, as `adk web`'s trace tab shows them: when each began
and ended (seconds into the run), how long it took, who made it (the agent, or a workflow's node), and
for a model call the model and its tokens. Runs keep these timings; a baseline or a recording keeps
none, so their side of a timeline is empty unless it is a kept run's (`B`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Sequence

from .model import Turn


@dataclass(frozen=True)
class Span:
    kind: Literal["model", "tool"]
    name: str  # the model, or the tool
    by: str  # the agent or node that made the call
    start: float
    end: float
    prompt_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    error: Optional[str] = None

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)


def turn_spans(turn: Optional[Turn]) -> list[Span]:
    """The turn's calls that kept their timings, in the order they began."""
    if turn is None:
        return []
    spans: list[Span] = []
    for exchange in turn.llm:
        if exchange.start is None or exchange.end is None:
            continue
        usage = (exchange.responses[-1].get("usage_metadata") or {}) if exchange.responses else {}
        spans.append(Span("model", str((exchange.request or {}).get("model") or "model"), exchange.agent, exchange.start, exchange.end,
                          usage.get("prompt_token_count"), usage.get("candidates_token_count"), exchange.error))
    for call in turn.tool_calls:
        if call.start is None or call.end is None:
            continue
        spans.append(Span("tool", call.name, call.agent or "", call.start, call.end, error=call.error))
    return sorted(spans, key=lambda span: (span.start, span.end))


def window(*sides: Sequence[Span]) -> tuple[float, float]:
    """The time both sides' spans fall in (from the earliest start to the latest end)."""
    spans = [span for side in sides for span in side]
    if not spans:
        return 0.0, 0.0
    return min(span.start for span in spans), max(span.end for span in spans)
