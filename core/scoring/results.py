"""Results as data: what a run or a re-score produced, for reports, the CLI and the TUI."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Optional, Sequence

from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.scoring.metrics import MetricEvaluation, MetricStatus


class CaseStatus(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # could not load, crashed, timed out: never shown as a pass
    NOT_EVALUATED = "not_evaluated"  # no metric could produce a score
    FLAKY = "flaky"  # repeated runs disagree
    NEW = "new"  # nothing accepted yet to diff it against (an agents-cli case with no baseline): pending
    INCONCLUSIVE = "inconclusive"  # its runs' pass rate straddles its minimum pass rate: more runs would settle it


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run of a case: the invocations on both sides and every metric computed on them."""

    actual: tuple[Invocation, ...]
    expected: Optional[tuple[Invocation, ...]]
    metrics: tuple[MetricEvaluation, ...] = ()
    status: CaseStatus = CaseStatus.NOT_EVALUATED
    error: Optional[str] = None


@dataclass(frozen=True, slots=True)
class MetricResult:
    """A metric over all runs of a case (one run: that run's values)."""

    name: str
    score: Optional[float]
    threshold: Optional[float]
    status: MetricStatus
    per_invocation: tuple[Optional[float], ...] = ()
    reason: Optional[str] = None
    criterion: Optional[dict[str, Any]] = None
    details: Optional[dict[str, Any]] = None


@dataclass(frozen=True, slots=True)
class MetricSpread:
    """A metric's score over a case's runs: the mean and its interval (Student's t)."""

    name: str
    mean: float
    low: float
    high: float
    runs: int


@dataclass(frozen=True, slots=True)
class PassRate:
    """How many of a case's runs passed, and how sure that makes its verdict (`scoring.pass_rate`)."""

    passes: int
    runs: int
    low: float  # the pass rate's interval (Wilson's) at `confidence`
    high: float
    confidence: float
    min_pass_rate: Optional[float] = None  # the rule its verdict was held to (None: every run must pass)
    more_runs: Optional[int] = None  # inconclusive: how many more runs would most likely settle it (None: none would)
    pass_hat_k: tuple[tuple[int, float], ...] = ()  # (k, the chance k runs in a row all pass), where asked
    metrics: tuple[MetricSpread, ...] = ()

    @property
    def rate(self) -> float:
        return self.passes / self.runs if self.runs else 0.0

    @property
    def words(self) -> str:
        """`7/10 runs passed: 70% (95% interval 40–89%)`."""
        return (f"{self.passes}/{self.runs} runs passed: {percent(self.rate)} "
                f"({percent(self.confidence)} interval {percent(self.low, sign=False)}–{percent(self.high)})")

    def line(self) -> str:
        """`words`, the minimum it was held to, pass^k and each metric's mean and interval over the runs."""
        said = self.words
        if self.min_pass_rate is not None:
            said += f", minimum {percent(self.min_pass_rate)}"
        said += "".join(f" · pass^{k} {value:.2f}" for k, value in self.pass_hat_k)
        said += "".join(f" · {m.name} {m.mean:.2f} [{m.low:.2f}, {m.high:.2f}]" for m in self.metrics if m.high > m.low)  # runs that differ
        return said


def percent(value: float, sign: bool = True) -> str:
    """A rate as a whole percentage, never rounded onto 0 or 100 unless it is one (`99.6%` is not `100%`)."""
    shown = round(value * 100)
    text = str(shown)
    if shown in (0, 100) and 0 < value < 1:
        for places in range(1, 12):  # as many decimals as it takes to be neither 0 nor 100
            text = f"{value * 100:.{places}f}"
            if float(text) not in (0.0, 100.0):
                break
    return text + ("%" if sign else "")


@dataclass(frozen=True, slots=True)
class LayerSummary:
    layer: str  # nodes | request | tool_calls | response | session
    status: str  # same | changed
    first_divergence: Optional[str] = None
    lead: bool = False  # this layer holds the divergence the case leads with (what `diff` names first)


@dataclass(frozen=True, slots=True)
class CaseResult:
    id: str
    source: str
    eval_set_id: Optional[str]
    eval_id: str
    agent: Optional[str]
    mode: str
    status: CaseStatus
    metrics: tuple[MetricResult, ...] = ()
    layers: tuple[LayerSummary, ...] = ()
    error: Optional[str] = None
    description: Optional[str] = None
    runs: tuple[RunRecord, ...] = field(default=(), repr=False)
    #: whose rules scored it, e.g. "ADK 1.19.0" (the version its agent ran on); None when not scored
    scored_as: Optional[str] = None
    #: tokens spent by live model calls and judge calls: {"agent"|"judge": {model: {"input", "output"}}}
    usage: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    #: one run's wall time and tool calls, the mean over the repeats (None: no run, or not known)
    seconds: Optional[float] = None
    tool_calls: Optional[float] = None
    model_calls: Optional[float] = None
    #: a failing case's failure cluster: the signature of its first divergence (`diff.clusters`)
    cluster: Optional[str] = None
    #: where an erroring case's failure is in the project's code (`agent.py:34`, from the project
    #: root), and the traceback trimmed to the project's frames
    error_location: Optional[str] = None
    error_trace: Optional[str] = None
    #: over its runs (live, repeated or held to a minimum pass rate): the pass count, rate and interval
    pass_rate: Optional[PassRate] = None
    #: what was scored, when it is not a run of the case's own: a traced conversation's file, line and id
    origin: Optional[str] = None

    @property
    def category(self) -> str:
        return self.eval_set_id or ""

    @property
    def disagreeing(self) -> bool:
        """Its repeats disagree (some passed, some failed, none errored): accepting one means choosing which."""
        statuses = {run.status for run in self.runs}
        return len(self.runs) > 1 and {CaseStatus.PASSED, CaseStatus.FAILED} <= statuses and not any(run.error for run in self.runs)

    @property
    def located_error(self) -> str:
        """The error led by where it is in the project's code when that is known:
        `agents/x/agent.py:5: KeyError: 'rome' (turn 1)`."""
        error = self.error or ""
        if not self.error_location:
            return error
        turn, sep, rest = error.partition(": ")
        if sep and turn.startswith("turn ") and turn[5:].isdigit():
            return f"{self.error_location}: {rest} ({turn})"
        return f"{self.error_location}: {error}"


def slim(result: CaseResult) -> CaseResult:
    """What a long run keeps of a finished case: its result without its runs' invocations (the bulk of
    it), and, when it passed, without each run's own metric values (the case's are kept; only a failing
    metric's runs are shown: its judge's reasons). What the table and every report but the CSV and ADK's
    need, so a run of many thousand cases keeps a little of each."""
    passed = result.status is CaseStatus.PASSED
    return replace(result, runs=tuple(RunRecord((), None, () if passed else run.metrics, run.status, run.error) for run in result.runs))


@dataclass(frozen=True)
class Summary:
    passed: int = 0
    failed: int = 0
    error: int = 0
    not_evaluated: int = 0
    flaky: int = 0
    new: int = 0
    inconclusive: int = 0
    held: int = 0  # cases held to a minimum pass rate (of any status; not part of the total)

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.error + self.not_evaluated + self.flaky + self.new + self.inconclusive

    @property
    def all_passed(self) -> bool:
        return self.total == self.passed


def summarize(cases: Sequence[CaseResult]) -> Summary:
    counts = {status.value: 0 for status in CaseStatus}
    held = 0
    for case in cases:
        counts[case.status.value] += 1
        held += case.pass_rate is not None and case.pass_rate.min_pass_rate is not None
    return Summary(**counts, held=held)
