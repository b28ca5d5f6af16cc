"""The shapes of `agentdiff mcp`'s answers, as each tool's output schema (`structuredContent`). Every
answer may carry more than its schema names (`notices`: the engine's news since the last answer);
a key whose value would be empty is left out."""

from __future__ import annotations

from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow")

    notices: Optional[list[str]] = None


class KeptSaid(BaseModel):
    model_config = ConfigDict(extra="allow")

    run: str
    run_started: str
    by: str
    changed_since: Optional[str] = None  # a file it read, changed since that run: the verdict may be old (the case is stale)


class CaseLine(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    status: str  # passed | failed | error | flaky | not_evaluated | new | running | stale | not run
    why: Optional[str] = None
    agent: Optional[str] = None
    error: Optional[str] = None
    first_divergence: Optional[str] = None
    seconds: Optional[float] = None
    kept: Optional[KeptSaid] = None  # the verdict is a kept run's (not run in this session)
    was: Optional[str] = None  # running or stale: the verdict it had


class StatusAnswer(_Answer):
    cases: int
    counts: dict[str, int]
    mode: str
    watching: bool
    running: list[str]
    stale: list[str]
    changed_since_last_status: list[dict[str, Any]]
    reran_unchanged_since_last_status: int
    not_run_in_this_session: Optional[dict[str, Any]] = None
    load_errors: Optional[list[dict[str, Any]]] = None
    hint: Optional[str] = None


class ListAnswer(_Answer):
    total: int
    cases: list[CaseLine]
    offset: Optional[int] = None
    next_offset: Optional[int] = None
    note: Optional[str] = None


class RunAnswer(_Answer):
    done: Optional[int] = None  # of `ran`, those with their verdict now (the rest: still_running)
    why: Optional[str] = None  # why the cases this call started ran (a case's own `why` when another reason re-ran it)
    ran: int
    seconds: float
    passed: int
    failing: int
    cases: list[CaseLine]
    still_running: Optional[list[str]] = None
    next: Optional[str] = None
    more_cases: Optional[int] = None
    not_replayed: Optional[dict[str, Any]] = None
    note: Optional[str] = None


class DiffAnswer(_Answer):
    case: dict[str, Any]
    first_divergence: Optional[dict[str, Any]] = None
    layers: list[dict[str, Any]] = []
    divergences: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    page: Optional[int] = None
    pages: Optional[int] = None
    next_page: Optional[int] = None
    other_layers: Optional[str] = None  # the layers that did not change (layers='all' shows them)
    text_diffs: Optional[str] = None


class ExplainAnswer(_Answer):
    id: str
    status: str
    why_it_ran: Optional[str] = None
    error: Optional[str] = None
    first_divergence: Optional[Union[dict[str, Any], str]] = None
    failing_metrics: Optional[list[dict[str, Any]]] = None
    since_last_pass: Optional[Union[dict[str, Any], str]] = None
    kept: Optional[KeptSaid] = None
    next: Optional[str] = None


class PlanAnswer(_Answer):
    plan_digest: str
    description: str
    files: list[str]
    preview: str
    preview_cut: Optional[bool] = None
    next: str


class ApplyAnswer(_Answer):
    written: str
    journal_step: str
    files: list[str]
    undo: str


class StepAnswer(_Answer):
    done: bool
    said: Optional[str] = None
    files: Optional[list[str]] = None
    written_by: Optional[str] = None
    step: Optional[str] = None  # drop: the step it would forget
    what: Optional[str] = None
    next: Optional[str] = None


class CommandAnswer(_Answer):
    exit_code: int
    compared: Optional[str] = None  # compare and gate: which runs, and what the session side holds
    result: Optional[dict[str, Any]] = None  # compare: its JSON document
    cases: Optional[dict[str, list[str]]] = None  # gate: the case ids of each category but unchanged
    not_judged: Optional[dict[str, Any]] = None  # compare, gate: the session's stale cases
    output: Optional[str] = None
    messages: Optional[str] = None
