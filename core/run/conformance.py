"""Running a conformance case.

* replay (the default): the agent's own code runs, every model call and tool result answered from
  the recording; the verdict is ADK's (requests, tool calls, events and session must match), reached
  without stopping at the first difference. Each recorded streaming mode is replayed, as
  `adk conformance test` does.
* live: scored evaluation-style, tool trajectory (IN_ORDER by default) and ROUGE-1 of each turn's
  answer against the recording, with configurable thresholds.
"""

from __future__ import annotations

import asyncio
from typing import Optional, Sequence

from agentdiff.core.diff.case import diff_case
from agentdiff.core.diff.explain import explain_replay
from agentdiff.core.diff.model import CaseDiff, DiffCriteria
from agentdiff.core.formats.conformance import StreamingMode
from agentdiff.core.formats.eval_config import eval_metrics
from agentdiff.core.project.discovery import ConformanceCaseRef
from agentdiff.core.run.case_run import CaseRun, case_result, layer_summaries, unrun
from agentdiff.core.run.expected import (
    REPLAY_CRITERIA,
    Baseline,
    NotRecorded,
    expected_invocations,
    load_baseline,
)
from agentdiff.core.run.jobs import conformance_job, messages_for
from agentdiff.core.run.options import RunOptions, live_config
from agentdiff.core.run.scored import rules_of, scored_case_run
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.traces.from_run import trace_from_output
from agentdiff.core.traces.model import Trace
from agentdiff.core.worker.jobs import AgentRef, RunOutput
from agentdiff.core.run.cpu import cpu_step, small

RAN_PAST = "ran past the recording"


def replay_failed(diff: CaseDiff) -> bool:
    """ADK's replay verdict: any request, tool-call or session difference fails the case."""
    return any(d.counts and d.layer in ("request", "tool_calls", "session") for d in diff.divergences)


def replay_modes(ref: ConformanceCaseRef, options: RunOptions) -> list[StreamingMode]:
    return [options.streaming] if options.streaming else sorted(ref.case.baselines)


async def replay_conformance(ref: ConformanceCaseRef, agent: AgentRef, pool, options: RunOptions) -> CaseRun:
    modes = replay_modes(ref, options)
    if not modes or any(mode not in ref.case.baselines for mode in modes):
        missing = options.streaming or "any streaming mode"
        return unrun(ref, agent, "replay", CaseStatus.NOT_EVALUATED, f"not recorded for {missing}: record it with `agentdiff record {ref.id}`")
    outputs = await asyncio.gather(*(pool.run(conformance_job(ref, agent, "replay", m, options), options.timeout) for m in modes))
    return await cpu_step(small(outputs), judge_replay, ref, agent, modes, outputs)  # a big run's diffing: off the loop


def judge_replay(ref: ConformanceCaseRef, agent: Optional[AgentRef], modes: Sequence[StreamingMode], outputs: Sequence[RunOutput]) -> CaseRun:
    """The replays of each streaming mode against its recordings; the case shows the first that diverged."""
    messages = messages_for(ref)
    shown: Optional[tuple[int, CaseDiff, Baseline, Trace]] = None
    status, problems = CaseStatus.PASSED, []
    for index, (mode, out) in enumerate(zip(modes, outputs, strict=True)):
        baseline = load_baseline(ref, mode)
        trace = trace_from_output(out, messages)
        diff = explain_replay(diff_case(baseline.trace, trace, REPLAY_CRITERIA, ref.id, baseline.sources))
        crashed = out.error is not None and not out.error.startswith(RAN_PAST)
        if crashed:
            status = CaseStatus.ERROR
            problems.append(f"{mode}: {out.error}")
        elif replay_failed(diff) or out.error:
            if status is CaseStatus.PASSED:
                status = CaseStatus.FAILED
            first = diff.first_divergence
            problems.append(f"{mode}: {first.summary if first else out.error}")
        if shown is None or (status is not CaseStatus.PASSED and not shown[1].divergences):
            shown = (index, diff, baseline, trace)
    assert shown is not None
    index, diff, baseline, trace = shown
    error = "; ".join(problems) if problems and status is CaseStatus.ERROR else None
    layers = layer_summaries(diff) if status is not CaseStatus.ERROR else ()  # an error shows no diff summary
    result = case_result(ref, agent, "replay", status, error=error, layers=layers)
    return CaseRun(ref, result, agent, diff, baseline, trace, tuple(outputs), index, tuple(modes))


def live_streaming_mode(ref: ConformanceCaseRef, options: RunOptions) -> StreamingMode:
    return options.streaming or ("none" if "none" in ref.case.baselines or not ref.case.baselines else "sse")


async def live_conformance(ref: ConformanceCaseRef, agent: AgentRef, pool, options: RunOptions) -> CaseRun:
    streaming = live_streaming_mode(ref, options)
    try:
        load_baseline(ref, streaming)
    except NotRecorded as exc:
        return unrun(ref, agent, "live", CaseStatus.NOT_EVALUATED, str(exc))
    job = conformance_job(ref, agent, "live", streaming, options)
    repeats = max(1, options.num_runs)
    outputs = await asyncio.gather(*(pool.run(job.model_copy(update={"repeat": options.first_repeat + r}), options.timeout) for r in range(repeats)))
    return await cpu_step(small(outputs), score_live_conformance, ref, agent, streaming, outputs, options)


def score_live_conformance(
    ref: ConformanceCaseRef, agent: Optional[AgentRef], streaming: StreamingMode, outputs: Sequence[RunOutput], options: RunOptions
) -> CaseRun:
    baseline = load_baseline(ref, streaming)
    metrics = eval_metrics(live_config(options), rules_of(outputs))
    criteria = DiffCriteria(options.live_trajectory, response_threshold=options.live_response_threshold)
    return scored_case_run(ref, agent, baseline, outputs, [messages_for(ref)] * len(outputs), expected_invocations(baseline.trace), metrics,
                           criteria)
