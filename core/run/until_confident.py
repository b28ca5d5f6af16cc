"""Running inconclusive cases again until their verdict settles (`run --until-confident`, the TUI's `u`).

The rule is group-sequential with a Bonferroni split: a case starting with n runs is looked at after
n, 2n, 4n, … runs (each look doubles them) up to `most`; with L looks in all, each look's interval is
taken at 1 − (1 − confidence) / L, so the chance that any look settles wrongly stays at most
1 − confidence. Looking at a 95% interval after every run and stopping at the first that settles
would be wrong far more often than 5% of the time (every look is another chance to stop on a lucky
streak); doubling keeps L small (10 runs up to 100: 5 looks at 99% each), so the price is a few runs.
A case stops as soon as its verdict settles; one still unsettled at `most` stays inconclusive.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Callable, Mapping, Optional, Sequence

from agentdiff.core.project.agent_memo import AgentMemo
from agentdiff.core.run.case_run import CaseRun, summarised
from agentdiff.core.run.journey import apply_checks
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.pass_rule import held_to_rule
from agentdiff.core.run.usage import estimated_cost, merge, total_tokens
from agentdiff.core.scoring.confidence import looks, next_runs
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.scoring.verdicts import aggregate, case_verdict

def with_looks(options: RunOptions, most: int) -> RunOptions:
    """`options` whose pass-rate rule holds every look of a run-until-confident at the stricter level."""
    count = looks(max(1, options.num_runs), max(most, options.num_runs))
    return dataclasses.replace(options, pass_rules=dataclasses.replace(options.pass_rules, looks=count))


def merged(first: CaseRun, more: CaseRun) -> CaseRun:
    """One case's runs and the runs made after them, as one run of all of them: every repeat's record and
    output, the metrics over all of them, the verdict again; the repeat shown stays the first's."""
    runs = (*first.result.runs, *more.result.runs)
    metrics = aggregate(runs)
    status, reason = case_verdict(runs, metrics)
    usage = merge([first.result.usage, more.result.usage])
    result = dataclasses.replace(first.result, runs=runs, metrics=metrics, status=status, error=reason, usage=usage, pass_rate=None)
    outputs = (*first.outputs, *more.outputs)
    count = len(first.outputs)

    def view(index: int):
        source, at = (first, index) if index < count else (more, index - count)
        shown = source.showing(at)
        return shown.trace, shown.diff

    return dataclasses.replace(first, result=result, outputs=outputs, restage=view if len(outputs) > 1 else None)


@dataclass(frozen=True)
class Plan:
    """What a run-until-confident may spend: the cases, and at most how many more runs."""

    cases: int
    most_runs: int  # more runs at most, all cases together
    model_calls: float  # at most, from the runs they made
    tokens: int
    cost: Optional[float]

    def line(self) -> str:
        if not self.cases:
            return "no case is inconclusive: nothing to run"
        said = f"{self.cases} inconclusive case(s): at most {self.most_runs:,} more runs"
        if self.model_calls:
            said += f", ≈ {self.model_calls:,.0f} model calls, {self.tokens:,} tokens"
            if self.cost is not None:
                said += f", est. ${self.cost:.2f}"
            said += " at the most (each run as their last ones)"
        return said + "; each case stops as soon as its verdict settles"


def plan(runs: Sequence[CaseRun], most: int, prices: Optional[Mapping] = None) -> Plan:
    """The cost of the inconclusive runs of `runs` growing to `most` runs each, at their runs' own cost."""
    unsettled = [run for run in runs if run.result.status is CaseStatus.INCONCLUSIVE]
    more = [max(0, most - len(run.result.runs)) for run in unsettled]
    calls = sum((run.result.model_calls or 0) * extra for run, extra in zip(unsettled, more))
    usage = merge([_scaled(run.result.usage, extra / max(1, len(run.result.runs))) for run, extra in zip(unsettled, more)])
    return Plan(len(unsettled), sum(more), calls, total_tokens(usage), estimated_cost(usage, prices) if prices else None)


def _scaled(usage: dict, factor: float) -> dict:
    return {side: {model: {k: round(v * factor) for k, v in tokens.items()} for model, tokens in models.items()}
            for side, models in usage.items()}


RunCase = Callable[[CaseRun, RunOptions], Awaitable[CaseRun]]


async def settle(run: CaseRun, pool, options: RunOptions, root: Path, most: int, agents: Optional[AgentMemo] = None,
                 looked: Callable[[CaseRun], None] = lambda run: None) -> CaseRun:
    """`run` given more runs, look by look, until its verdict settles or it has `most` (`options`: those of
    `with_looks`). `looked(run)` after each look."""
    from agentdiff.core.run.runner import run_case

    agents = agents or AgentMemo(root)
    while run.result.status is CaseStatus.INCONCLUSIVE:
        have = len(run.result.runs)
        extra = next_runs(have, most)
        if extra <= 0:
            break
        more = await run_case(run.ref, pool, dataclasses.replace(options, num_runs=extra, first_repeat=have), root, agents)
        if not more.result.runs:  # it could not run (its agent gone, say): that is its verdict now
            return more
        run = merged(run, more)
        if run.ref.checks:  # its journey checks over every run (user code: off the loop, as the runner runs them)
            run = await asyncio.to_thread(apply_checks, run)
        run = summarised(held_to_rule(run, options))
        looked(run)
    return run


async def settle_all(runs: Sequence[CaseRun], pool, options: RunOptions, root: Path, most: int,
                     looked: Callable[[CaseRun], None] = lambda run: None) -> list[CaseRun]:
    """Every inconclusive run of `runs` settled side by side; the others as they are, in order."""
    agents = AgentMemo(root)
    return list(await asyncio.gather(*(settle(run, pool, options, root, most, agents, looked)
                                       if run.result.status is CaseStatus.INCONCLUSIVE else _same(run) for run in runs)))


async def _same(run: CaseRun) -> CaseRun:
    return run
