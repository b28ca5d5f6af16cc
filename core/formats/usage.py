"""Token counts of an invocation, summed over its model calls as ADK's token_usage metric sums them."""

from __future__ import annotations

from typing import Optional

from agentdiff.core.formats.eval_set import Invocation, InvocationEvents

TOKEN_FIELDS = (
    "total_tokens",
    "input_tokens",
    "prompt_tokens",
    "cached_tokens",
    "tool_use_tokens",
    "output_tokens",
    "candidates_tokens",
    "reasoning_tokens",
)


def _add(total: Optional[float], count: Optional[int]) -> Optional[float]:
    if count is None:
        return total
    return (total or 0) + count


def token_usage(inv: Invocation) -> dict[str, Optional[float]]:
    """One turn's token counts summed over its model calls (None = not reported, not zero)."""
    totals: dict[str, Optional[float]] = dict.fromkeys(TOKEN_FIELDS)
    if isinstance(inv.intermediate_data, InvocationEvents):
        for event in inv.intermediate_data.invocation_events:
            usage = event.usage_metadata
            if usage is None:
                continue
            prompt, tool = usage.prompt_token_count, usage.tool_use_prompt_token_count
            candidates, thoughts = usage.candidates_token_count, usage.thoughts_token_count
            input_tokens = None if prompt is None and tool is None else (prompt or 0) + (tool or 0)
            output_tokens = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
            for key, count in (
                ("input_tokens", input_tokens),
                ("prompt_tokens", prompt),
                ("cached_tokens", usage.cached_content_token_count),
                ("tool_use_tokens", tool),
                ("output_tokens", output_tokens),
                ("candidates_tokens", candidates),
                ("reasoning_tokens", thoughts),
            ):
                totals[key] = _add(totals[key], count)
    if totals["input_tokens"] is not None or totals["output_tokens"] is not None:
        totals["total_tokens"] = (totals["input_tokens"] or 0) + (totals["output_tokens"] or 0)
    return {key: (float(v) if v is not None else None) for key, v in totals.items()}
