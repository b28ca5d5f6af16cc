"""Loading EvalSet files (`*.evalset.json`, `*.test.json`, both legacy shapes) and `test_config.json`.

Legacy shapes, converted the way ADK converts them:

* a row list (`[{query, expected_tool_use, reference, ...}]`, AgentEvaluator's old format): one file is
  one eval case whose `eval_id` is the file's path;
* a named-case list (`[{name, data: [rows], initial_session}]`, what `adk eval` converts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import os
from pathlib import Path
from typing import Any, Literal, Optional

from agentdiff.core.formats.eval_config import EvalConfig, default_eval_config
from agentdiff.core.formats import read_cache
from agentdiff.core.formats.eval_cases import EvalCases, read_compact
from agentdiff.core.formats.eval_set import EvalSet
from agentdiff.core.formats.load_error import (
    LoadError,
    format_path,
    locate,
    validation_errors,
)
from agentdiff.core.formats.source_file import (
    SourceFileError,
    SourceText,
    display_path,
    parse_source,
    read_source,
    resolved,
)
from pydantic import ValidationError

CONFIG_FILE_NAME = "test_config.json"
#: Read when no test_config.json is beside an eval file (see `config_path`).
FALLBACK_CONFIG_NAME = "eval_config.json"

Legacy = Optional[Literal["rows", "named"]]


@dataclass(frozen=True)
class LoadedEvalSet:
    source: SourceText
    #: the set's own fields (its `eval_cases` empty): the cases are `cases`
    header: EvalSet
    cases: EvalCases
    #: the parsed JSON exactly as read, when given; else parsed again from `source` when a writer asks
    #: (`raw`): a loaded suite keeps its files' text, not a second copy of every case
    parsed: Any = field(default=None, repr=False, compare=False)
    legacy: Legacy = None

    @classmethod
    def of(cls, source: SourceText, eval_set: EvalSet, parsed: Any = None, legacy: Legacy = None) -> "LoadedEvalSet":
        """A set whose cases are kept as the models given."""
        return cls(source, eval_set.model_copy(update={"eval_cases": []}), EvalCases.of_models(eval_set.eval_cases), parsed, legacy)

    @property
    def eval_set_id(self) -> str:
        return self.header.eval_set_id

    @property
    def eval_set(self) -> EvalSet:
        """The whole set as one model, every case built: for writers and reviews of one file, never per case."""
        return self.header.model_copy(update={"eval_cases": list(self.cases)})

    @property
    def raw(self) -> Any:
        """The parsed JSON exactly as read; writers patch a copy, so unedited parts stay as they were."""
        if self.parsed is None:
            object.__setattr__(self, "parsed", parse_source(self.source, "json"))  # the text it was loaded from
        return self.parsed

    def index_of(self, eval_id: str) -> int:
        """The position of the first case with `eval_id`, from an index built once per loaded file (a
        scan per case made a suite of N cases in one file cost N²)."""
        index = self.__dict__.get("_by_eval_id")
        if index is None:
            index = {}
            for position, case_id in enumerate(self.cases.eval_ids):
                index.setdefault(case_id, position)
            object.__setattr__(self, "_by_eval_id", index)  # a cache, not a field: equality and hashing ignore it
        return index[eval_id]


@dataclass(frozen=True)
class LoadedConfig:
    config: EvalConfig
    file: Optional[str]  # None when ADK's default criteria apply
    path: Optional[Path] = None  # the file read (None when ADK's default criteria apply)


def load_eval_set(path: Path, display: Optional[str] = None) -> tuple[Optional[LoadedEvalSet], list[LoadError]]:
    """Read one EvalSet file in any of ADK's shapes. Never raises for bad input."""
    try:
        source = read_source(path, display)
    except SourceFileError as exc:
        return None, [exc.error]
    loaded = _compact(source)
    if loaded is not None:
        return loaded
    try:
        data = parse_source(source, "json")
    except SourceFileError as exc:
        return None, [exc.error]
    return eval_set_from_data(source, data)


def eval_set_from_data(source: SourceText, data: Any) -> tuple[Optional[LoadedEvalSet], list[LoadError]]:
    """A set from its parsed data, its cases kept as models; or its errors, located in `source`."""
    if isinstance(data, list):
        return _load_legacy(source, data)
    if not isinstance(data, dict):
        return None, [LoadError(file=source.display, line=1, column=1, message="an EvalSet file must hold a JSON object or a legacy list of rows")]
    try:
        eval_set = EvalSet.model_validate(data)
    except ValidationError as exc:
        errors = validation_errors(source.display, source.text, data, exc, "json")
        camel = [key for key in ("evalSetId", "evalCases", "creationTimestamp") if key in data]
        if camel:
            errors.insert(
                0,
                LoadError(
                    file=source.display,
                    line=1,
                    column=1,
                    message=f"EvalSet top-level keys are snake_case only (ADK ignores {', '.join(camel)})",
                ),
            )
        return None, errors
    return _without_duplicates(LoadedEvalSet.of(source, eval_set))


def _compact(source: SourceText) -> Optional[tuple[Optional[LoadedEvalSet], list[LoadError]]]:
    """A set that reads and validates whole, kept as its eval_ids and the spans of its text
    (`eval_cases.read_compact`); None when it does not (its errors are found reading it whole)."""
    read = recalled = read_cache.recall(source.text, source.sha256)  # the same bytes read before, under the same rules
    if read is None:
        read = read_compact(source.text)
        if read is None:
            return None
    fields, cases = read
    try:
        header = EvalSet.model_validate({**fields, "eval_cases": []})
    except ValidationError:
        return None
    cases.share_text(source)
    loaded = _without_duplicates(LoadedEvalSet(source, header, cases))
    if recalled is None and loaded[0] is not None:  # only a file that loads without an error is kept
        read_cache.keep(source.sha256, fields, cases)
    return loaded


def _without_duplicates(loaded: LoadedEvalSet) -> tuple[Optional[LoadedEvalSet], list[LoadError]]:
    seen: set[str] = set()
    dups: list[str] = []
    for eval_id in loaded.cases.eval_ids:
        if eval_id in seen and eval_id not in dups:
            dups.append(eval_id)
        seen.add(eval_id)
    if dups:
        return None, [LoadError(file=loaded.source.display, message=f"duplicate eval_id {dup!r} in the eval set", path="eval_cases")
                      for dup in dups]
    return loaded, []


def _load_legacy(source: SourceText, data: list) -> tuple[Optional[LoadedEvalSet], list[LoadError]]:
    named = bool(data) and all(isinstance(item, dict) and "data" in item for item in data)
    errors: list[LoadError] = []
    if named:
        cases = []
        for index, item in enumerate(data):
            rows = item.get("data")
            if not isinstance(rows, list):
                errors.append(LoadError(file=source.display, message="`data` must be a list of rows", path=f"[{index}].data"))
                continue
            invocations = [_row_to_invocation(source, row, (index, "data", i), errors) for i, row in enumerate(rows)]
            case: dict[str, Any] = {"eval_id": str(item.get("name", "")), "conversation": invocations}
            session = item.get("initial_session") or {}
            if session:
                case["session_input"] = {
                    "app_name": session.get("app_name", ""),
                    "user_id": session.get("user_id", ""),
                    "state": session.get("state", {}),
                }
            cases.append(case)
    else:
        invocations = [_row_to_invocation(source, row, (i,), errors) for i, row in enumerate(data)]
        cases = [{"eval_id": source.display, "conversation": invocations}]
    if errors:
        return None, errors
    set_id = _legacy_set_id(source)
    converted = {"eval_set_id": set_id, "name": set_id, "eval_cases": cases}
    try:
        eval_set = EvalSet.model_validate(converted)
    except ValidationError as exc:
        return None, validation_errors(source.display, source.text, converted, exc, "json")
    return LoadedEvalSet.of(source, eval_set, legacy="named" if named else "rows"), []


def _legacy_set_id(source: SourceText) -> str:
    name = source.path.name
    for suffix in (".test.json", ".evalset.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _row_to_invocation(source: SourceText, row: Any, loc: tuple, errors: list[LoadError]) -> dict:
    path = format_path(loc)
    if not isinstance(row, dict) or not isinstance(row.get("query"), str):
        position = locate(source.text, list(loc), "json")
        errors.append(
            LoadError(
                file=source.display,
                message="a legacy row needs a string `query`",
                path=path,
                line=position[0] if position else None,
                column=position[1] if position else None,
            )
        )
        return {"user_content": {"parts": [{"text": ""}], "role": "user"}}
    def entries(key: str, needs: tuple[str, ...]) -> list[dict]:
        """The row's `key` list, each entry an object with `needs` (ADK fails on the file otherwise)."""
        value = row.get(key) or []
        bad = [] if isinstance(value, list) else [(loc + (key,), f"`{key}` must be a list")]
        for i, entry in enumerate(value if isinstance(value, list) else []):
            if not isinstance(entry, dict) or any(k not in entry for k in needs):
                keys = " and ".join(f"`{k}`" for k in needs)
                bad.append((loc + (key, i), f"each `{key}` entry must be an object with {keys} (ADK cannot read this row)"))
        for where, message in bad[:1]:  # the first problem of the row says enough
            position = locate(source.text, list(where), "json")
            errors.append(LoadError(file=source.display, message=message, path=format_path(where),
                                    line=position[0] if position else None, column=position[1] if position else None))
        return value if not bad else []

    tool_uses = [{"name": use["tool_name"], "args": use["tool_input"]} for use in entries("expected_tool_use", ("tool_name", "tool_input"))]
    responses = [
        [resp["author"], [{"text": resp["text"]}]]
        for resp in entries("expected_intermediate_agent_responses", ("author", "text"))
    ]
    return {
        "user_content": {"parts": [{"text": row["query"]}], "role": "user"},
        "final_response": {"parts": [{"text": row.get("reference") or ""}], "role": "model"},
        "intermediate_data": {"tool_uses": tool_uses, "intermediate_responses": responses},
    }


def config_path(eval_file: Path, project_root: Optional[Path] = None) -> Path:
    """The config an eval file is scored with: the `test_config.json` beside it, as ADK reads it; else
    the nearest `eval_config.json` in its folder or above (up to the project root), the file projects
    hand to `adk eval --config_file_path`; else the `test_config.json` path, which does not exist
    (ADK's default criteria)."""
    beside = eval_file.parent / CONFIG_FILE_NAME
    if os.path.lexists(beside):  # even a broken link or a FIFO: it is loaded, and says why it cannot be
        return beside
    top = resolved(project_root or eval_file.parent)
    folder = resolved(eval_file.parent)
    for candidate in [folder, *folder.parents]:
        if os.path.lexists(candidate / FALLBACK_CONFIG_NAME):
            return candidate / FALLBACK_CONFIG_NAME
        if candidate == top or top not in candidate.parents:
            break
    return beside


def load_eval_config(eval_file: Path, project_root: Optional[Path] = None) -> tuple[LoadedConfig, list[LoadError]]:
    """The config an eval file is scored with (`config_path`), or ADK's default criteria."""
    return load_config_file(config_path(eval_file, project_root), project_root)


def load_config_file(path: Path, project_root: Optional[Path] = None) -> tuple[LoadedConfig, list[LoadError]]:
    if not os.path.lexists(path):
        return LoadedConfig(config=default_eval_config(), file=None), []
    display = display_path(path, project_root)
    try:
        source = read_source(path, display)
        data = parse_source(source, "json")
    except SourceFileError as exc:
        return LoadedConfig(config=default_eval_config(), file=display, path=path), [exc.error]
    try:
        config = EvalConfig.model_validate(data)
    except ValidationError as exc:
        return LoadedConfig(config=default_eval_config(), file=display, path=path), validation_errors(
            display, source.text, data, exc, "json"
        )
    return LoadedConfig(config=config, file=display, path=path), []



#: The criteria AgentEvaluator takes for a test file in the legacy row-list shape (`_validate_input`): any
#: other key makes it refuse the file ("Invalid criteria key").
LEGACY_CRITERIA = ("tool_trajectory_avg_score", "response_evaluation_score", "response_match_score", "safety_v1")


def legacy_criteria_errors(loaded: LoadedEvalSet, config: LoadedConfig) -> list[LoadError]:
    """A legacy row-list file scored with criteria AgentEvaluator refuses for one: an error at each such key
    of its config file, as ADK refuses the whole file (no case of it runs)."""
    if loaded.legacy is None or config.file is None:
        return []
    refused = [key for key in config.config.criteria if key not in LEGACY_CRITERIA]
    if not refused:
        return []
    try:
        lines = config.path.read_text(encoding="utf-8", errors="replace").splitlines() if config.path else []
    except OSError:
        lines = []
    errors = []
    for key in refused:
        line = next((n for n, text in enumerate(lines, 1) if f'"{key}"' in text), None)
        errors.append(LoadError(
            file=config.file, line=line, path=f"criteria.{key}",
            message=f"Invalid criteria key: {key}: AgentEvaluator refuses it for {loaded.source.display}, a test file in the legacy "
                    f"row-list shape (it takes only {', '.join(LEGACY_CRITERIA)}); convert the file to an EvalSet "
                    "(AgentEvaluator.migrate_eval_data_to_new_schema) to score it with this metric"))
    return errors
