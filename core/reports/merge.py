"""Merging the JSON reports of a suite's shards (`run --shard K/N` on several machines) into one run's
results, to write as any report; and splitting a suite into shards, evenly and deterministically."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence, TypeVar

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.reports.kept_runs import RunNotFound, kept_runs, read_run
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus, LayerSummary, MetricResult, MetricSpread, PassRate


class MergeError(Exception):
    """The reports cannot be merged (unreadable, or two hold one case): the message says which."""


def case_from_dict(data: dict[str, Any]) -> CaseResult:
    """A case of a JSON report as a result again (without its runs' invocations, which it does not hold)."""
    metrics = tuple(MetricResult(
        name=m["name"], score=m.get("score"), threshold=m.get("threshold"), status=MetricStatus(m.get("status", "not_evaluated")),
        per_invocation=tuple(m.get("per_invocation") or ()), reason=m.get("reason"), criterion=m.get("criterion"), details=m.get("details"),
    ) for m in data.get("metrics") or [])
    layers = tuple(LayerSummary(layer["layer"], layer["status"], layer.get("first_divergence")) for layer in data.get("layers") or [])
    return CaseResult(
        id=data["id"], source=data.get("source", ""), eval_set_id=data.get("eval_set_id"), eval_id=data.get("eval_id", data["id"]),
        agent=data.get("agent"), mode=data.get("mode", "live"), status=CaseStatus(data["status"]), metrics=metrics, layers=layers,
        error=data.get("error"), error_location=_text(data.get("error_location")), error_trace=_text(data.get("error_trace")),
        scored_as=data.get("scored_as"), usage=data.get("usage") or {}, seconds=data.get("seconds"),
        tool_calls=data.get("tool_calls"), model_calls=data.get("model_calls"), cluster=data.get("cluster"), origin=data.get("origin"),
        pass_rate=pass_rate_from(data.get("pass_rate")),
    )


def pass_rate_from(data: object) -> "PassRate | None":
    """A report's `pass_rate` as written (`json_report.pass_rate_dict`); None when it has none or it is not one."""
    if not isinstance(data, dict):
        return None
    try:
        low, high = data["interval"]
        return PassRate(
            passes=int(data["passes"]), runs=int(data["runs"]), low=float(low), high=float(high), confidence=float(data["confidence"]),
            min_pass_rate=None if data.get("min_pass_rate") is None else float(data["min_pass_rate"]),
            more_runs=None if data.get("more_runs") is None else int(data["more_runs"]),
            pass_hat_k=tuple((int(k), float(v)) for k, v in (data.get("pass_hat_k") or {}).items()),
            metrics=tuple(MetricSpread(str(m["name"]), float(m["mean"]), float(m["interval"][0]), float(m["interval"][1]), int(m["runs"]))
                          for m in data.get("metrics") or ()),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _text(value: object) -> "str | None":
    return value if isinstance(value, str) else None


def merge_reports(paths: Sequence[Path], load_errors: Optional[list] = None) -> list[CaseResult]:
    """Every case of every report, in report order; a case in two reports is an error (shards are
    disjoint). Each report is checked as `compare` checks one; with `load_errors`, every shard's files
    that did not load are gathered into it (the merged report keeps them: the gate fails on them)."""
    seen: dict[str, Path] = {}
    cases = []
    shards: dict[str, Path] = {}
    for path in paths:
        try:
            run = read_run(path, str(path))
        except RunNotFound as exc:
            raise MergeError(str(exc)) from None
        shard = run.report.get("shard") or run.meta.get("shard")
        if isinstance(shard, str):
            shards[shard] = path
        if load_errors is not None:
            load_errors.extend(LoadError.model_validate({k: v for k, v in e.items() if k in LoadError.model_fields})
                               for e in run.report.get("load_errors") or [] if isinstance(e, dict) and isinstance(e.get("file"), str))
        for item in run.report["cases"]:
            if item["id"] in seen:
                raise MergeError(f"{item['id']} is in both {seen[item['id']]} and {path}: the reports overlap (one shard run twice?)")
            seen[item["id"]] = path
            cases.append(case_from_dict(item))
    _every_shard(shards, len(paths))
    return cases


def _every_shard(shards: dict[str, Path], reports: int) -> None:
    """Shards' reports merged must be all of one split, each once: a shard whose report went missing
    (an upload that failed) would otherwise merge into a whole run that passes without its cases."""
    if not shards:
        return
    counts = {spec.partition("/")[2] for spec in shards}
    if len(counts) != 1 or len(shards) != reports:
        raise MergeError(f"the reports are not the shards of one split ({', '.join(sorted(shards))}, and {reports - len(shards)} "
                         "report(s) that are no shard): merge the K/N shards of one run")
    total = int(next(iter(counts)))
    missing = [f"{k}/{total}" for k in range(1, total + 1) if f"{k}/{total}" not in shards]
    if missing:
        raise MergeError(f"shard {', '.join(missing)} is missing: a merge of shards needs every one (did its report not arrive?)")


T = TypeVar("T")


def last_durations(root: Path, report: Optional[Path] = None) -> dict[str, float]:
    """Each case's last known seconds: from `report` (a JSON report, such as the last CI run's), else
    from the kept runs that were not shards themselves, newest first (a shard run must not change how
    the next shard splits: every shard has to see the same history)."""
    if report is not None:
        try:
            sources = [read_run(report)]
        except RunNotFound:
            sources = []
    else:
        sources = kept_runs(root)
    durations: dict[str, float] = {}
    for run in sources:
        if report is None and run.meta.get("shard"):
            continue
        for case in run.report["cases"]:
            if isinstance(case, dict) and isinstance(case.get("seconds"), (int, float)):
                durations.setdefault(case["id"], float(case["seconds"]) * max(1, int(case.get("runs") or 1)))
    return durations


def shard(items: Sequence[T], index: int, count: int, key, durations: Optional[dict[str, float]] = None) -> list[T]:
    """Shard `index` (1-based) of `count`: with durations, the longest first onto the least loaded
    shard (a case without one counts as the median); without, every count-th case by id. The same
    inputs give every machine the same split, so the shards cover each case exactly once."""
    ordered = sorted(items, key=key)
    if not durations:
        return [item for position, item in enumerate(ordered) if position % count == index - 1]
    known = sorted(durations.get(key(item)) for item in ordered if key(item) in durations)
    typical = known[len(known) // 2] if known else 1.0
    weight = {key(item): durations.get(key(item), typical) for item in ordered}
    loads = [0.0] * count
    chosen: list[list[T]] = [[] for _ in range(count)]
    for item in sorted(ordered, key=lambda item: (-weight[key(item)], key(item))):
        target = min(range(count), key=lambda s: (loads[s], s))
        loads[target] += weight[key(item)]
        chosen[target].append(item)
    return sorted(chosen[index - 1], key=key)
