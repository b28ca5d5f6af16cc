"""What a case's runs cost: the tokens the agent's model calls and the judge's calls spent, per model
(summed over the repeats), and, with a price table in the configuration, an estimated cost."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from agentdiff.core.worker.jobs import RunOutput

#: {"agent" | "judge": {model: {"input": tokens, "output": tokens}}}
Usage = dict[str, dict[str, dict[str, int]]]


def _add(into: dict[str, dict[str, int]], model: str, tokens_in: int, tokens_out: int) -> None:
    entry = into.setdefault(model, {"input": 0, "output": 0})
    entry["input"] += tokens_in
    entry["output"] += tokens_out


def case_usage(outputs: Sequence[RunOutput], judged: Sequence[Optional[Mapping[str, Any]]] = ()) -> Usage:
    """Tokens per model of every model call the runs made (as the responses' usage metadata says) and
    of every judge call (none for one answered from the judge cache)."""
    agent: dict[str, dict[str, int]] = {}
    for out in outputs:
        for exchange in out.exchanges:
            model = str(exchange.request.get("model") or "?")
            for response in exchange.responses:
                usage = response.get("usage_metadata") or {}
                _add(agent, model, int(usage.get("prompt_token_count") or 0), int(usage.get("candidates_token_count") or 0))
    judge: dict[str, dict[str, int]] = {}
    for judgement in judged:
        for result in (judgement or {}).values():
            for model, tokens in (result.get("usage") or {}).items() if isinstance(result, dict) else ():
                _add(judge, model, int(tokens.get("input") or 0), int(tokens.get("output") or 0))
    return {key: value for key, value in (("agent", agent), ("judge", judge)) if value}


def total_tokens(usage: Usage, side: Optional[str] = None) -> int:
    return sum(t["input"] + t["output"] for key, models in usage.items() if side in (None, key) for t in models.values())


def estimated_cost(usage: Usage, prices: Mapping[str, Mapping[str, float]]) -> Optional[float]:
    """US dollars at `prices` (per million input and output tokens, by model name); None when a model
    that spent tokens has no price."""
    cost = 0.0
    for models in usage.values():
        for model, tokens in models.items():
            if not tokens["input"] and not tokens["output"]:
                continue
            price = prices.get(model)
            if price is None:
                return None
            cost += tokens["input"] / 1e6 * float(price.get("input", 0)) + tokens["output"] / 1e6 * float(price.get("output", 0))
    return round(cost, 6)


def merge(usages: Sequence[Usage]) -> Usage:
    """The usage of many cases together."""
    merged: Usage = {}
    for usage in usages:
        for side, models in usage.items():
            for model, tokens in models.items():
                _add(merged.setdefault(side, {}), model, tokens["input"], tokens["output"])
    return merged
