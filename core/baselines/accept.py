"""Accepting actual runs as the baseline: whole cases, one turn, or one layer — planned first (the
exact file change, for a preview), then written as one journaled transaction for undo.

Several accepts (`A`, `agentdiff accept --all-failed`) make one plan, and so one journal entry: the
cases of one eval set file are applied to it one after another, then the file is written once.
Eval set files are edited in place (`json_edit`): only the values accepted change, the rest of the
file keeps its bytes. A plan that would change nothing raises `NothingToAccept`.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional, Sequence

from agentdiff.core.formats.source_file import display_path
from agentdiff.core.baselines.documents import (
    ASSISTANT,
    REGISTRATION_FILE,
    RecordError,
    conformance_writes,
    registration,
    registration_write,
    static_intermediate,
)
from agentdiff.core.baselines.case_edits import EvalFileEdit
from agentdiff.core.baselines.journal import FileWrite, JournalEntry, read_exact, write_baseline
from agentdiff.core.formats.load_error import child_key
from agentdiff.core.baselines.dataset_accept import DatasetFile, accept_dataset_case, dataset_writes
from agentdiff.core.project.dataset_cases import DatasetCaseRef
from agentdiff.core.project.discovery import ConformanceCaseRef, EvalCaseRef
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.worker.jobs import RunOutput

Scope = Literal["case", "turn", "layer"]
_TOOL_KEYS = ("tool_uses", "toolUses", "tool_responses", "toolResponses", "invocation_events", "invocationEvents")


class NothingToAccept(RecordError):
    """The baseline already says what the run did: nothing would be written."""


@dataclass(frozen=True)
class AcceptRequest:
    run: CaseRun
    scope: Scope = "case"
    turn: Optional[int] = None
    layer: Optional[str] = None
    repeat: Optional[int] = None  # which run of a repeated case (required when they disagree)


def run_summaries(run: CaseRun) -> list[str]:
    """One line per repeat of a case: its verdict and its tool calls, to choose which to accept."""
    lines = []
    for index, record in enumerate(run.result.runs):
        calls = [call.name for invocation in record.actual for call in invocation.tool_calls()]
        lines.append(f"run {index + 1}: {record.status.value} · calls {', '.join(calls) or 'none'}")
    return lines


@dataclass(frozen=True)
class AcceptPlan:
    case_ids: tuple[str, ...]
    description: str  # "accept turn 2 (tool_calls) of …"
    writes: tuple[FileWrite, ...]
    preview: str  # unified diff of every file the accept changes

    @property
    def case_id(self) -> str:
        return self.case_ids[0]


def _preview(writes: Sequence[FileWrite], root: Path) -> str:
    """A unified diff of every baseline file; each registration file named in one line (its records
    say who accepted what, when: they differ every time and decide nothing)."""
    out, registrations = [], []
    for write in writes:
        shown = display_path(write.path, root)
        if write.path.name.endswith(REGISTRATION_FILE):
            registrations.append(shown)
            continue
        before = read_exact(write.path) if write.path.exists() else ""
        out += difflib.unified_diff(before.splitlines(keepends=True), write.text.splitlines(keepends=True), f"a/{shown}", f"b/{shown}")
    out += [f"(and the registration in {shown}: who accepted it, when, the agent's models and the files it read)\n" for shown in registrations]
    return "".join(out)


def _shown_output(run: CaseRun) -> RunOutput:
    out = run.shown_output
    if out is None:
        raise RecordError("there is no run to accept yet")
    if out.error:
        again = ""
        if isinstance(run.ref, ConformanceCaseRef) and run.result.mode == "replay":  # the recording cannot answer what now runs
            again = f": re-record it live (`agentdiff record {run.ref.id}`, ctrl+r in the TUI)"
        raise RecordError(f"{run.ref.id}: the run failed ({out.error}); there is nothing to accept{again}")
    return out


def _describe(request: AcceptRequest) -> str:
    of_run = f" (run {request.repeat + 1} of {len(request.run.outputs)})" if request.repeat is not None and len(request.run.outputs) > 1 else ""
    return _scope(request) + of_run


def _scope(request: AcceptRequest) -> str:
    if isinstance(request.run.ref, (ConformanceCaseRef, DatasetCaseRef)) or request.scope == "case" or request.turn is None and request.scope == "turn":
        return "the whole case"
    if request.scope == "turn":
        return f"turn {request.turn + 1}"
    return f"the {request.layer} layer" + (f" of turn {request.turn + 1}" if request.turn is not None else "")


def plan_accept(run: CaseRun, root: Path, scope: Scope = "case", turn: Optional[int] = None, layer: Optional[str] = None) -> AcceptPlan:
    return plan_accepts([AcceptRequest(run, scope, turn, layer)], root)


def plan_accepts(requests: Sequence[AcceptRequest], root: Path, assistant: str = "") -> AcceptPlan:
    """One plan for every request; `NothingToAccept` when none of them would change a file. `assistant`:
    the coding agent it is planned for (its registrations say so)."""
    token = ASSISTANT.set(assistant)
    try:
        return _plan_accepts(requests, root)
    finally:
        ASSISTANT.reset(token)


def _plan_accepts(requests: Sequence[AcceptRequest], root: Path) -> AcceptPlan:
    eval_files: dict[Path, EvalFileEdit] = {}
    datasets: dict[Path, DatasetFile] = {}
    writes: list[FileWrite] = []
    accepted: list[AcceptRequest] = []
    for request in requests:
        request = _chosen(request)
        out = _shown_output(request.run)
        ref = request.run.ref
        if isinstance(ref, ConformanceCaseRef):
            conformance = _conformance_writes(request.run, out, root)
            if conformance:
                writes += conformance
                accepted.append(request)
            continue
        if isinstance(ref, DatasetCaseRef):
            if accept_dataset_case(ref, out, datasets):
                accepted.append(request)
            continue
        assert isinstance(ref, EvalCaseRef)
        loaded = ref.eval_set
        if loaded.legacy:
            raise RecordError(f"{loaded.source.display} is in ADK's legacy format; migrate it before accepting into it")
        file = eval_files.setdefault(loaded.source.path, EvalFileEdit.of(loaded))
        index = loaded.index_of(ref.eval_id)
        before = copy.deepcopy(file.case(index))
        _apply(request, file.data)
        if file.case(index) != before:
            file.sidecar[ref.eval_id] = registration(out, request.run.agent.label if request.run.agent else "", root)
            accepted.append(request)
    for path, file in eval_files.items():
        if not file.changed():
            continue
        try:
            text = file.text()
        except ValueError as exc:  # say, a key written twice: the file cannot be edited in place
            raise RecordError(f"{file.loaded.source.display} cannot be edited in place: {exc}") from None
        writes.append(FileWrite(path, text, file.loaded.source.sha256))
        sidecar = path.with_name(path.name.split(".")[0] + "." + REGISTRATION_FILE)
        if file.sidecar:
            (first, record), *rest = file.sidecar.items()
            write = registration_write(sidecar, first, record, base=_pending(writes, sidecar), more=dict(rest))
            writes = [w for w in writes if w.path != sidecar] + [write]
    writes += dataset_writes(datasets)
    if not accepted or not writes:
        what = "these cases" if len(requests) > 1 else _describe(requests[0]) if requests else "it"
        raise NothingToAccept(f"nothing to accept: the baseline already says what the run did ({what})")
    ids = tuple(dict.fromkeys(r.run.ref.id for r in accepted))
    description = f"accept {_describe(accepted[0])}: {ids[0]}" if len(ids) == 1 else f"accept {len(ids)} cases"
    return AcceptPlan(ids, description, tuple(writes), _preview(writes, root))


def _chosen(request: AcceptRequest) -> AcceptRequest:
    """The request with its run showing the repeat asked for; a flaky case must say which."""
    run = request.run
    if request.repeat is not None:
        if not 0 <= request.repeat < max(len(run.outputs), 1):
            raise RecordError(f"{run.ref.id} has no run {request.repeat + 1} (it has {len(run.outputs)})")
        trace = run.trace if request.repeat == run.shown else None
        return dataclasses.replace(request, run=dataclasses.replace(run, shown=request.repeat, trace=trace, diff=None))
    if run.result.status is CaseStatus.FLAKY:
        raise RecordError(f"{run.ref.id} is flaky (its runs disagree): choose the run to accept; " + "; ".join(run_summaries(run)))
    return request


def _pending(writes: Sequence[FileWrite], path: Path) -> Optional[str]:
    """The text already planned for `path` in this plan (so registrations of one file accumulate)."""
    return next((w.text for w in writes if w.path == path), None)


def _conformance_writes(run: CaseRun, out: RunOutput, root: Path) -> list[FileWrite]:
    """The recordings, session and registration of a conformance case; none when the run matched."""
    if run.diff is not None and run.diff.same:
        return []
    ref = run.ref
    assert isinstance(ref, ConformanceCaseRef)
    mode = run.baseline.mode if run.baseline and run.baseline.mode else "none"
    return conformance_writes(ref.case.dir, mode, out, ref.case.spec.agent, root)


def _apply(request: AcceptRequest, data: Any) -> None:
    """Put the run's turns (or one turn, or one layer of it) into the eval set document `data`."""
    ref, run = request.run.ref, request.run
    assert isinstance(ref, EvalCaseRef)
    record = run.shown_record
    if record is None:
        raise RecordError("the run was not scored; there is nothing to accept")
    actual = record.actual
    index = ref.eval_set.index_of(ref.eval_id)
    case = data["eval_cases"][index]
    conversation = case[child_key(case, "conversation") or "conversation"]
    turns = range(len(conversation)) if request.scope == "case" or request.turn is None else [request.turn]
    for t in turns:
        if t >= len(conversation):
            raise RecordError(f"{ref.id} has {len(conversation)} turn{'s' if len(conversation) != 1 else ''}: there is no turn {t + 1}")
        if t >= len(actual):
            raise RecordError(f"the run did not reach turn {t + 1}")
        expected, invocation = conversation[t], actual[t]
        if request.scope != "layer" or request.layer == "response":
            key = child_key(expected, "final_response") or "final_response"
            if invocation.final_response is not None:
                expected[key] = invocation.final_response.model_dump(mode="json", exclude_none=True)
            else:
                expected.pop(key, None)
        if request.scope != "layer" or request.layer == "tool_calls":
            key = child_key(expected, "intermediate_data") or "intermediate_data"
            previous = expected.get(key) if isinstance(expected.get(key), dict) else {}
            static = static_intermediate(invocation)
            if request.scope == "layer":  # only the calls and their responses; intermediate texts stay
                static = {k: v for k, v in static.items() if k in _TOOL_KEYS}
                kept = {k: v for k, v in previous.items() if k not in _TOOL_KEYS}
            else:
                kept = {}
            # the calls always; responses and intermediate texts only where the file keeps them (ADK's
            # scores read neither, so a file without them gets none)
            updated = {k: v for k, v in static.items() if k == "tool_uses" or child_key(previous, k) is not None}
            if key not in expected and not any(updated.values()):
                continue  # no calls, and the file says nothing of them: ADK reads that as none
            expected[key] = {**kept, **{child_key(previous, k) or k: v for k, v in updated.items()}}


def apply_accept(plan: AcceptPlan, root: Path, author: str = "") -> JournalEntry:
    return write_baseline(plan.writes, root, plan.description, author)
