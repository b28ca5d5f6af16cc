"""Accepting actual runs as the baseline: whole cases, one turn, or one layer — planned first (the
exact file change, for a preview), then written as one journaled transaction for undo.

Several accepts (`A`, `agentdiff accept --all-failed`) make one plan, and so one journal entry: each
case's family gathers its accepts (`CaseFamily.accepts`: the cases of one eval set file are applied to
it one after another, then the file is written once, in place), and the plan writes them together.
A plan that would change nothing raises `NothingToAccept`.
"""

from __future__ import annotations

import json

import dataclasses
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional, Sequence

from agentdiff.core.formats.source_file import display_path
from agentdiff.core.baselines.documents import ASSISTANT, REGISTRATION_FILE, RecordError
from agentdiff.core.baselines.journal import FileWrite, JournalEntry, read_exact, write_baseline
from agentdiff.core.project.family import REGISTERED, AcceptBatch, family_of
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.worker.jobs import RunOutput

Scope = Literal["case", "turn", "layer"]


class NothingToAccept(RecordError):
    """The baseline already says what the run did: nothing would be written."""


@dataclass(frozen=True)
class AcceptRequest:
    run: CaseRun
    scope: Scope = "case"
    turn: Optional[int] = None
    layer: Optional[str] = None
    repeat: Optional[int] = None  # which run of a repeated case (required when they disagree)


def run_summaries(run: CaseRun, answers: bool = False) -> list[str]:
    """One line per repeat of a case: its verdict and its tool calls (with `answers`, its last answer too), to
    choose which to accept."""
    lines = []
    for index, record in enumerate(run.result.runs):
        calls = [call.name for invocation in record.actual for call in invocation.tool_calls()]
        line = f"run {index + 1}: {record.status.value} · calls {', '.join(calls) or 'none'}"
        answer = _answer(record.actual[-1]) if record.actual and answers else ""
        lines.append(line + (f" · answers {json.dumps(answer if len(answer) <= 70 else answer[:69] + '…', ensure_ascii=False)}"
                             if answer else ""))
    return lines


def _answer(invocation) -> str:
    """The last turn's answer as one line."""
    content = invocation.final_response
    parts = getattr(content, "parts", None) or []
    return " ".join("".join(getattr(part, "text", None) or "" for part in parts).split())


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
        again = family_of(run.ref).failed_hint(run)
        raise RecordError(f"{run.ref.id}: the run failed ({out.error}); there is nothing to accept{again}")
    return out


def _describe(request: AcceptRequest) -> str:
    of_run = f" (run {request.repeat + 1} of {len(request.run.outputs)})" if request.repeat is not None and len(request.run.outputs) > 1 else ""
    return _scope(request) + of_run


def _scope(request: AcceptRequest) -> str:
    if family_of(request.run.ref).accepted_whole or request.scope == "case" or request.turn is None and request.scope == "turn":
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
    batches: dict[str, AcceptBatch] = {}  # each family's accepts, gathered (cases of one file are one write)
    accepted: list[AcceptRequest] = []
    for request in requests:
        request = _chosen(request)
        out = _shown_output(request.run)
        family = family_of(request.run.ref)
        batch = batches.get(family.name)
        if batch is None:
            batch = batches[family.name] = family.accepts(root)
        if batch.add(request, out):
            accepted.append(request)
    writes: list[FileWrite] = []
    order = list(REGISTERED)  # in the registry's order, whatever the requests' (a family that adds to another's files is last)
    for name in sorted(batches, key=order.index):
        writes += batches[name].writes(writes)
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
    if run.result.disagreeing:
        raise RecordError(f"{run.ref.id} is flaky (its runs disagree): choose the run to accept; " + "; ".join(run_summaries(run)))
    return request


def apply_accept(plan: AcceptPlan, root: Path, author: str = "") -> JournalEntry:
    return write_baseline(plan.writes, root, plan.description, author)
