"""ADK's stored eval results (`*.evalset_result.json`): models and loader.

ADK writes them with integer statuses (1 passed, 2 failed, 3 not evaluated, 4 informational),
snake_case keys and every null; its reader also accepts camelCase and a legacy double-encoded
JSON string. So do we.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.formats.load_error import LoadError, validation_errors
from agentdiff.core.formats.source_file import (
    SourceFileError,
    SourceText,
    parse_source,
    read_source,
)
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic.alias_generators import to_camel

RESULT_SUFFIX = ".evalset_result.json"


class EvalStatus(IntEnum):
    PASSED = 1
    FAILED = 2
    NOT_EVALUATED = 3
    INFORMATIONAL = 4


class _ResultModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True)


def _status(value: Any) -> Any:
    if isinstance(value, str) and value.upper() in EvalStatus.__members__:
        return EvalStatus[value.upper()]
    return value


class EvalMetricResult(_ResultModel):
    metric_name: str
    threshold: Optional[float] = None
    criterion: Optional[dict[str, Any]] = None
    custom_function_path: Optional[str] = None
    score: Optional[float] = None
    eval_status: EvalStatus = EvalStatus.NOT_EVALUATED
    details: Any = None

    _coerce_status = field_validator("eval_status", mode="before")(classmethod(lambda cls, v: _status(v)))


class EvalMetricResultPerInvocation(_ResultModel):
    actual_invocation: Invocation
    expected_invocation: Optional[Invocation] = None
    eval_metric_results: list[EvalMetricResult] = []


class EvalCaseResult(_ResultModel):
    eval_set_file: Optional[str] = None
    eval_set_id: str = ""
    eval_id: str
    final_eval_status: EvalStatus = EvalStatus.NOT_EVALUATED
    overall_eval_metric_results: list[EvalMetricResult] = []
    eval_metric_result_per_invocation: list[EvalMetricResultPerInvocation] = []
    session_id: Optional[str] = None
    session_details: Any = None
    user_id: Optional[str] = None

    _coerce_status = field_validator("final_eval_status", mode="before")(classmethod(lambda cls, v: _status(v)))


class EvalSetResult(_ResultModel):
    eval_set_result_id: str
    eval_set_result_name: Optional[str] = None
    eval_set_id: str
    eval_case_results: list[EvalCaseResult] = []
    creation_timestamp: float = 0.0


@dataclass(frozen=True)
class LoadedResults:
    source: SourceText
    result: EvalSetResult


def load_eval_set_result(path: Path, display: Optional[str] = None) -> tuple[Optional[LoadedResults], list[LoadError]]:
    try:
        source = read_source(path, display)
        data = parse_source(source, "json")
        if isinstance(data, str):  # legacy: the JSON document stored as a JSON string
            data = parse_source(SourceText(source.path, source.display, data, source.sha256), "json")
    except SourceFileError as exc:
        return None, [exc.error]
    try:
        result = EvalSetResult.model_validate(data)
    except ValidationError as exc:
        return None, validation_errors(source.display, source.text, data, exc, "json")
    return LoadedResults(source=source, result=result), []
