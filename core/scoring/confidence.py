"""How sure a verdict over a case's repeated runs can be: the pass rate's interval, pass^k, the verdict
against a minimum pass rate, how many more runs would most likely settle it, and whether a drop between
two runs of a suite is more than chance.

* The interval is Wilson's score interval (no continuity correction): it stays inside [0, 1], is not
  degenerate at 0/N or N/N as the normal ("Wald") interval is, and keeps close to its nominal coverage
  at the small N eval suites run (Brown, Cai & DasGupta 2001). At 95%, 10/10 gives [0.72, 1.0].
* pass^k is the chance that k runs in a row all pass, estimated without bias from c passes of n runs as
  C(c, k) / C(n, k) (as tau-bench defines it); pass@k, that at least one of k passes, is 1 − C(n−c, k) / C(n, k).
* Against a minimum pass rate the verdict is `passed` when the interval's lower bound clears it,
  `failed` when its upper bound is below it, else `inconclusive`. No lower bound reaches 1.0: a minimum
  of 1.0 (every run must pass) is the plain rule, not this one.
* A drop between two runs of a case is Fisher's exact test, one-sided, on the two pass counts.

Pure functions of counts; the standard library only (`statistics.NormalDist` for the quantile).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist
from typing import Literal, Optional

Settled = Literal["passed", "failed", "inconclusive"]
#: More runs than this are never proposed: a rate that sits on the minimum never settles.
MAX_MORE_RUNS = 1000
#: The most runs a run-until-confident gives a case unless asked otherwise (`--max-runs`).
MAX_RUNS = 100


@lru_cache(maxsize=32)
def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"a confidence level is between 0 and 1, not {confidence}")
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def interval(passes: int, runs: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for the pass rate (nothing known from no runs: [0, 1])."""
    if runs <= 0:
        return 0.0, 1.0
    if not 0 <= passes <= runs:
        raise ValueError(f"{passes} passes of {runs} runs")
    z = _z(confidence)
    p = passes / runs
    denominator = 1 + z * z / runs
    centre = (p + z * z / (2 * runs)) / denominator
    spread = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / denominator
    return max(0.0, centre - spread), min(1.0, centre + spread)


def pass_hat_k(passes: int, runs: int, k: int) -> Optional[float]:
    """The chance that `k` runs in a row all pass (None: fewer runs than `k`)."""
    if k < 1 or k > runs:
        return None
    return math.comb(passes, k) / math.comb(runs, k)


def pass_at_k(passes: int, runs: int, k: int) -> Optional[float]:
    """The chance that at least one of `k` runs passes (None: fewer runs than `k`)."""
    if k < 1 or k > runs:
        return None
    return 1 - math.comb(runs - passes, k) / math.comb(runs, k)


def settled(passes: int, runs: int, min_pass_rate: float, confidence: float = 0.95) -> Settled:
    low, high = interval(passes, runs, confidence)
    if low >= min_pass_rate:
        return "passed"
    if high < min_pass_rate:
        return "failed"
    return "inconclusive"


def more_runs(passes: int, runs: int, min_pass_rate: float, confidence: float = 0.95) -> Optional[int]:
    """How many more runs would most likely settle the verdict, if the observed rate held (0: settled
    now; None: not within `MAX_MORE_RUNS`, a rate that sits on the minimum)."""
    if settled(passes, runs, min_pass_rate, confidence) != "inconclusive":
        return 0
    rate = passes / runs if runs else 0.5
    for more in range(1, MAX_MORE_RUNS + 1):
        if settled(passes + round(rate * more), runs + more, min_pass_rate, confidence) != "inconclusive":
            return more
    return None


def drop_p_value(passes_before: int, runs_before: int, passes_now: int, runs_now: int) -> float:
    """Fisher's exact test, one-sided: the chance of a drop at least this large between two runs of a
    case whose pass rate did not change."""
    total_passes, total = passes_before + passes_now, runs_before + runs_now
    low = max(0, total_passes - runs_now)
    high = min(runs_before, total_passes)
    denominator = math.comb(total, runs_before)
    return min(1.0, sum(math.comb(total_passes, x) * math.comb(total - total_passes, runs_before - x)
                        for x in range(passes_before, high + 1) if x >= low) / denominator)


def _t_within(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with a whole number of degrees of freedom (Abramowitz & Stegun 26.7.3–4)."""
    theta = math.atan(t / math.sqrt(df))
    cos2, sin = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 0:
        term = total = 1.0
        for k in range(2, df - 1, 2):
            term *= cos2 * (k - 1) / k
            total += term
        return sin * total
    if df == 1:
        return 2 * theta / math.pi
    term = total = math.cos(theta)
    for k in range(3, df - 1, 2):
        term *= cos2 * (k - 1) / k
        total += term
    return 2 / math.pi * (theta + sin * total)


def t_quantile(confidence: float, df: int) -> float:
    """Student's t two-sided quantile, `df` degrees of freedom: its distribution function's closed form
    for whole degrees of freedom solved by bisection (a case has at most 1000 runs)."""
    if df < 1:
        raise ValueError(f"a t quantile needs a degree of freedom, not {df}")
    _z(confidence)  # the level checked
    low, high = 0.0, 1.0
    while _t_within(high, df) < confidence:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        if _t_within(middle, df) < confidence:
            low = middle
        else:
            high = middle
        if high - low < 1e-12:
            break
    return (low + high) / 2


def mean_interval(values: "list[float]", confidence: float = 0.95) -> tuple[float, float, float]:
    """The mean of a metric's scores over a case's runs and Student's t interval around it (one value: the
    value, and nothing known around it beyond it)."""
    count = len(values)
    if count == 0:
        raise ValueError("no values")
    mean = sum(values) / count
    if count == 1:
        return mean, mean, mean
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / (count - 1)) / math.sqrt(count)
    half = t_quantile(confidence, count - 1) * spread
    return mean, mean - half, mean + half


def looks(first: int, most: int) -> int:
    """How many times a run-until-confident looks at a case that starts with `first` runs and may grow to
    `most`, doubling each time (`next_runs`)."""
    count, runs = 1, max(1, first)
    while runs < most:
        runs = min(most, runs * 2)
        count += 1
    return count


def next_runs(runs: int, most: int) -> int:
    """How many runs the next look adds: as many as there are (the runs double), up to `most` in all."""
    return max(0, min(most, max(1, runs) * 2) - runs)


def each_look(confidence: float, count: int) -> float:
    """The confidence each of `count` looks must hold so that all of them together hold `confidence`
    (Bonferroni: the chance that any look is wrong is at most the sum of theirs)."""
    return confidence if count <= 1 else 1 - (1 - confidence) / count
