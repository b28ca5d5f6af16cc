"""Traced conversations written into an EvalSet file as cases expecting what they did: by accepting
pending traced cases (`TracedAccepts`) and by `agentdiff import` (`with_cases`). A case whose eval_id
the file holds already is left as it is; the file's own text is kept around the cases added."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional, Sequence

from agentdiff.core.baselines.documents import RecordError
from agentdiff.core.baselines.journal import FileWrite
from agentdiff.core.formats.json_edit import edit_json
from agentdiff.core.formats.load_error import child_key
from agentdiff.core.formats.source_file import resolved
from agentdiff.core.project.family import AcceptBatch
from agentdiff.core.traces.otlp import Conversation
from agentdiff.core.traces.otlp_cases import eval_case, not_yet

from .cases import TracedCaseRef


class NotAnEvalSet(RecordError):
    """The file to add cases to does not read as an EvalSet."""


def with_cases(before: Optional[str], target: Path, conversations: Sequence[Conversation]) -> tuple[str, list[str], list[str]]:
    """The file's text with a case for each conversation it does not hold yet (`before` None: a new
    file), the eval_ids added, and those it held already. In an agent's folder, its cases name it."""
    from agentdiff.core.project.agents import is_agent_dir

    app = target.parent.name if is_agent_dir(target.parent) else None
    stem = target.name.split(".")[0]
    try:
        data: Any = json.loads(before) if before is not None else {"eval_set_id": stem, "name": stem, "eval_cases": []}
    except ValueError as exc:
        raise NotAnEvalSet(f"{target} is not valid JSON ({exc}); nothing was written") from None
    cases = data.get(child_key(data, "eval_cases") or "eval_cases") if isinstance(data, dict) else None
    if not isinstance(cases, list):
        raise NotAnEvalSet(f"{target} is not an EvalSet file (no eval_cases list); nothing was written")
    have = {case.get("eval_id", case.get("evalId")) for case in cases if isinstance(case, dict)}
    new, already = not_yet(conversations, have)
    cases += [eval_case(conversation, eval_id, app) for conversation, eval_id in new]
    added = [eval_id for _, eval_id in new]
    if not added:
        return before or "", added, already
    text = edit_json(before, data) if before is not None else json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return text, added, already


def conversation_writes(by_target: dict[Path, list[Conversation]], planned: list) -> tuple[list[FileWrite], list[tuple[str, Path]], list[tuple[str, Path]]]:
    """The writes adding each target's conversations to it (an EvalSet file, or an agents-cli dataset
    and its baselines), the cases added and those a target held already, each with its target. A
    file `planned` writes already (another family's accept of the same batch) is edited there."""
    from agentdiff.core.baselines.dataset_accept import DatasetFile, dataset_writes

    from .datasets import into_dataset, is_dataset

    writes: list[FileWrite] = []
    added: list[tuple[str, Path]] = []
    already: list[tuple[str, Path]] = []
    datasets: dict[Path, DatasetFile] = {}
    for target, conversations in by_target.items():
        if is_dataset(target):
            new, held = into_dataset(target, conversations, datasets)
        else:
            earlier = next((i for i, w in enumerate(planned) if resolved(w.path) == resolved(target)), None)
            raw = target.read_bytes() if earlier is None and target.exists() else None
            before = planned[earlier].text if earlier is not None else raw.decode("utf-8") if raw is not None else None
            text, new, held = with_cases(before, target, conversations)  # line endings kept
            if new and earlier is not None:  # one write of it: this batch's other accepts and these cases
                planned[earlier] = FileWrite(planned[earlier].path, text, planned[earlier].expected_sha256)
            elif new:
                writes.append(FileWrite(target, text, hashlib.sha256(raw).hexdigest() if raw is not None else None))
        added += [(i, target) for i in new]
        already += [(i, target) for i in held]
    for write in dataset_writes(datasets):
        if any(resolved(w.path) == resolved(write.path) for w in planned):
            raise RecordError(f"{write.path.name} is written by another accept of this batch: accept the traced conversations apart")
        writes.append(write)
    return writes, added, already


class TracedAccepts(AcceptBatch):
    """Pending traced cases accepted: each target file gains its cases in one write."""

    def __init__(self) -> None:
        self.by_target: dict[Path, list[Conversation]] = {}

    def add(self, request: Any, out: Any) -> bool:
        ref: TracedCaseRef = request.run.ref
        self.by_target.setdefault(ref.target, []).append(ref.conversation)
        return True

    def writes(self, planned: list) -> list[FileWrite]:
        return conversation_writes(self.by_target, planned)[0]
