"""Accepting an actual run as the baseline: the whole case, one turn, or one layer — planned first
(the exact file change, for a preview), then written atomically and journaled for undo."""

from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

from agentdiff.core.baselines.documents import (
    REGISTRATION_FILE,
    RecordError,
    recordings_document,
    registration,
    registration_write,
    session_document,
    static_intermediate,
)
from agentdiff.core.baselines.journal import (
    FileWrite,
    JournalEntry,
    sha256_of,
    write_baseline,
)
from agentdiff.core.formats.conformance import recordings_file, session_file
from agentdiff.core.formats.json_text import dumps_like
from agentdiff.core.formats.load_error import child_key
from agentdiff.core.formats.yaml_writer import dump_yaml
from agentdiff.core.project.discovery import ConformanceCaseRef, EvalCaseRef
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.worker.jobs import RunOutput

Scope = Literal["case", "turn", "layer"]
_TOOL_KEYS = ("tool_uses", "toolUses", "tool_responses", "toolResponses", "invocation_events", "invocationEvents")


@dataclass(frozen=True)
class AcceptPlan:
    case_id: str
    description: str  # "accept turn 2 (tool_calls) of …"
    writes: tuple[FileWrite, ...]
    preview: str  # unified diff of every file the accept changes


def _preview(writes: tuple[FileWrite, ...], root: Path) -> str:
    out = []
    for write in writes:
        try:
            shown = write.path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            shown = str(write.path)
        before = write.path.read_text(encoding="utf-8") if write.path.exists() else ""
        out += difflib.unified_diff(
            before.splitlines(keepends=True), write.text.splitlines(keepends=True), f"a/{shown}", f"b/{shown}"
        )
    text = "".join(out)
    return text if text else "(no change: the baseline already says this)\n"


def _shown_output(run: CaseRun) -> RunOutput:
    out = run.shown_output
    if out is None:
        raise RecordError("there is no run to accept yet")
    if out.error:
        raise RecordError(f"the run failed ({out.error}); there is nothing to accept")
    return out


def plan_accept(run: CaseRun, root: Path, scope: Scope = "case", turn: Optional[int] = None, layer: Optional[str] = None) -> AcceptPlan:
    out = _shown_output(run)
    ref = run.ref
    if isinstance(ref, ConformanceCaseRef):
        mode = run.baseline.mode if run.baseline and run.baseline.mode else "none"
        case_dir = ref.case.dir
        rec, ses = case_dir / recordings_file(mode), case_dir / session_file(mode)
        writes = (
            FileWrite(rec, dump_yaml(recordings_document(out)), sha256_of(rec)),
            FileWrite(ses, dump_yaml(session_document(out)), sha256_of(ses)),
            registration_write(case_dir / REGISTRATION_FILE, mode, registration(out, ref.case.spec.agent, root, mode)),
        )
        what = "the whole case" if scope == "case" else "the whole case (a conformance recording is accepted as a whole)"
        return AcceptPlan(ref.id, f"accept {what}: {ref.id} ({mode})", writes, _preview(writes[:2], root))
    assert isinstance(ref, EvalCaseRef)
    loaded = ref.eval_set
    if loaded.legacy:
        raise RecordError(f"{loaded.source.display} is in ADK's legacy format; migrate it before accepting into it")
    record = run.shown_record
    if record is None:
        raise RecordError("the run was not scored; there is nothing to accept")
    actual = record.actual
    index = next(i for i, case in enumerate(loaded.eval_set.eval_cases) if case.eval_id == ref.case.eval_id)
    data = copy.deepcopy(loaded.raw)
    case = data["eval_cases"][index]
    conversation = case[child_key(case, "conversation") or "conversation"]
    turns = range(len(conversation)) if scope == "case" or turn is None else [turn]
    for t in turns:
        if t >= len(actual):
            raise RecordError(f"the run did not reach turn {t + 1}")
        expected, invocation = conversation[t], actual[t]
        if scope != "layer" or layer == "response":
            key = child_key(expected, "final_response") or "final_response"
            if invocation.final_response is not None:
                expected[key] = invocation.final_response.model_dump(mode="json", exclude_none=True)
            else:
                expected.pop(key, None)
        if scope != "layer" or layer == "tool_calls":
            key = child_key(expected, "intermediate_data") or "intermediate_data"
            static = static_intermediate(invocation)
            if scope == "layer":  # only the calls and their responses; intermediate texts stay
                previous = expected.get(key) if isinstance(expected.get(key), dict) else {}
                kept = {k: v for k, v in previous.items() if k not in _TOOL_KEYS}
                static = {**kept, "tool_uses": static["tool_uses"], "tool_responses": static["tool_responses"]}
            expected[key] = static
    path = loaded.source.path
    registration_path = path.with_name(path.name.split(".")[0] + "." + REGISTRATION_FILE)
    writes = (
        FileWrite(path, dumps_like(data, loaded.source.text), loaded.source.sha256),
        registration_write(registration_path, ref.case.eval_id, registration(out, run.agent.label if run.agent else "", root)),
    )
    if scope == "case":
        what = "the whole case"
    elif scope == "turn":
        what = f"turn {turn + 1}" if turn is not None else "the whole case"
    else:
        what = f"the {layer} layer" + (f" of turn {turn + 1}" if turn is not None else "")
    return AcceptPlan(ref.id, f"accept {what}: {ref.id}", writes, _preview(writes[:1], root))


def apply_accept(plan: AcceptPlan, root: Path) -> JournalEntry:
    return write_baseline(plan.writes, root, plan.description)
