"""Running cases: jobs for the workers, then scores, verdicts and diffs — as results stream in.

* A conformance case runs in replay by default: the agent's own code runs, every model call and
  tool result is answered from the recording, and the verdict is ADK's (requests, tool calls,
  events and session must match), reached without stopping at the first difference. Each recorded
  streaming mode is replayed, as `adk conformance test` does.
* In live mode a conformance case is scored evaluation-style: tool trajectory IN_ORDER and ROUGE-1
  of each turn's answer against the recording (thresholds configurable).
* An EvalSet case runs live and is scored with its `test_config.json`, exactly as ADK scores it;
  `num_runs` repeats run concurrently and disagreeing repeats make the case `flaky`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import AsyncIterator, Literal, Optional, Sequence

from agentdiff.core.project.agents import resolve_agent
from agentdiff.core.run.baseline import REPLAY_CRITERIA, Baseline, NotRecorded, load_baseline
from agentdiff.core.diff.model import CaseDiff, DiffCriteria
from agentdiff.core.formats.conformance import StreamingMode
from agentdiff.core.diff.layers import diff_case
from agentdiff.core.project.discovery import CaseRef, ConformanceCaseRef, EvalCaseRef
from agentdiff.core.formats.eval_config import EvalConfig, MatchType, eval_metrics
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.scoring.results import CaseResult, CaseStatus, LayerSummary, RunRecord
from agentdiff.core.traces.from_run import invocations_from_output, trace_from_output
from agentdiff.core.scoring.verdicts import aggregate, case_verdict, failed_run, score_run
from agentdiff.core.traces.model import Trace
from agentdiff.core.worker.jobs import AgentRef, Job, Message, RunOutput
from agentdiff.core.worker.pool import WorkerPool

Mode = Literal["replay", "live"]
RAN_PAST = "ran past the recording"


@dataclass(frozen=True)
class RunOptions:
    mode: Optional[Mode] = None  # None: replay for conformance cases, live for EvalSet cases
    num_runs: int = 1
    timeout: Optional[float] = None  # per run; None: the pool's
    run_tools: bool = False
    streaming: Optional[StreamingMode] = None  # conformance: one mode; None: every recorded mode
    agents_dirs: tuple[Path, ...] = ()
    mapping: dict[str, str] = field(default_factory=dict)
    live_trajectory: MatchType = MatchType.IN_ORDER  # conformance cases in live mode
    live_response_threshold: float = 0.8


@dataclass(frozen=True)
class CaseRun:
    """Everything one run of a case produced: the result, the diff, the traces, the raw outputs."""

    ref: CaseRef
    result: CaseResult
    diff: Optional[CaseDiff] = None
    baseline: Optional[Baseline] = None
    trace: Optional[Trace] = None  # the actual trace the diff shows (the first failing run's)
    outputs: tuple[RunOutput, ...] = ()  # every run's output; `trace_from_output` makes any a trace

    @property
    def files_read(self) -> frozenset[str]:
        return frozenset(path for out in self.outputs for path in out.files_read)


def layer_summaries(diff: Optional[CaseDiff]) -> tuple[LayerSummary, ...]:
    if diff is None:
        return ()
    return tuple(LayerSummary(s.layer, s.status, s.summary) for s in diff.layers if s.status != "absent")


def _result(ref: CaseRef, agent: Optional[AgentRef], mode: str, status: CaseStatus, **extra) -> CaseResult:
    if isinstance(ref, EvalCaseRef):
        set_id: Optional[str] = ref.eval_set.eval_set.eval_set_id
        eval_id = ref.case.eval_id
        description = None
    else:
        set_id, eval_id, description = ref.case.category, ref.case.name, ref.case.spec.description
    return CaseResult(
        id=ref.id, source=ref.source, eval_set_id=set_id, eval_id=eval_id, agent=agent.label if agent else None,
        mode=mode, status=status, description=description, **extra,
    )


def _messages_for_eval_case(ref: EvalCaseRef) -> list[Message]:
    return [Message(content=inv.user_content.model_dump(mode="json", exclude_none=True)) for inv in ref.case.conversation or []]


def _messages_for_conformance(ref: ConformanceCaseRef) -> list[Message]:
    messages = []
    for message in ref.case.spec.user_messages:
        if message.content is not None:
            content = message.content.model_dump(mode="json", exclude_none=True)
        else:
            content = {"role": "user", "parts": [{"text": message.text or ""}]}
        messages.append(Message(content=content, state_delta=message.state_delta))
    return messages


async def run_case(ref: CaseRef, pool: WorkerPool, options: RunOptions, root: Path) -> CaseRun:
    resolution = resolve_agent(ref, root, options.agents_dirs, options.mapping)
    mode = options.mode or ("replay" if isinstance(ref, ConformanceCaseRef) else "live")
    if resolution.agent is None:
        return CaseRun(ref, _result(ref, None, mode, CaseStatus.ERROR, error=resolution.error))
    agent = resolution.agent
    if isinstance(ref, EvalCaseRef):
        return await _run_eval_case(ref, agent, pool, options)
    if mode == "replay":
        return await _replay_conformance(ref, agent, pool, options)
    return await _live_conformance(ref, agent, pool, options)


async def run_cases(refs: Sequence[CaseRef], pool: WorkerPool, options: RunOptions, root: Path) -> AsyncIterator[CaseRun]:
    """Run every case (concurrency is the pool's); yield each as it finishes."""
    tasks = [asyncio.ensure_future(run_case(ref, pool, options, root)) for ref in refs]
    try:
        for next_done in asyncio.as_completed(tasks):
            yield await next_done
    finally:
        for task in tasks:
            task.cancel()


# --- EvalSet cases ----------------------------------------------------------------------------------


def _eval_case_job(ref: EvalCaseRef, agent: AgentRef, mode: str, messages: list[Message]) -> Job:
    """The job of an EvalSet case: its session_input as ADK's evaluation generator uses it."""
    session = ref.case.session_input
    return Job(
        case_id=ref.id, agent=agent, mode=mode,  # type: ignore[arg-type]
        app_name=(session.app_name if session and session.app_name else agent.name),
        user_id=(session.user_id if session and session.user_id else "test_user_id"),
        initial_state=dict(session.state) if session and session.state else {},
        messages=messages,
    )


async def _run_eval_case(ref: EvalCaseRef, agent: AgentRef, pool: WorkerPool, options: RunOptions) -> CaseRun:
    if ref.case.conversation is None:
        return CaseRun(ref, _result(ref, agent, "live", CaseStatus.NOT_EVALUATED, error="conversation_scenario cases need ADK's user simulator, which agentdiff does not run"))
    baseline = load_baseline(ref)
    messages = _messages_for_eval_case(ref)
    job = _eval_case_job(ref, agent, "live", messages)
    repeats = max(1, options.num_runs)
    outputs = await asyncio.gather(*(pool.run(job.model_copy(update={"repeat": r}), options.timeout) for r in range(repeats)))
    metrics = eval_metrics(ref.config.config)
    expected = list(ref.case.conversation)
    runs = tuple(_score(out, messages, expected, metrics) for out in outputs)
    return _finish_scored(ref, agent, baseline, outputs, messages, runs, baseline.criteria)


def _score(out: RunOutput, messages: Sequence[Message], expected: Sequence[Invocation], metrics) -> RunRecord:
    actual = invocations_from_output(out, messages)
    if out.error is not None:
        return failed_run(actual, expected, out.error)
    return score_run(metrics, actual, expected)


def _finish_scored(
    ref: CaseRef, agent: AgentRef, baseline: Baseline, outputs: Sequence[RunOutput], messages: Sequence[Message],
    runs: Sequence[RunRecord], criteria: DiffCriteria,
) -> CaseRun:
    metrics = aggregate(runs)
    status, reason = case_verdict(runs, metrics)
    shown = next((i for i, run in enumerate(runs) if run.status is not CaseStatus.PASSED), 0)
    trace = trace_from_output(outputs[shown], messages)
    diff = diff_case(baseline.trace, trace, criteria, ref.id, baseline.sources)
    result = _result(ref, agent, "live", status, metrics=metrics, error=reason, runs=tuple(runs), layers=layer_summaries(diff))
    return CaseRun(ref, result, diff, baseline, trace, tuple(outputs))


# --- conformance cases ------------------------------------------------------------------------------


def _conformance_job(ref: ConformanceCaseRef, agent: AgentRef, mode: str, streaming: StreamingMode, options: RunOptions) -> Job:
    spec = ref.case.spec
    baseline = ref.case.baselines.get(streaming)
    recordings = [r.model_dump(mode="json", exclude_none=True) for r in baseline.recordings.recordings] if baseline else []
    session = baseline.session if baseline else None
    return Job(
        case_id=ref.id, agent=agent, mode=mode,  # type: ignore[arg-type]
        app_name=(session.app_name if session and session.app_name else spec.agent),
        user_id=(session.user_id if session and session.user_id else "adk_conformance_test_user"),
        initial_state=dict(spec.initial_state),
        messages=_messages_for_conformance(ref),
        recordings=recordings if mode == "replay" else [],
        streaming=streaming,
        run_tools=options.run_tools,
    )


def replay_failed(diff: CaseDiff) -> bool:
    """ADK's replay verdict: any request, tool-call or session difference fails the case."""
    return any(d.counts and d.layer in ("request", "tool_calls", "session") for d in diff.divergences)


async def _replay_conformance(ref: ConformanceCaseRef, agent: AgentRef, pool: WorkerPool, options: RunOptions) -> CaseRun:
    modes = [options.streaming] if options.streaming else sorted(ref.case.baselines)
    if not modes or any(mode not in ref.case.baselines for mode in modes):
        missing = options.streaming or "any streaming mode"
        return CaseRun(ref, _result(ref, agent, "replay", CaseStatus.NOT_EVALUATED, error=f"not recorded for {missing}: record it with `agentdiff record {ref.id}`"))
    outputs = await asyncio.gather(*(pool.run(_conformance_job(ref, agent, "replay", m, options), options.timeout) for m in modes))
    messages = _messages_for_conformance(ref)
    shown: Optional[tuple[CaseDiff, Baseline, Trace]] = None
    status, problems = CaseStatus.PASSED, []
    for mode, out in zip(modes, outputs, strict=True):
        baseline = load_baseline(ref, mode)
        trace = trace_from_output(out, messages)
        diff = diff_case(baseline.trace, trace, REPLAY_CRITERIA, ref.id, baseline.sources)
        crashed = out.error is not None and not out.error.startswith(RAN_PAST)
        if crashed:
            status = CaseStatus.ERROR
            problems.append(f"{mode}: {out.error}")
        elif replay_failed(diff) or out.error:
            if status is CaseStatus.PASSED:
                status = CaseStatus.FAILED
            first = diff.first_divergence
            problems.append(f"{mode}: {first.summary if first else out.error}")
        if shown is None or (status is not CaseStatus.PASSED and not shown[0].divergences):
            shown = (diff, baseline, trace)
    assert shown is not None
    diff, baseline, trace = shown
    error = "; ".join(problems) if problems and status is CaseStatus.ERROR else None
    result = _result(ref, agent, "replay", status, error=error, layers=layer_summaries(diff))
    return CaseRun(ref, result, diff, baseline, trace, tuple(outputs))


def live_config(options: RunOptions) -> EvalConfig:
    return EvalConfig.model_validate(
        {
            "criteria": {
                "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": options.live_trajectory.name},
                "response_match_score": options.live_response_threshold,
            }
        }
    )


def _expected_invocations(trace: Trace) -> list[Invocation]:
    return [
        Invocation.model_validate(
            {
                "user_content": {"role": "user", "parts": [{"text": turn.user_text}]},
                "final_response": {"role": "model", "parts": [{"text": turn.final_response or ""}]},
                "intermediate_data": {"tool_uses": [{"name": c.name, "args": c.args} for c in turn.tool_calls]},
            }
        )
        for turn in trace.turns
    ]


async def _live_conformance(ref: ConformanceCaseRef, agent: AgentRef, pool: WorkerPool, options: RunOptions) -> CaseRun:
    streaming = options.streaming or ("none" if "none" in ref.case.baselines or not ref.case.baselines else "sse")
    try:
        baseline = load_baseline(ref, streaming)
    except NotRecorded as exc:
        return CaseRun(ref, _result(ref, agent, "live", CaseStatus.NOT_EVALUATED, error=str(exc)))
    job = _conformance_job(ref, agent, "live", streaming, options)
    repeats = max(1, options.num_runs)
    outputs = await asyncio.gather(*(pool.run(job.model_copy(update={"repeat": r}), options.timeout) for r in range(repeats)))
    messages = _messages_for_conformance(ref)
    config = live_config(options)
    expected = _expected_invocations(baseline.trace)
    runs = tuple(_score(out, messages, expected, eval_metrics(config)) for out in outputs)
    criteria = DiffCriteria(options.live_trajectory, response_threshold=options.live_response_threshold)
    return _finish_scored(ref, agent, baseline, outputs, messages, runs, criteria)


# --- record -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordOutcome:
    ref: CaseRef
    written: tuple[str, ...] = ()  # files, as shown
    error: Optional[str] = None
    output: Optional[RunOutput] = None


async def record_case(ref: CaseRef, pool: WorkerPool, options: RunOptions, root: Path) -> RecordOutcome:
    """Run the case live and make what it did the baseline (journaled; `undo_last` reverts it)."""
    from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError
    from agentdiff.core.baselines.record import RecordError, record_conformance, record_eval_case

    resolution = resolve_agent(ref, root, options.agents_dirs, options.mapping)
    if resolution.agent is None:
        return RecordOutcome(ref, error=resolution.error)
    agent = resolution.agent
    try:
        if isinstance(ref, ConformanceCaseRef):
            mode: StreamingMode = options.streaming or "none"
            job = _conformance_job(ref, agent, "record", mode, options)
            out = await pool.run(job, options.timeout)
            entry = record_conformance(ref, out, mode, root)
        else:
            if ref.case.conversation is None:
                return RecordOutcome(ref, error="conversation_scenario cases have no expected turns to record")
            messages = _messages_for_eval_case(ref)
            job = _eval_case_job(ref, agent, "record", messages)
            out = await pool.run(job, options.timeout)
            entry = record_eval_case(ref, out, messages, root, agent.label)
    except (RecordError, BaselineConflict, BaselineWriteError) as exc:
        return RecordOutcome(ref, error=str(exc))
    return RecordOutcome(ref, tuple(file["path"] for file in entry.files), output=out)


# --- re-score ---------------------------------------------------------------------------------------


def rescore_case(ref: CaseRef, previous: CaseRun, options: RunOptions) -> CaseRun:
    """Score a case's cached run again, against its current expectations and criteria; no agent call.

    For a replay, the cached run is diffed against the current recordings."""
    if not previous.outputs:
        raise ValueError("no cached run to re-score")
    agent = None
    if previous.result.agent:
        name, _, sub = previous.result.agent.partition("/")
        agent = AgentRef(agents_dir="", name=name, sub_agent=sub or None)
    outputs = previous.outputs
    if isinstance(ref, EvalCaseRef):
        if ref.case.conversation is None:
            return CaseRun(ref, _result(ref, agent, "live", CaseStatus.NOT_EVALUATED, error="conversation_scenario cases are not run"))
        baseline = load_baseline(ref)
        messages = _messages_for_eval_case(ref)
        runs = tuple(_score(out, messages, list(ref.case.conversation), eval_metrics(ref.config.config)) for out in outputs)
        return _finish_scored(ref, agent, baseline, outputs, messages, runs, baseline.criteria)  # type: ignore[arg-type]
    messages = _messages_for_conformance(ref)
    if previous.result.mode == "live":
        streaming = previous.baseline.mode if previous.baseline and previous.baseline.mode else "none"
        baseline = load_baseline(ref, streaming)
        config = live_config(options)
        expected = _expected_invocations(baseline.trace)
        runs = tuple(_score(out, messages, expected, eval_metrics(config)) for out in outputs)
        criteria = DiffCriteria(options.live_trajectory, response_threshold=options.live_response_threshold)
        return _finish_scored(ref, agent, baseline, outputs, messages, runs, criteria)  # type: ignore[arg-type]
    mode = previous.baseline.mode if previous.baseline and previous.baseline.mode else None
    baseline = load_baseline(ref, mode)
    modes = [options.streaming] if options.streaming else sorted(ref.case.baselines)
    index = modes.index(baseline.mode) if baseline.mode in modes and modes.index(baseline.mode) < len(outputs) else 0
    trace = trace_from_output(outputs[index], messages)  # the output of the mode this baseline records
    diff = diff_case(baseline.trace, trace, REPLAY_CRITERIA, ref.id, baseline.sources)
    failed = replay_failed(diff) or bool(outputs[index].error)
    status = CaseStatus.FAILED if failed else CaseStatus.PASSED
    result = _result(ref, agent, "replay", status, layers=layer_summaries(diff))
    return CaseRun(ref, result, diff, baseline, trace, outputs)
