"""The expected side of a case (its baseline) as a trace, with the criteria and files it is judged by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from agentdiff.core.diff.criteria import criteria_from_config
from agentdiff.core.diff.model import DiffCriteria
from agentdiff.core.diff.source_index import SourceIndex
from agentdiff.core.formats.conformance import StreamingMode
from agentdiff.core.formats.eval_config import MatchType
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.project.dataset_cases import REQUESTS_KEY, DatasetCaseRef, sent_message
from agentdiff.core.project.case_refs import CaseRef, ConformanceCaseRef, EvalCaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.traces.from_files import (
    eval_case_paths,
    trace_from_invocations,
    trace_from_recordings,
)
from agentdiff.core.traces.model import Trace


@dataclass(frozen=True)
class Baseline:
    case_id: str
    trace: Trace
    criteria: DiffCriteria
    sources: SourceIndex
    mode: Optional[StreamingMode] = None  # conformance: the streaming mode of the recordings


class NotRecorded(Exception):
    """A conformance case with no recordings for the requested mode."""


#: Replay compares tool calls one by one, by name and args, as ADK's ReplayPlugin does.
REPLAY_CRITERIA = DiffCriteria(match_type=MatchType.EXACT)


def load_baseline(ref: CaseRef, mode: Optional[StreamingMode] = None) -> Baseline:
    """What a case is diffed against (a conformance case's: the recordings of `mode`, or of the mode it has)."""
    return family_of(ref).baseline(ref, mode)


def eval_set_baseline(ref: EvalCaseRef) -> Baseline:
    """An EvalSet case's expected turns, located in its file."""
    index = ref.eval_set.index_of(ref.eval_id)
    trace = trace_from_invocations(ref.case.conversation or [], eval_case_paths(ref.eval_set, index))
    return Baseline(ref.id, trace, criteria_from_config(ref.config.config), SourceIndex.of_eval_set(ref.eval_set))


def conformance_baseline(ref: ConformanceCaseRef, mode: Optional[StreamingMode] = None) -> Baseline:
    """A conformance case's recordings of `mode` (by default: `none`'s if it has them, else `sse`'s)."""
    case = ref.case
    if not case.baselines:
        raise NotRecorded(f"{case.display} has no recordings yet (record it with `agentdiff record {case.display}`)")
    chosen: StreamingMode = mode or ("none" if "none" in case.baselines else "sse")
    if chosen not in case.baselines:
        raise NotRecorded(f"{case.display} has no recordings for streaming mode {chosen}")
    baseline = case.baselines[chosen]
    sources = SourceIndex([baseline.recordings_source, baseline.session_source, case.spec_source])
    return Baseline(ref.id, trace_from_recordings(case, chosen), REPLAY_CRITERIA, sources, chosen)


def accepted_events(ref: DatasetCaseRef) -> list[dict[str, Any]]:
    """The baseline's events after the user's message it answered (a continuation's earlier events,
    the dataset's own, are not the baseline's)."""
    if ref.baseline is None:
        return []
    events = [event.model_dump(mode="json", exclude_none=True) for event in ref.baseline.events()]
    last_user = max((i for i, e in enumerate(events) if e.get("author") == "user"), default=-1)
    return events[last_user + 1:]


def dataset_baseline(ref: DatasetCaseRef) -> Baseline:
    """An agents-cli case's accepted run, from its baseline file (new: the message alone), located in
    that file (its events' paths) for `e`."""
    from agentdiff.core.traces.agents_cli import baseline_output
    from agentdiff.core.traces.from_run import trace_from_output
    from agentdiff.core.worker.jobs import Message

    message = sent_message(ref.written)
    exchanges = (ref.baseline.model_extra or {}).get(REQUESTS_KEY) if ref.baseline is not None else None
    accepted = baseline_output(message, accepted_events(ref), exchanges if isinstance(exchanges, list) else ())
    trace = trace_from_output(accepted, [Message(content=message)])
    sources = [ref.eval_set.source, *([ref.baseline_source] if ref.baseline is not None and ref.baseline_source else [])]
    return Baseline(ref.id, trace, DATASET_CRITERIA, SourceIndex(sources))


#: A dataset case's run is diffed against its baseline as an EvalSet case's is (tool calls exactly).
DATASET_CRITERIA = DiffCriteria(match_type=MatchType.EXACT)


def expected_invocations(trace: Trace) -> list[Invocation]:
    """A recorded conformance trace as the expected invocations of an evaluation-style (live) score."""
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
