"""A case's verdict over its runs as a pass rate: how many passed, the rate's interval, and — held to a
minimum pass rate — `passed`, `failed` or `inconclusive` with how many more runs would settle it.

* The rule a case is held to (`PassRule`) comes from the most specific place that sets it: a
  `[tool.agentdiff.min_pass_rate_for]` glob matching its id, then its eval set's `test_config.json`
  (`min_pass_rate`, `confidence`: ADK ignores keys it does not know), then `[tool.agentdiff]`, then
  the command line (which overrides them all).
* With no minimum (or a minimum of 1.0) the verdict is the plain one (every run passes → passed; runs
  that disagree → flaky), and the rate and its interval are shown beside it when the case ran more than
  once. No interval's lower bound reaches 1.0, so "every run must pass" cannot be a statistical rule.
* With a minimum, the runs that passed or failed are counted (an errored run makes the case `error`, as
  ever; runs with no verdict are not counted): `passed` when the interval's lower bound clears the
  minimum, `failed` when its upper bound is below it, else `inconclusive`.
* Replayed cases are deterministic: no rule applies to them.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from dataclasses import dataclass, field
from typing import Mapping, Optional

from agentdiff.core.scoring.confidence import each_look, interval, mean_interval, more_runs, pass_hat_k, settled
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus, MetricSpread, PassRate, percent

#: The confidence level of every interval unless configured.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class PassRule:
    """What one case's runs are held to."""

    min_pass_rate: Optional[float] = None  # None (or 1.0): every run must pass, the plain rule
    confidence: float = CONFIDENCE
    pass_hat_k: tuple[int, ...] = ()  # the k of each pass^k to report

    @property
    def statistical(self) -> bool:
        return self.min_pass_rate is not None and self.min_pass_rate < 1.0


@dataclass(frozen=True)
class PassRules:
    """The rules of a run: the project's, per case id glob, and the command line's (above every file's)."""

    min_pass_rate: Optional[float] = None
    confidence: Optional[float] = None
    pass_hat_k: tuple[int, ...] = ()
    for_cases: Mapping[str, float] = field(default_factory=dict)  # case id glob → its minimum
    given_min_pass_rate: Optional[float] = None  # on the command line
    given_confidence: Optional[float] = None
    looks: int = 1  # a run-until-confident's looks: each holds 1 − (1 − confidence) / looks (`run.until_confident`)

    def rule(self, case_id: str, suite_min: Optional[float] = None, suite_confidence: Optional[float] = None) -> PassRule:
        """The rule of one case; `suite_*`: what its own suite's file says (`test_config.json`)."""
        minimum = self.given_min_pass_rate
        if minimum is None:
            matched = [glob for glob in self.for_cases if fnmatch.fnmatchcase(case_id, glob)]
            minimum = (self.for_cases[max(matched, key=len)] if matched  # the longest glob is the most specific
                       else suite_min if suite_min is not None else self.min_pass_rate)
        confidence = next((c for c in (self.given_confidence, suite_confidence, self.confidence) if c is not None), CONFIDENCE)
        return PassRule(minimum, each_look(confidence, self.looks), self.pass_hat_k)

    @property
    def any_minimum(self) -> bool:
        """Whether a minimum is set anywhere but the suites' own files."""
        return self.given_min_pass_rate is not None or self.min_pass_rate is not None or bool(self.for_cases)


def with_pass_rate(result: CaseResult, rule: PassRule) -> CaseResult:
    """`result` with its pass rate, and its verdict held to `rule`'s minimum when it has one. A case that
    ran once under no minimum, errored, or has no verdict to count is returned as it is."""
    counted = [run for run in result.runs if run.status in (CaseStatus.PASSED, CaseStatus.FAILED)]
    if result.status in (CaseStatus.ERROR, CaseStatus.NEW, CaseStatus.NOT_EVALUATED) or not counted:
        return result
    if len(result.runs) < 2 and not rule.statistical:
        return result
    passes, runs = sum(run.status is CaseStatus.PASSED for run in counted), len(counted)
    low, high = interval(passes, runs, rule.confidence)
    rate = PassRate(passes, runs, low, high, rule.confidence, rule.min_pass_rate if rule.statistical else None,
                    pass_hat_k=tuple((k, value) for k in rule.pass_hat_k if (value := pass_hat_k(passes, runs, k)) is not None),
                    metrics=_spreads(result, rule.confidence))
    if not rule.statistical:
        return dataclasses.replace(result, pass_rate=rate)
    minimum = rule.min_pass_rate or 0.0
    verdict = settled(passes, runs, minimum, rule.confidence)
    against = f"against a minimum pass rate of {percent(minimum)}"
    if verdict == "inconclusive":
        more = more_runs(passes, runs, minimum, rule.confidence)
        rate = dataclasses.replace(rate, more_runs=more)
        settle = f"run {more} more to settle it" if more else "its rate sits on the minimum: more runs would not settle it"
        return dataclasses.replace(result, status=CaseStatus.INCONCLUSIVE, pass_rate=rate, error=f"{rate.words} {against}: {settle}")
    if verdict == "failed":
        return dataclasses.replace(result, status=CaseStatus.FAILED, pass_rate=rate,
                                   error=f"{rate.words}: below the minimum pass rate of {percent(minimum)}")
    return dataclasses.replace(result, status=CaseStatus.PASSED, pass_rate=rate, error=None)


def _spreads(result: CaseResult, confidence: float) -> tuple[MetricSpread, ...]:
    """Each gating metric's mean and interval over the runs that scored it (two runs or more), and a judged
    metric's over its judge's samples (`num_samples` of each invocation, of every run) as `<name> · samples`."""
    scores: dict[str, list[float]] = {}
    for run in result.runs:
        for evaluation in run.metrics:
            if evaluation.score is not None and evaluation.status in (MetricStatus.PASSED, MetricStatus.FAILED):  # gating metrics
                scores.setdefault(evaluation.name, []).append(float(evaluation.score))
                sampled = [sample["score"] for score in evaluation.per_invocation for sample in (score.details or {}).get("samples") or ()
                           if isinstance(sample, dict) and isinstance(sample.get("score"), (int, float))]
                if sampled:
                    scores.setdefault(f"{evaluation.name} · samples", []).extend(float(value) for value in sampled)
    spreads = []
    for name, values in scores.items():
        if len(values) > 1:
            mean, low, high = mean_interval(values, confidence)
            if all(0 <= value <= 1 for value in values):  # a score on [0, 1]: so is its interval
                low, high = max(0.0, low), min(1.0, high)
            spreads.append(MetricSpread(name, mean, low, high, len(values)))
    return tuple(spreads)
