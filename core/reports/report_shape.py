"""What `compare`, `gate`, `merge`, `run --shard` and `--changed-since` read of a JSON report, checked
before they read it: a report of another shape (a case without a verdict, an id twice, a score that is
text, a measure that is not a finite number ≥ 0) is refused whole, never a traceback or a comparison
that quietly counts it wrong."""

from __future__ import annotations

from typing import Annotated, Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, ValidationError

from agentdiff.core.formats.load_error import format_path
from agentdiff.core.scoring.results import CaseStatus


class _Shape(BaseModel):
    model_config = ConfigDict(extra="allow")


#: A score: any finite number. A measure (seconds, tokens, calls, cost): finite, from 0 to 10^15.
Number = Optional[Union[StrictInt, Annotated[StrictFloat, Field(allow_inf_nan=False)]]]
Measure = Optional[Union[Annotated[StrictInt, Field(ge=0, le=10**15)], Annotated[StrictFloat, Field(ge=0, le=1e15, allow_inf_nan=False)]]]


class _Metric(_Shape):
    name: StrictStr
    score: Number = None
    status: Optional[StrictStr] = None


class _Layer(_Shape):
    layer: StrictStr
    status: StrictStr
    first_divergence: Optional[StrictStr] = None


class _Case(_Shape):
    id: StrictStr
    status: CaseStatus
    source: Optional[StrictStr] = None
    metrics: list[_Metric] = []
    layers: list[_Layer] = []
    usage: Optional[dict[str, dict[str, dict[str, Measure]]]] = None
    seconds: Measure = None
    tool_calls: Measure = None
    model_calls: Measure = None
    cost: Measure = None
    runs: Optional[StrictInt] = None
    error: Optional[StrictStr] = None


class _Run(_Shape):
    git: Optional[dict[str, Any]] = None
    agents: Optional[dict[str, dict[str, Any]]] = None
    files_read: Optional[dict[str, list[StrictStr]]] = None
    shard: Optional[StrictStr] = None
    partial: Optional[StrictStr] = None
    source: Optional[StrictStr] = None


class _Report(_Shape):
    """What `compare`, `gate`, `merge`, `run --shard` and `--changed-since` read of a report: a
    report of another shape is refused whole, never a traceback halfway through a comparison."""

    cases: list[_Case]
    load_errors: Optional[list[dict[str, Any]]] = None
    summary: Optional[dict[str, Any]] = None
    run: Optional[_Run] = None
    shard: Optional[Annotated[StrictStr, Field(pattern=r"^\d{1,6}/\d{1,6}$")]] = None


def report_problem(report: Any) -> Optional[str]:
    """Why `report` is not an agentdiff JSON report (the first place it is not), or None."""
    if not isinstance(report, dict) or not isinstance(report.get("cases"), list):
        return "not an agentdiff JSON report (no `cases` list)"
    ids = [case.get("id") for case in report["cases"] if isinstance(case, dict)]
    twice = next((i for n, i in enumerate(ids) if i in ids[:n]), None)
    if twice is not None:  # which of the two would count? neither can be trusted
        return f"not an agentdiff JSON report: the case {twice!r} is in it twice"
    try:
        _Report.model_validate(report)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = format_path([part for part in error["loc"] if not (isinstance(part, str) and (part in ("int", "float", "str") or
                                                                                            part.startswith(("constrained-", "function-"))))])
        said = {"model_type": "must be a mapping", "dict_type": "must be a mapping", "list_type": "must be a list",
                "int_type": "must be a number", "float_type": "must be a number", "string_type": "must be a string",
                "missing": "is missing", "finite_number": "must be a finite number",
                "greater_than_equal": "must be a number ≥ 0", "less_than_equal": "is out of range"}.get(error["type"], error["msg"])
        return f"not an agentdiff JSON report: {where} {said}"
    return None
