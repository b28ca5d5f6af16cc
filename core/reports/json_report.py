"""The JSON report: the documented, stable schema of `docs/json-report.md`."""

from __future__ import annotations

import io
import json
from typing import Any, Mapping, Optional, Sequence, TextIO

from agentdiff.core import __version__
from agentdiff.core.diff.clusters import clusters
from agentdiff.core.formats.json_text import dumps_indented
from agentdiff.core.run.usage import estimated_cost, merge
from agentdiff.core.scoring.results import CaseResult, MetricResult, PassRate, summarize

SCHEMA_VERSION = 1


def _metric(metric: MetricResult) -> dict[str, Any]:
    return {
        "name": metric.name,
        "score": metric.score,
        "threshold": metric.threshold,
        "status": metric.status.value,
        "per_invocation": list(metric.per_invocation),
        "reason": metric.reason,
        "criterion": metric.criterion,
        "details": metric.details,
    }


def case_to_dict(case: CaseResult, prices: Optional[Mapping[str, Mapping[str, float]]] = None) -> dict[str, Any]:
    return {
        "id": case.id,
        "source": case.source,
        "eval_set_id": case.eval_set_id,
        "eval_id": case.eval_id,
        "agent": case.agent,
        "mode": case.mode,
        "status": case.status.value,
        "metrics": [_metric(m) for m in case.metrics],
        "layers": [
            {"layer": layer.layer, "status": layer.status, "first_divergence": layer.first_divergence}
            for layer in case.layers
        ],
        "error": case.error,
        **({"error_location": case.error_location, "error_trace": case.error_trace} if case.error_location else {}),
        "runs": len(case.runs),
        "scored_as": case.scored_as,
        "usage": case.usage,
        **({"cost": estimated_cost(case.usage, prices)} if prices else {}),
        "seconds": case.seconds,
        "tool_calls": case.tool_calls,
        "model_calls": case.model_calls,
        "cluster": case.cluster,
        **({"pass_rate": pass_rate_dict(case.pass_rate)} if case.pass_rate is not None else {}),
        **({"origin": case.origin} if case.origin else {}),
    }


def pass_rate_dict(rate: PassRate) -> dict[str, Any]:
    return {
        "passes": rate.passes,
        "runs": rate.runs,
        "rate": round(rate.rate, 6),
        "interval": [round(rate.low, 6), round(rate.high, 6)],
        "confidence": rate.confidence,
        "min_pass_rate": rate.min_pass_rate,
        "more_runs": rate.more_runs,
        "pass_hat_k": {str(k): round(value, 6) for k, value in rate.pass_hat_k},
        "metrics": [{"name": m.name, "mean": round(m.mean, 6), "interval": [round(m.low, 6), round(m.high, 6)], "runs": m.runs}
                    for m in rate.metrics],
    }


def report_dict(cases: Sequence[CaseResult], agents_python: Optional[dict[str, Any]] = None,
                prices: Optional[Mapping[str, Mapping[str, float]]] = None, load_errors: Sequence[Any] = (),
                shard: Optional[str] = None) -> dict[str, Any]:
    """The report; `agents_python` (what ran the agents: python, interpreter, chosen_by, adk) when known;
    with `prices`, each case's and the run's estimated cost; `load_errors`: the files that did not load
    (their cases are not in the run: the gate fails on them)."""
    report = _report(cases, agents_python, prices, load_errors, shard)
    report["cases"] = [case_to_dict(case, prices) for case in cases]
    return report


class _Cases:
    """The place of the report's `cases` in a document `write_json` writes: each case's dict is made as
    it is written, so a report of many thousand cases is never whole in memory."""

    def __init__(self, cases: Sequence[CaseResult], prices: Optional[Mapping[str, Mapping[str, float]]]) -> None:
        self.cases, self.prices = cases, prices


def write_json(out: TextIO, cases: Sequence[CaseResult], agents_python: Optional[dict[str, Any]] = None,
               prices: Optional[Mapping[str, Mapping[str, float]]] = None, load_errors: Sequence[Any] = (),
               shard: Optional[str] = None, indent: int = 2, more: Optional[Mapping[str, Any]] = None) -> None:
    """The report as `render_json` writes it (`more`: top-level keys added at its end; `indent` its
    indent), written to `out` a case at a time."""
    document: dict[str, Any] = {**_report(cases, agents_python, prices, load_errors, shard), **(more or {})}
    document["cases"] = _Cases(cases, prices)
    pad = " " * indent

    def dumped(value: Any, depth: int) -> str:
        return dumps_indented(value, indent, depth)

    out.write("{")
    for number, key in enumerate(document):  # "cases" keeps its place
        out.write(("," if number else "") + "\n" + pad + json.dumps(key, ensure_ascii=False) + ": ")
        value = document[key]
        if not isinstance(value, _Cases):
            out.write(dumped(value, 1))
            continue
        if not value.cases:
            out.write("[]")
            continue
        out.write("[")
        for index, case in enumerate(value.cases):
            out.write(("," if index else "") + "\n" + pad * 2 + dumped(case_to_dict(case, value.prices), 2))
        out.write("\n" + pad + "]")
    out.write("\n}\n")


def _report(cases: Sequence[CaseResult], agents_python: Optional[dict[str, Any]], prices: Optional[Mapping[str, Mapping[str, float]]],
            load_errors: Sequence[Any], shard: Optional[str]) -> dict[str, Any]:
    """The report with its `cases` still to fill in (in their place: first after the header)."""
    summary = summarize(cases)
    usage = merge([case.usage for case in cases])
    return {
        "schema_version": SCHEMA_VERSION,
        "agentdiff_version": __version__,
        **({"agents_python": agents_python} if agents_python is not None else {}),
        **({"shard": shard} if shard else {}),  # "K/N": `merge` checks that every shard is there
        "cases": None,
        "load_errors": [{"file": e.file, "line": e.line, "column": e.column, "path": e.path, "message": e.message} for e in load_errors],
        "summary": {
            "passed": summary.passed,
            "failed": summary.failed,
            "error": summary.error,
            "not_evaluated": summary.not_evaluated,
            "new": summary.new,
            "flaky": summary.flaky,
            # held to a minimum pass rate: the cases whose runs did not settle it (the key only then)
            **({"inconclusive": summary.inconclusive} if summary.inconclusive or summary.held else {}),
            "total": summary.total,
            "usage": usage,
            **({"cost": estimated_cost(usage, prices)} if prices else {}),
            "clusters": [{"signature": signature, "cases": [case.id for case in members]} for signature, members in clusters(cases)],
        },
    }


def render_json(cases: Sequence[CaseResult], agents_python: Optional[dict[str, Any]] = None,
                prices: Optional[Mapping[str, Mapping[str, float]]] = None, load_errors: Sequence[Any] = (), shard: Optional[str] = None) -> str:
    out = io.StringIO()
    write_json(out, cases, agents_python, prices, load_errors, shard)
    return out.getvalue()
