"""Accepts into ADK eval set files: a run's turns (or one turn, or one layer of one) put into the case
as written, each file edited once in place and its registrations written beside it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from agentdiff.core.baselines.case_edits import EvalFileEdit
from agentdiff.core.baselines.documents import REGISTRATION_FILE, RecordError, registration, registration_write, static_intermediate
from agentdiff.core.baselines.journal import FileWrite
from agentdiff.core.formats.load_error import child_key
from agentdiff.core.project.family import AcceptBatch

_TOOL_KEYS = ("tool_uses", "toolUses", "tool_responses", "toolResponses", "invocation_events", "invocationEvents")


class EvalSetAccepts(AcceptBatch):
    """Accepts into eval set files: each file edited once in place, with its registrations beside it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[Path, EvalFileEdit] = {}

    def add(self, request: Any, out: Any) -> bool:
        ref = request.run.ref
        loaded = ref.eval_set
        if loaded.legacy:
            raise RecordError(f"{loaded.source.display} is in ADK's legacy format; migrate it before accepting into it")
        file = self.files.setdefault(loaded.source.path, EvalFileEdit.of(loaded))
        index = loaded.index_of(ref.eval_id)
        before = copy.deepcopy(file.case(index))
        accept_into(request, file.data)
        if file.case(index) == before:
            return False
        file.sidecar[ref.eval_id] = registration(out, request.run.agent.label if request.run.agent else "", self.root)
        return True

    def writes(self, planned: list) -> list:
        own: list[FileWrite] = []
        for path, file in self.files.items():
            if not file.changed():
                continue
            try:
                text = file.text()
            except ValueError as exc:  # say, a key written twice: the file cannot be edited in place
                raise RecordError(f"{file.loaded.source.display} cannot be edited in place: {exc}") from None
            own.append(FileWrite(path, text, file.loaded.source.sha256))
            sidecar = path.with_name(path.name.split(".")[0] + "." + REGISTRATION_FILE)
            if file.sidecar:
                (first, record), *rest = file.sidecar.items()
                pending = next((w.text for w in [*planned, *own] if w.path == sidecar), None)  # registrations of one file accumulate
                write = registration_write(sidecar, first, record, base=pending, more=dict(rest))
                own = [w for w in own if w.path != sidecar] + [write]
        return own


def accept_into(request: Any, data: Any) -> None:
    """Put the run's turns (or one turn, or one layer of it) into the eval set document `data`."""
    ref, run = request.run.ref, request.run
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
            written = {child_key(previous, k) or k: v for k, v in updated.items()}
            expected[key] = {**kept, **{k: _ordered_like(v, previous.get(k)) for k, v in written.items()}}


def _ordered_like(new: Any, old: Any) -> Any:
    """New entries (calls, responses) with their keys in the order the file's entries already have them
    (`"name"` then `"args"`, say), as a hand would write them; keys the file does not use follow."""
    if not isinstance(new, list) or not isinstance(old, list):
        return new
    order = next((list(entry) for entry in old if isinstance(entry, dict)), None)
    if not order:
        return new
    return [{**{k: entry[k] for k in order if k in entry}, **entry} if isinstance(entry, dict) else entry for entry in new]
