"""Accepting the run of an agents-cli dataset case: two files change, in one journal entry.

* Its baseline file (`dataset_cases.baseline_file`) gets the case as `agents-cli eval generate` would
  have written it after this run — the dataset's case with the run's `responses` and `agent_data`
  (agents, turns, events) — plus the run's LLM requests and responses under `agentdiff_llm_requests`
  (an extra key, which agents-cli keeps as it is), and the answers its local metrics' judge gave under
  `agentdiff_judge_answers`, which a replay grades with. A case accepted again replaces its entry; the
  file is agents-cli's trace format, so `agents-cli eval grade --traces` grades it.
* Its dataset gets the run's answer as the case's `reference` (`{"response": Content}`), which
  agents-cli's metrics read.

Both are edited in place (`json_edit`): only the values accepted change; indentation, key order and
line endings stay. A case is accepted whole (it is one turn).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.baselines.file_writes import read_exact, text_sha
from agentdiff.core.baselines.journal import FileWrite
from agentdiff.core.baselines.documents import RecordError
from agentdiff.core.formats.agents_cli.dataset import good_key
from agentdiff.core.formats.agents_cli.traces import dump_traces, normalized
from agentdiff.core.formats.json_edit import edit_json
from agentdiff.core.formats.load_error import child_key
from agentdiff.core.project.dataset_cases import JUDGE_KEY, KEY_EXTRA, REQUESTS_KEY, DatasetCaseRef
from agentdiff.core.project.family import AcceptBatch
from agentdiff.core.run.dataset_case import judge_answers, traced
from agentdiff.core.worker.jobs import RunOutput


@dataclass
class DatasetFile:
    """A file being planned: as read, and as it will be."""

    path: Path
    text: Optional[str]  # None: it does not exist yet
    data: Any
    original: Any

    @classmethod
    def read(cls, path: Path, empty: Any) -> "DatasetFile":
        if not path.exists():
            return cls(path, None, copy.deepcopy(empty), copy.deepcopy(empty))
        import json

        text = read_exact(path)
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise RecordError(f"{path.name} is not valid JSON ({exc}); fix it before accepting into it") from None
        if not isinstance(data, dict):
            raise RecordError(f"{path.name} must hold a JSON object to accept into it")
        return cls(path, text, data, copy.deepcopy(data))

    def write(self) -> Optional[FileWrite]:
        if self.data == self.original and self.text is not None:
            return None
        if self.text is None:
            return FileWrite(self.path, dump_traces(self.data.get("eval_cases") or []) + "\n", None)
        try:
            text = edit_json(self.text, self.data)
        except ValueError as exc:
            raise RecordError(f"{self.path.name} cannot be edited in place: {exc}") from None
        return FileWrite(self.path, text, text_sha(self.text))


def accept_dataset_case(ref: DatasetCaseRef, out: RunOutput, files: dict[Path, DatasetFile]) -> bool:
    """Plan the accept of one case's run `out` into `files` (path → file, shared by the cases of one
    plan); whether anything changed."""
    assert ref.dataset is not None and ref.baseline_path is not None
    case = traced(ref, out)
    response = (case.get("responses") or [None])[-1]
    if response is not None:  # the baseline holds the reference the dataset will hold
        case = normalized({**case, "reference": {"response": response.get("response")}})
    case[REQUESTS_KEY] = [exchange.model_dump(mode="json", exclude_defaults=True, exclude={"start", "end"})  # timings: no baseline's
                          for exchange in out.exchanges]
    answers = judge_answers(out.judged)
    if answers:  # a replay grades with them, calling no model
        case[JUDGE_KEY] = answers
    if ref.name != ref.written.eval_case_id:  # no usable eval_case_id: the entry names the case it is of
        case[KEY_EXTRA] = ref.name
    changed = _into_baselines(files, ref, case)
    if response is not None:
        changed |= _into_dataset(files, ref, response)
    return changed


def dataset_writes(files: dict[Path, DatasetFile]) -> list[FileWrite]:
    return [write for write in (file.write() for file in files.values()) if write is not None]


def _into_baselines(files: dict[Path, DatasetFile], ref: DatasetCaseRef, case: dict[str, Any]) -> bool:
    assert ref.baseline_path is not None
    file = files.get(ref.baseline_path) or files.setdefault(ref.baseline_path, DatasetFile.read(ref.baseline_path, {"eval_cases": []}))
    key = child_key(file.data, "eval_cases") or "eval_cases"
    cases = file.data.setdefault(key, [])
    if not isinstance(cases, list):
        raise RecordError(f"{ref.baseline_display}: `eval_cases` must be a list to accept into it")
    at = next((i for i, c in enumerate(cases) if isinstance(c, dict) and _key_of(c, i) == ref.name), None)
    if at is None:
        cases.append(case)
        return True
    if _same(cases[at], case):
        return False
    cases[at] = case
    return True


def _key_of(case: dict[str, Any], index: int) -> str:
    """An entry's case key, as discovery reads it (`dataset_cases.entry_key`)."""
    if isinstance(case.get(KEY_EXTRA), str) and case[KEY_EXTRA]:
        return case[KEY_EXTRA]
    own = case.get("eval_case_id") or case.get("evalCaseId")
    return own if isinstance(own, str) and good_key(own) else f"case_{index + 1}"


def _same(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """The same run but for the times ADK stamped and the ids it drew."""
    return _stable(old) == _stable(new)


_DRAWN_ID = re.compile(r"^adk-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _stable(value: Any) -> Any:
    """A baseline entry without what differs on every run: event times, call order numbers, and the
    ids ADK draws for function calls."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in ("event_time", "seq")}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, str) and _DRAWN_ID.match(value):
        return "adk-<id>"
    return value


def _into_dataset(files: dict[Path, DatasetFile], ref: DatasetCaseRef, response: dict[str, Any]) -> bool:
    assert ref.dataset is not None
    path = ref.dataset.source.path
    file = files.get(path)
    if file is None:
        file = files.setdefault(path, DatasetFile(path, ref.dataset.source.text, copy.deepcopy(ref.dataset.raw), copy.deepcopy(ref.dataset.raw)))
    cases = file.data[child_key(file.data, "eval_cases") or "eval_cases"]
    written = cases[ref.index]
    key = child_key(written, "reference") or "reference"
    wanted = {"response": response.get("response")}
    if written.get(key) == wanted:
        return False
    written[key] = wanted
    return True


class DatasetAccepts(AcceptBatch):
    """Accepts into agents-cli baseline files (and `reference`s): each file written once."""

    def __init__(self) -> None:
        self.files: dict[Path, DatasetFile] = {}

    def add(self, request: Any, out: RunOutput) -> bool:
        return accept_dataset_case(request.run.ref, out, self.files)

    def writes(self, planned: list) -> list[FileWrite]:
        return dataset_writes(self.files)
