#!/usr/bin/env python3
"""agentdiff's benchmarks: run on demand, print a table of results.

    .venv/bin/python benchmarks/run.py            # every benchmark
    .venv/bin/python benchmarks/run.py rouge      # one

Each benchmark measures agentdiff and its reference in the same run and reports the ratio, so the
numbers mean something on a busy or slow machine. Targets are stated beside each result; nothing
here is a pass/fail test.
"""

from __future__ import annotations

import random
import sys
import time
from typing import Callable

BENCHMARKS: dict[str, Callable[[], list[tuple[str, str, str]]]] = {}


def benchmark(name: str):
    def register(fn):
        BENCHMARKS[name] = fn
        return fn

    return register


_WORDS = (
    "the weather in paris is sunny today and the forecast says it will stay warm running runs ran light "
    "kitchen bedroom heater turned switched devices status garage door closed opened lamp brightness percent "
    "order refund policy customer shipped delivered tracking number café naïve 天气 很好"
).split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 40))).capitalize() + "."


@benchmark("rouge")
def rouge_benchmark() -> list[tuple[str, str, str]]:
    """ROUGE-1 of 1,000 response pairs: agentdiff vs ADK's RougeEvaluator called per pair."""
    from google.adk.evaluation.eval_case import Invocation
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
    from google.genai import types

    from agentdiff.core import rouge

    rng = random.Random(7)
    pairs = [(_sentence(rng), _sentence(rng)) for _ in range(1000)]

    def invocation(text: str) -> Invocation:
        return Invocation(user_content=types.Content(parts=[types.Part(text="q")]), final_response=types.Content(parts=[types.Part(text=text)]))

    adk_inputs = [([invocation(a)], [invocation(e)]) for a, e in pairs]
    metric = EvalMetric(metric_name="response_match_score", threshold=0.5)
    rouge.tokenize("warm up the stemmer import")
    rouge.tokenize.cache_clear()
    rouge._chunk_tokens.cache_clear()
    rouge._stemmer().cache_clear()

    start = time.perf_counter()
    theirs = [RougeEvaluator(metric).evaluate_invocations(a, e).overall_score for a, e in adk_inputs]
    adk_seconds = time.perf_counter() - start

    start = time.perf_counter()
    ours = [rouge.rouge1(a, e).fmeasure for a, e in pairs]
    our_seconds = time.perf_counter() - start

    mismatches = sum(1 for x, y in zip(ours, theirs) if abs(x - y) > 1e-9)
    return [
        ("rouge: ADK RougeEvaluator, 1,000 pairs", f"{adk_seconds * 1000:.0f} ms", ""),
        ("rouge: agentdiff, 1,000 pairs (cold caches)", f"{our_seconds * 1000:.0f} ms", ""),
        ("rouge: speed-up", f"{adk_seconds / our_seconds:.1f}x", "target >= 20x"),
        ("rouge: scores differing by > 1e-9", str(mismatches), "target 0"),
    ]


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
        return 2
    rows = [row for name in names for row in BENCHMARKS[name]()]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'result':>10}  target")
    for label, value, target in rows:
        print(f"{label:<{width}}  {value:>10}  {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
