"""Comparing two runs (kept runs or JSON reports): which cases regressed, were fixed, became flaky
or erroring, were added or removed; each metric's score delta; seconds, tokens, cost and tool calls
per case and in total, with p50 and p95.

A case whose pass rates both runs report (it ran live more than once on a side) is compared by its pass
counts: it regressed only when the drop in its pass rate is significant (Fisher's exact test, one-sided,
p ≤ `ALPHA`) and at least `MIN_EFFECT`; a smaller or less certain move is "not significant", with its
p-value. Any other case (one run, a replay, a report from before pass rates) is compared by its verdicts,
as ever."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from agentdiff.core.reports.kept_runs import KeptRun
from agentdiff.core.reports.links import file_link
from agentdiff.core.reports.values import single_line
from agentdiff.core.scoring.confidence import drop_p_value

CATEGORIES = ("regressed", "newly erroring", "newly flaky", "not significant", "fixed", "added", "removed", "unchanged")
#: A drop in a repeated case's pass rate is a regression when Fisher's one-sided p is at most this …
ALPHA = 0.05
#: … and the rate fell by at least this much (a tiny, certain drop over thousands of runs is no regression).
MIN_EFFECT = 0.1
MEASURES = ("seconds", "tokens", "cost", "tool_calls")


def tokens_of(case: dict[str, Any]) -> int:
    usage = case.get("usage") or {}
    return sum(int(t.get("input", 0)) + int(t.get("output", 0)) for models in usage.values() if isinstance(models, dict)
               for t in models.values() if isinstance(t, dict))


def measure(case: Optional[dict[str, Any]], name: str) -> Optional[float]:
    if case is None:
        return None
    if name == "tokens":
        return float(tokens_of(case)) if case.get("usage") is not None else None
    value = case.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def category(base: Optional[str], head: Optional[str]) -> str:
    if base is None:
        return "added"
    if head is None:
        return "removed"
    if head == "error" and base != "error":
        return "newly erroring"
    if head == "flaky" and base != "flaky":
        return "newly flaky"
    if base == "passed" and head != "passed":
        return "regressed"
    if base != "passed" and head == "passed":
        return "fixed"
    return "unchanged"


@dataclass(frozen=True)
class CaseDelta:
    id: str
    category: str
    base_status: Optional[str]
    head_status: Optional[str]
    source: Optional[str] = None
    metrics: dict[str, tuple[Optional[float], Optional[float]]] = field(default_factory=dict)  # name: (base, head) score
    measures: dict[str, tuple[Optional[float], Optional[float]]] = field(default_factory=dict)  # MEASURES: (base, head)
    first_divergence: Optional[str] = None  # the head's
    counts: tuple[Optional[tuple[int, int]], Optional[tuple[int, int]]] = (None, None)  # (passes, runs) on each side
    p_value: Optional[float] = None  # a repeated case's move: Fisher's one-sided p of it


def pass_counts(case: Optional[dict[str, Any]]) -> Optional[tuple[int, int]]:
    """A case's (passes, runs): its `pass_rate` when the report has one; else from its verdict when its
    runs agreed (passed: all, failed: none); None when not known (a flaky case of an older report, an error)."""
    if case is None:
        return None
    rate = case.get("pass_rate")
    if isinstance(rate, dict) and isinstance(rate.get("passes"), int) and isinstance(rate.get("runs"), int) and rate["runs"] > 0:
        return rate["passes"], rate["runs"]
    runs = case.get("runs") if isinstance(case.get("runs"), int) and case.get("runs") > 0 else 1
    return {"passed": (runs, runs), "failed": (0, runs)}.get(case.get("status"))


def judged(base: Optional[dict[str, Any]], head: Optional[dict[str, Any]]) -> tuple[str, Optional[float]]:
    """A case's category, and for a repeated case's move its p-value."""
    plain = category(base and base.get("status"), head and head.get("status"))
    rated = all(isinstance((case or {}).get("pass_rate"), dict) for case in (base, head))  # both ran live, repeated, with rates
    before, now = pass_counts(base), pass_counts(head)
    if plain in ("added", "removed", "newly erroring") or not rated or before is None or now is None or max(before[1], now[1]) < 2:
        return plain, None
    drop = before[0] / before[1] - now[0] / now[1]
    if drop == 0:
        return ("unchanged" if plain in ("regressed", "fixed", "newly flaky") else plain), None
    p = drop_p_value(*before, *now) if drop > 0 else drop_p_value(*now, *before)
    if p <= ALPHA and abs(drop) >= MIN_EFFECT:
        return ("regressed" if drop > 0 else "fixed"), p
    return "not significant", p


def percentile(values: Sequence[float], p: float) -> Optional[float]:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass(frozen=True)
class Comparison:
    base: KeptRun
    head: KeptRun
    cases: list[CaseDelta]

    def of(self, category_name: str) -> list[CaseDelta]:
        return [case for case in self.cases if case.category == category_name]

    def pass_rate(self, side: str) -> Optional[float]:
        statuses = [c.base_status if side == "base" else c.head_status for c in self.cases]
        statuses = [s for s in statuses if s is not None]
        return 100 * sum(s == "passed" for s in statuses) / len(statuses) if statuses else None

    def totals(self, side: str) -> dict[str, Optional[float]]:
        """Total tokens, cost and tool calls, and p50 / p95 seconds, of one side."""
        index = 0 if side == "base" else 1
        out: dict[str, Optional[float]] = {}
        for name in MEASURES:
            values = [c.measures[name][index] for c in self.cases if c.measures.get(name, (None, None))[index] is not None]
            if name == "seconds":
                out["p50 seconds"], out["p95 seconds"] = percentile(values, 50), percentile(values, 95)  # type: ignore[arg-type]
            else:
                out[f"total {name}"] = round(sum(values), 6) if values else None  # type: ignore[arg-type]
        return out


def compare(base: KeptRun, head: KeptRun) -> Comparison:
    base_cases, head_cases = base.cases, head.cases
    ids = list(head_cases) + [i for i in base_cases if i not in head_cases]
    out = []
    for case_id in ids:
        b, h = base_cases.get(case_id), head_cases.get(case_id)
        scores: dict[str, tuple[Optional[float], Optional[float]]] = {}
        for side, case in ((0, b), (1, h)):
            for metric in (case or {}).get("metrics") or []:
                if metric.get("status") not in ("passed", "failed") and not metric.get("scored"):
                    continue  # informational and unscored metrics do not decide verdicts (agents-cli's scores are compared)
                pair = list(scores.get(metric["name"], (None, None)))
                pair[side] = metric.get("score")
                scores[metric["name"]] = (pair[0], pair[1])
        layers = (h or {}).get("layers") or []
        first = next((layer.get("first_divergence") for layer in layers if layer.get("status") == "changed" and layer.get("first_divergence")), None)
        kind, p = judged(b, h)
        out.append(CaseDelta(
            case_id, kind, b and b.get("status"), h and h.get("status"),
            (h or b or {}).get("source"), scores, {name: (measure(b, name), measure(h, name)) for name in MEASURES},
            first or (h or {}).get("error"), (pass_counts(b), pass_counts(h)), p,
        ))
    return Comparison(base, head, out)


def number_text(value: Optional[float], name: str = "") -> str:
    if value is None:
        return "-"
    if "cost" in name:
        return f"${value:.4f}"
    if "seconds" in name:
        return f"{value:.2f} s"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def delta_text(base: Optional[float], head: Optional[float], name: str = "") -> str:
    if base is None or head is None:
        return f"{number_text(base, name)} → {number_text(head, name)}"
    change = head - base
    sign = "+" if change > 0 else "−" if change < 0 else "±"
    return f"{number_text(base, name)} → {number_text(head, name)} ({sign}{number_text(abs(change), name)})"


def agent_changes(cmp: Comparison) -> list[str]:
    """What changed in the agents between the runs, from the hashes each run kept: models, prompts,
    tool sources."""
    before, after = cmp.base.meta.get("agents") or {}, cmp.head.meta.get("agents") or {}
    said = []
    for agent in sorted(set(before) & set(after)):
        old, new = before[agent], after[agent]
        for key, name in (("models", "model"), ("instructions", "prompt"), ("tools", "tool source")):
            for item in sorted(set(old.get(key) or {}) | set(new.get(key) or {})):
                was, now = (old.get(key) or {}).get(item), (new.get(key) or {}).get(item)
                if was != now:
                    said.append(f"{agent}: {name} of {item} {'changed' if key != 'models' else f'{was} → {now}'}"
                                if was and now else f"{agent}: {name} of {item} {'added' if now else 'removed'}")
        if old.get("adk") != new.get("adk"):
            said.append(f"{agent}: ADK {old.get('adk')} → {new.get('adk')}")
    return said


def comparison_dict(cmp: Comparison) -> dict[str, Any]:
    return {
        "base": cmp.base.name,
        "head": cmp.head.name,
        "agent_changes": agent_changes(cmp),
        "pass_rate": {"base": cmp.pass_rate("base"), "head": cmp.pass_rate("head")},
        "totals": {"base": cmp.totals("base"), "head": cmp.totals("head")},
        "counts": {name: len(cmp.of(name)) for name in CATEGORIES},
        "cases": [
            {"id": c.id, "category": c.category, "base": c.base_status, "head": c.head_status, "source": c.source,
             "first_divergence": c.first_divergence,
             **({"passes": {"base": _count(c.counts[0]), "head": _count(c.counts[1])}, "p_value": c.p_value} if c.p_value is not None else {}),
             "metrics": {name: {"base": b, "head": h} for name, (b, h) in c.metrics.items()},
             **{name: {"base": b, "head": h} for name, (b, h) in c.measures.items()}}
            for c in cmp.cases
        ],
    }


def _count(counts: Optional[tuple[int, int]]) -> Optional[str]:
    return f"{counts[0]}/{counts[1]}" if counts else None


def comparison_lines(cmp: Comparison, markdown: bool = False, env: Optional[Mapping[str, str]] = None) -> list[str]:
    """The comparison for a terminal, or as Markdown (a PR comment; `env`: the CI job's, for its
    links, else this process's)."""
    lines = [f"## {cmp.base.name} → {cmp.head.name}" if markdown else f"{cmp.base.name} → {cmp.head.name}"]
    rate_b, rate_h = cmp.pass_rate("base"), cmp.pass_rate("head")
    head = [f"pass rate {number_text(rate_b)}% → {number_text(rate_h)}%" if rate_b is not None and rate_h is not None else "pass rate -",
            ", ".join(f"{len(cmp.of(name))} {name}" for name in CATEGORIES if cmp.of(name)) or "no cases"]
    totals_b, totals_h = cmp.totals("base"), cmp.totals("head")
    head.append(" · ".join(f"{name} {delta_text(totals_b[name], totals_h[name], name)}" for name in totals_h
                           if totals_b[name] is not None or totals_h[name] is not None))
    head += [f"changed: {change}" for change in agent_changes(cmp)]
    lines += ["", *[f"- {line}" for line in head]] if markdown else head
    for name in CATEGORIES[:-1]:
        cases = cmp.of(name)
        if not cases:
            continue
        lines.append("")
        lines.append(f"### {name} ({len(cases)})" if markdown else f"{name} ({len(cases)}):")
        for case in cases:
            side = cmp.base if case.category == "removed" else cmp.head  # a removed case's file is in the base run's commit
            shown = single_line(case.id)
            label = f"[{shown}]({file_link(case.source, side.meta, env)})" if markdown and case.source else shown
            moved_by = (f" ({_count(case.counts[0])} → {_count(case.counts[1])} runs passed, p={case.p_value:.2g})"
                        if case.p_value is not None else "")
            lines.append(f"- {label}: {case.base_status or '-'} → {case.head_status or '-'}{moved_by}" if markdown
                         else f"  {shown}: {case.base_status or '-'} → {case.head_status or '-'}{moved_by}")
            pad = "  " if markdown else "      "
            if case.first_divergence and case.category in ("regressed", "newly erroring", "newly flaky"):
                lines.append(f"{pad}{single_line(case.first_divergence)}")
            moved = [f"{single_line(metric)} {delta_text(b, h)}" for metric, (b, h) in case.metrics.items() if b is not None and h is not None and b != h]
            if moved:
                lines.append(f"{pad}{' · '.join(moved)}")
    changed = [c for c in cmp.cases if c.category == "unchanged" and any(
        b is not None and h is not None and b != h for b, h in c.metrics.values())]
    if changed:
        lines.append("")
        lines.append(f"### scores moved, verdict unchanged ({len(changed)})" if markdown else f"scores moved, verdict unchanged ({len(changed)}):")
        for case in changed:
            moved = [f"{single_line(m)} {delta_text(b, h)}" for m, (b, h) in case.metrics.items() if b is not None and h is not None and b != h]
            lines.append(f"{'- ' if markdown else '  '}{single_line(case.id)}: {' · '.join(moved)}")
    return lines
