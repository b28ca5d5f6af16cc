"""The release gate: rules from `[tool.agentdiff.gate]` checked on a comparison of two runs.

    max_pass_rate_drop = 2        # points the pass rate may fall
    critical = ["label:payments", "set:customer_service", "id:*refund*"]   # zero regressions among these
    max_p95_seconds = 30          # the head run's p95 of one run's wall time
    max_total_tokens = 2000000    # and per case: max_case_tokens
    max_total_cost = 5.0          # dollars (needs `prices`); and per case: max_case_cost
    max_case_tool_calls = 12
    require_signoff = true        # baselines changed since signoff_since (default "main") need `agentdiff sign`

With no rule configured the gate allows no regression at all (as `critical = ["id:*"]`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence
from xml.sax.saxutils import escape, quoteattr

from agentdiff.core.scoring.confidence import mean_interval, settled
from agentdiff.core.scoring.results import percent
from agentdiff.core.reports.compare import Comparison, number_text
from agentdiff.core.reports.links import file_link

REGRESSIONS = ("regressed", "newly erroring", "newly flaky")  # a case that passed and no longer reliably does


@dataclass(frozen=True)
class Rule:
    name: str  # as configured: "max_p95_seconds = 30", "critical id:*refund*"
    broken: Optional[str] = None  # why, when broken
    cases: tuple[str, ...] = ()


@dataclass(frozen=True)
class GateResult:
    rules: list[Rule] = field(default_factory=list)
    regressions: list[Any] = field(default_factory=list)  # CaseDelta

    @property
    def passed(self) -> bool:
        return not any(rule.broken for rule in self.rules)


def selected(selector: str, case: Any, label_of: Callable[[str], Optional[str]]) -> bool:
    kind, _, value = selector.partition(":")
    if kind in ("label", "failure"):  # a failure-dictionary entry is a label
        return (label_of(case.id) or "") == value
    if kind == "set":
        set_part = case.id.split("::")[0]
        return set_part.rsplit("/", 1)[-1] in (value, f"{value}.evalset.json", f"{value}.test.json") or f"/{value}/" in f"/{set_part}/"
    return fnmatch.fnmatchcase(case.id, value)


def _pass_rate_rules(cmp: Comparison, rules: Mapping[str, Any], confidence: float) -> list[Rule]:
    """`min_pass_rate` (no case of the run below it, as `run` holds repeated cases to one), `max_inconclusive`
    (at most so many cases the run's repeats did not settle) and `max_paired_drop` (the mean drop of the
    cases' own pass rates, when it is significant: a paired t interval above zero)."""
    checked: list[Rule] = []
    inconclusive = [c.id for c in cmp.cases if c.head_status == "inconclusive"]
    if "min_pass_rate" in rules:
        minimum = min(1.0, rules["min_pass_rate"])
        below, unsettled = [], []
        head_cases = cmp.head.cases  # made on each read: once here, not once a case
        for case in cmp.cases:
            rated = isinstance((head_cases.get(case.id) or {}).get("pass_rate"), dict)
            if not case.head_status or case.counts[1] is None:
                continue
            case_id, (passes, runs) = case.id, case.counts[1]
            if not rated:  # it ran once, or replayed: its plain verdict (a replay is no sample to hold to a rate)
                verdict = "failed" if case.head_status == "failed" else "passed"
            elif minimum < 1:
                verdict = settled(passes, runs, minimum, confidence)
            else:
                verdict = "passed" if passes == runs else "failed"
            if verdict == "failed":
                below.append(f"{case_id} ({passes}/{runs})")
            elif verdict == "inconclusive" and case_id not in inconclusive:
                unsettled.append(case_id)
        inconclusive += unsettled
        checked.append(Rule(f"min_pass_rate = {rules['min_pass_rate']:g}",
                            f"{len(below)} case(s) below it: {', '.join(below[:5])}" if below else None, tuple(below)))
    if "max_inconclusive" in rules or ("min_pass_rate" in rules and inconclusive):
        limit = rules.get("max_inconclusive", 0)
        checked.append(Rule(f"max_inconclusive = {limit:g}",
                            f"{len(inconclusive)} case(s) inconclusive (more runs would settle them: `run --until-confident`): "
                            f"{', '.join(inconclusive[:5])}" if len(inconclusive) > limit else None, tuple(inconclusive)))
    if "max_paired_drop" in rules:
        limit = rules["max_paired_drop"]
        drops = [before[0] / before[1] - now[0] / now[1] for c in cmp.cases
                 if (before := c.counts[0]) is not None and (now := c.counts[1]) is not None and c.base_status and c.head_status]
        if len(drops) < 2:
            checked.append(Rule(f"max_paired_drop = {limit:g}", None if drops else "cannot be checked: no case is in both runs with a verdict"))
        else:
            mean, low, high = mean_interval(drops, confidence)
            broken = (f"the cases' pass rates fell {100 * mean:.1f} points on average over {len(drops)} cases "
                      f"({percent(confidence)} interval {100 * low:.1f}–{100 * high:.1f}), more than {100 * limit:g}"
                      if mean > limit and low > 0 else None)
            checked.append(Rule(f"max_paired_drop = {limit:g}", broken))
    return checked


def gate(cmp: Comparison, rules: Mapping[str, Any], label_of: Callable[[str], Optional[str]] = lambda _: None,
         unsigned: Optional[Sequence[str]] = None, blocked: Optional[Sequence[str]] = None, confidence: float = 0.95) -> GateResult:
    """`unsigned`: with `require_signoff`, the cases whose baseline changed since `signoff_since`
    without a sign-off (`baseline_review`). `blocked`: when the failure dictionary has entries that
    block the release, the run's failing cases bound to one (none may fail)."""
    rules = {k: v for k, v in rules.items() if k != "signoff_since"}
    if not any(k != "require_signoff" for k in rules):
        rules["critical"] = ["id:*"]
    regressions = [c for c in cmp.cases if c.category in REGRESSIONS]
    checked: list[Rule] = []
    if "max_pass_rate_drop" in rules:
        limit = rules["max_pass_rate_drop"]
        base, head = cmp.pass_rate("base"), cmp.pass_rate("head")
        if head is None and base is not None:  # no case ran: nothing passed
            checked.append(Rule(f"max_pass_rate_drop = {limit:g}", "cannot be checked: the run has no cases"))
        else:
            drop = (base - head) if base is not None and head is not None else 0.0
            checked.append(Rule(f"max_pass_rate_drop = {limit:g}",
                                f"the pass rate fell {drop:.1f} points ({base:.1f}% → {head:.1f}%), more than {limit:g}" if drop > limit else None))
    checked += _pass_rate_rules(cmp, rules, confidence)
    for selector in rules.get("critical", []):
        hit = [c.id for c in regressions if selected(selector, c, label_of)]
        checked.append(Rule(f"critical {selector}", f"{len(hit)} critical case(s) regressed: {', '.join(hit[:5])}" if hit else None, tuple(hit)))
    totals = cmp.totals("head")
    for key, total in (("max_p95_seconds", "p95 seconds"), ("max_total_tokens", "total tokens"), ("max_total_cost", "total cost")):
        if key in rules:
            value = totals.get(total)
            if value is None:
                broken = f"cannot be checked: the run reports no {total.split()[-1]}" + (" (a `prices` table gives costs)" if "cost" in key else "")
            else:
                broken = f"{total} {number_text(value, total)}, more than {number_text(rules[key], total)}" if value > rules[key] else None
            checked.append(Rule(f"{key} = {rules[key]:g}", broken))
    for key, name in (("max_case_tokens", "tokens"), ("max_case_cost", "cost"), ("max_case_tool_calls", "tool_calls")):
        if key in rules:
            over = [c for c in cmp.cases if c.measures[name][1] is not None and c.measures[name][1] > rules[key]]
            unknown = all(c.measures[name][1] is None for c in cmp.cases if c.head_status)
            broken = (f"cannot be checked: the run reports no {name.replace('_', ' ')}" + (" (a `prices` table gives costs)" if name == "cost" else "")
                      if unknown else
                      f"{len(over)} case(s) over {number_text(rules[key], name)} {name.replace('_', ' ')}: "
                      + ", ".join(f"{c.id} ({number_text(c.measures[name][1], name)})" for c in over[:5]) if over else None)
            checked.append(Rule(f"{key} = {rules[key]:g}", broken, tuple(c.id for c in over)))
    head_ids, base_ids = {c.id for c in cmp.cases if c.head_status}, {c.id for c in cmp.cases if c.base_status}
    if not head_ids or (base_ids and not head_ids & base_ids):  # nothing of the baseline was checked
        checked.insert(0, Rule("the run holds the baseline's cases", "the run has no cases: nothing was checked (a wrong path or folder?)"
                               if not head_ids else f"none of the baseline's {len(base_ids)} case(s) are in the run (ids changed, "
                               "or run from another folder?): nothing of the baseline was checked"))
    errored = [c.id for c in cmp.cases if c.head_status == "error"]
    if head_ids and len(errored) == len(head_ids):  # nothing ran to a verdict: nothing was checked
        checked.insert(0, Rule("the run's cases ran", f"every case of the run errored ({len(errored)}): nothing was checked"
                               f" ({', '.join(errored[:3])}{' …' if len(errored) > 3 else ''})", tuple(errored)))
    unloaded = cmp.head.load_errors
    if unloaded:  # their cases did not run: whatever they would say, the gate cannot pass without them
        checked.insert(0, Rule("every case file loads", f"{len(unloaded)} file(s) of the run did not load, so their cases did not run: "
                               + "; ".join(unloaded[:3])))
    if blocked is not None:
        checked.append(Rule("no failure that blocks the release", f"{len(blocked)} failing case(s) show a failure marked block: "
                            f"{', '.join(blocked[:5])}" if blocked else None, tuple(blocked)))
    if rules.get("require_signoff"):
        unsigned = list(unsigned or [])
        checked.append(Rule("require_signoff", f"{len(unsigned)} baseline change(s) not signed off: {', '.join(unsigned[:5])}"
                            " (agentdiff baselines lists them; agentdiff sign CASE… signs)" if unsigned else None, tuple(unsigned)))
    return GateResult(checked, regressions)


def gate_markdown(result: GateResult, cmp: Comparison, configured: bool, env: Optional[Mapping[str, str]] = None) -> str:
    """A PR comment: the verdict first, then the broken rules, then the regressions, each linked
    (on the code host inside a CI job: `links.file_link`)."""
    lines = [f"## agentdiff gate: {'✅ passed' if result.passed else '❌ failed'}",
             f"{cmp.base.name} → {cmp.head.name}" + ("" if configured else " · no rules configured: no case may regress")]
    broken = [rule for rule in result.rules if rule.broken]
    if broken:
        lines += ["", "### Broken rules", *[f"- `{rule.name}`: {rule.broken}" for rule in broken]]
    if result.regressions:
        lines += ["", "### Regressions"]
        for case in result.regressions:
            link = f"[{case.id}]({file_link(case.source, cmp.head.meta, env)})" if case.source else case.id
            lines.append(f"- {link}: {case.base_status} → {case.head_status}" + (f" — {case.first_divergence}" if case.first_divergence else ""))
    if missing_note(cmp):
        lines += ["", f"> {missing_note(cmp)}"]
    kept = [rule for rule in result.rules if not rule.broken]
    if kept:
        lines += ["", "<details><summary>Rules that held</summary>", "", *[f"- `{rule.name}`" for rule in kept], "", "</details>"]
    return "\n".join(lines) + "\n"


def gate_text(result: GateResult, cmp: Comparison, configured: bool) -> str:
    lines = [f"gate {'passed' if result.passed else 'FAILED'}: {cmp.base.name} → {cmp.head.name}"
             + ("" if configured else " (no rules configured: no case may regress)")]
    for rule in result.rules:
        lines.append(f"  {'✗' if rule.broken else '✓'} {rule.name}" + (f": {rule.broken}" if rule.broken else ""))
    for case in result.regressions:
        lines.append(f"  regressed: {case.id} ({case.base_status} → {case.head_status})" + (f": {case.first_divergence}" if case.first_divergence else ""))
    if missing_note(cmp):
        lines.append(f"  note: {missing_note(cmp)}")
    return "\n".join(lines) + "\n"


def missing_note(cmp: Comparison) -> str:
    """What the verdict did not see: cases of the baseline not in this run (a subset was run), cases
    of this run the baseline does not hold (it was a subset), and cases of this run that errored."""
    notes = []
    gone, added = cmp.of("removed"), cmp.of("added")
    errored = [c for c in cmp.cases if c.head_status == "error"]
    for cases, said in ((gone, "of the baseline are not in this run and were not checked"),
                        (added, "of this run are not in the baseline, so nothing says whether they regressed"),
                        (errored, "of this run errored")):
        if cases:
            notes.append(f"{len(cases)} case(s) {said} ({', '.join(c.id for c in cases[:3])}{' …' if len(cases) > 3 else ''})")
    return "; ".join(notes)


def gate_junit(result: GateResult) -> str:
    cases = []
    for rule in result.rules:
        body = f"<failure message={quoteattr(rule.broken)}>{escape(rule.broken)}</failure>" if rule.broken else ""
        cases.append(f'  <testcase classname="agentdiff.gate" name={quoteattr(rule.name)}>{body}</testcase>')
    failures = sum(1 for rule in result.rules if rule.broken)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuite name="agentdiff gate" tests="{len(result.rules)}" failures="{failures}">\n' + "\n".join(cases) + "\n</testsuite>\n")
