"""The results `agents-cli eval grade` writes (`artifacts/grade_results/results_<ts>.json`): per graded
case (by its position in the traces graded), per metric, a score, an explanation, rubric verdicts and
any error; per metric, a summary; and the cases as graded (`evaluation_dataset`).

agents-cli adds `metadata.dataset` (rows for its HTML page) that the SDK's own type refuses; it is
kept here as written. A results file is told from a dataset by its `eval_case_results`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from agentdiff.core.formats.agents_cli.dataset import case_keys
from agentdiff.core.formats.agents_cli.models import DatasetCase, EvaluationDataset, SdkModel
from agentdiff.core.formats.load_error import LoadError, validation_errors
from agentdiff.core.formats.source_file import SourceFileError, SourceText, parse_source, read_source


class RubricVerdict(SdkModel):
    evaluated_rubric: Any = None
    verdict: bool = False
    reasoning: Optional[str] = None


class MetricResult(SdkModel):
    metric_name: Optional[str] = None
    score: Optional[float] = None
    explanation: Optional[str] = None
    rubric_verdicts: Optional[list[RubricVerdict]] = None
    raw_output: Any = None
    error_message: Optional[str] = None

    @model_validator(mode="before")
    @classmethod
    def _no_score_that_is_not_a_number(cls, data: Any) -> Any:
        """A score of NaN or Infinity is the metric's error, said as such (unless it says its own)."""
        if isinstance(data, dict) and isinstance(data.get("score"), float) and not math.isfinite(data["score"]):
            score = data["score"]
            said = data.get("error_message") or data.get("errorMessage")
            data = {key: value for key, value in data.items() if key not in ("score", "error_message", "errorMessage")}
            written = "NaN" if score != score else ("Infinity" if score > 0 else "-Infinity")
            data["error_message"] = said or f"its score is {written}, not a number"
        return data


class CandidateResult(SdkModel):
    response_index: Optional[int] = None
    metric_results: Optional[dict[str, MetricResult]] = None


class CaseResult(SdkModel):
    eval_case_index: Optional[int] = None
    response_candidate_results: Optional[list[CandidateResult]] = None


class SummaryMetric(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True)

    metric_name: Optional[str] = None
    num_cases_total: Optional[int] = None
    num_cases_valid: Optional[int] = None
    num_cases_error: Optional[int] = None
    mean_score: Optional[float] = None
    stdev_score: Optional[float] = None
    pass_rate: Optional[float] = None

    @field_validator("mean_score", "stdev_score", "pass_rate", mode="before")
    @classmethod
    def _finite(cls, value: Any) -> Any:
        """NaN or Infinity (a summary over no valid case): no figure."""
        return None if isinstance(value, float) and not math.isfinite(value) else value


class GradeResults(SdkModel):
    eval_case_results: Optional[list[CaseResult]] = None
    summary_metrics: Optional[list[SummaryMetric]] = None
    win_rates: Any = None
    evaluation_dataset: Optional[list[EvaluationDataset]] = None
    metadata: Optional[dict[str, Any]] = None  # agents-cli's `dataset` rows among its keys
    agent_info: Any = None


@dataclass(frozen=True)
class GradedCase:
    """One graded case: its key (eval_case_id, else its position), the case as graded, and each
    metric's result for its first response (the one agents-cli grades)."""

    key: str
    index: int
    case: Optional[DatasetCase]
    metrics: dict[str, MetricResult]


@dataclass(frozen=True)
class LoadedResults:
    source: SourceText
    results: GradeResults

    def graded(self) -> list[GradedCase]:
        datasets = self.results.evaluation_dataset or []
        cases = list((datasets[0].eval_cases if datasets else None) or [])
        keys = case_keys(EvaluationDataset(eval_cases=cases)) if cases else []
        graded = []
        for result in self.results.eval_case_results or []:
            index = result.eval_case_index if result.eval_case_index is not None else len(graded)
            candidates = result.response_candidate_results or []
            first = next((c for c in candidates if (c.response_index or 0) == 0), candidates[0] if candidates else None)
            case = cases[index] if 0 <= index < len(cases) else None
            key = keys[index] if 0 <= index < len(keys) else f"case_{index + 1}"
            graded.append(GradedCase(key, index, case, dict((first.metric_results if first else None) or {})))
        return graded


def is_grade_results(data: Any) -> bool:
    return isinstance(data, dict) and ("eval_case_results" in data or "evalCaseResults" in data)


def load_grade_results(path: Path, display: Optional[str] = None) -> tuple[Optional[LoadedResults], list[LoadError]]:
    """Read one results file. Never raises for bad input."""
    try:
        source = read_source(path, display)
        data = parse_source(source, "json")
    except SourceFileError as exc:
        return None, [exc.error]
    if not is_grade_results(data):
        return None, [LoadError(file=source.display, line=1, column=1, message="not an agents-cli results file (no `eval_case_results`)")]
    try:
        results = GradeResults.model_validate(data)
    except ValidationError as exc:
        return None, validation_errors(source.display, source.text, data, exc, "json")
    twice = _graded_twice(results, source)
    if twice is not None:
        return None, [twice]
    return LoadedResults(source=source, results=results), []


def _graded_twice(results: GradeResults, source: SourceText) -> Optional[LoadError]:
    """Two results for one case (the same `eval_case_index`): which one is the case's cannot be told, and
    keeping either would drop the other's scores without a word: the file is refused, where it says so."""
    seen: dict[int, int] = {}
    for position, result in enumerate(results.eval_case_results or []):
        index = result.eval_case_index
        if index is None:
            continue
        if index in seen:
            line = _line_of_nth(source.text, ("eval_case_index", "evalCaseIndex"), position)
            return LoadError(file=source.display, line=line, column=1,
                             message=f"eval_case_results[{position}] grades eval_case_index {index}, as eval_case_results[{seen[index]}] "
                                     "does: one case graded twice (which result is its own cannot be told)")
        seen[index] = position
    return None


def _line_of_nth(text: str, keys: tuple[str, ...], n: int) -> int:
    """The line of the `n`th (from 0) appearance of any of `keys` as a JSON key; 1 when there are fewer."""
    import re

    found = [m.start() for m in re.finditer("|".join(f'"{re.escape(k)}"\\s*:' for k in keys), text)]
    return text.count("\n", 0, found[n]) + 1 if n < len(found) else 1
