"""Verdicts over a non-deterministic agent's runs: the pass rate with its interval, `inconclusive` with
"run k more", run-until-confident, and compare / gate by statistics. Agents with known pass chances are
scripted in process (seeded); every expected number is computed here independently with scipy."""

from __future__ import annotations

import random

import pytest
from agentdiff.core.reports.compare import compare
from agentdiff.core.reports.gate import gate
from agentdiff.core.reports.kept_runs import KeptRun
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.until_confident import plan, settle_all, with_looks
from agentdiff.core.scoring.pass_rate import PassRule, PassRules, with_pass_rate
from agentdiff.core.scoring.results import CaseResult, CaseStatus, RunRecord
from agentdiff.core.workbench.workbench import Workbench
from pathlib import Path
from scipy import stats
from workbench_support import EchoPool, case_id, echo_project, eval_set, write_set

WRONG = "something else entirely"


def wilson(passes: int, runs: int, confidence: float = 0.95) -> tuple[float, float]:
    ci = stats.binomtest(passes, runs).proportion_ci(confidence_level=confidence, method="wilson")
    return ci.low, ci.high


def expected_verdict(passes: int, runs: int, minimum: float, confidence: float = 0.95) -> str:
    low, high = wilson(passes, runs, confidence)
    return "passed" if low >= minimum else "failed" if high < minimum else "inconclusive"


def runs_to_settle(passes: int, runs: int, minimum: float, confidence: float = 0.95) -> "int | None":
    """Brute force: the fewest more runs at the observed rate after which scipy's interval settles it."""
    for more in range(0, 1001):
        if expected_verdict(passes + round(passes / runs * more), runs + more, minimum, confidence) != "inconclusive":
            return more
    return None


def result(passes: int, runs: int, status: "CaseStatus | None" = None) -> CaseResult:
    records = tuple(RunRecord((), None, status=CaseStatus.PASSED if i < passes else CaseStatus.FAILED) for i in range(runs))
    plain = CaseStatus.PASSED if passes == runs else CaseStatus.FAILED if passes == 0 else CaseStatus.FLAKY
    return CaseResult(id="x", source="x", eval_set_id=None, eval_id="x", agent=None, mode="live", status=status or plain, runs=records)


# --- one case's runs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("passes, runs", [(0, 1), (1, 1), (0, 10), (10, 10), (7, 10), (8, 10), (9, 10), (38, 40), (35, 35), (24, 40)])
@pytest.mark.parametrize("minimum", [0.5, 0.8, 0.9])
def test_a_minimum_pass_rate_settles_by_the_intervals_bounds_and_says_how_many_more_runs(passes, runs, minimum):
    held = with_pass_rate(result(passes, runs), PassRule(minimum))
    rate = held.pass_rate
    assert (rate.passes, rate.runs) == (passes, runs)
    assert (rate.low, rate.high) == pytest.approx(wilson(passes, runs))
    assert held.status.value == expected_verdict(passes, runs, minimum)
    if held.status is CaseStatus.INCONCLUSIVE:
        more = runs_to_settle(passes, runs, minimum)
        assert rate.more_runs == more
        assert (f"run {more} more to settle it" if more else "more runs would not settle it") in held.error
        assert f"{passes}/{runs} runs passed" in held.error


def test_with_no_minimum_the_plain_verdict_stands_and_the_interval_is_shown_beside_it():
    flaky = with_pass_rate(result(7, 10), PassRule())
    assert flaky.status is CaseStatus.FLAKY and flaky.pass_rate.min_pass_rate is None
    assert flaky.pass_rate.words == "7/10 runs passed: 70% (95% interval 40–89%)"
    steady = with_pass_rate(result(5, 5), PassRule())
    assert steady.status is CaseStatus.PASSED and steady.error is None and steady.pass_rate.low == pytest.approx(wilson(5, 5)[0])
    once = result(1, 1)
    assert with_pass_rate(once, PassRule()) is once  # one run, no rule: nothing to add
    assert with_pass_rate(result(9, 10), PassRule(1.0)).status is CaseStatus.FLAKY  # 1.0 is the plain rule: no bound reaches it
    errored = result(3, 3, CaseStatus.ERROR)
    assert with_pass_rate(errored, PassRule(0.5)) is errored  # an error stays an error


def test_what_the_docs_say_the_rule_implies():
    assert with_pass_rate(result(10, 10), PassRule(0.9)).status is CaseStatus.INCONCLUSIVE
    assert with_pass_rate(result(10, 10), PassRule(0.9)).pass_rate.more_runs == 25  # a clean pass needs 35 runs
    assert with_pass_rate(result(35, 35), PassRule(0.9)).status is CaseStatus.PASSED
    assert with_pass_rate(result(8, 10), PassRule(0.9)).status is CaseStatus.INCONCLUSIVE


def test_pass_hat_k_and_each_metrics_spread_are_reported_where_asked():
    from agentdiff.core.formats.eval_config import EvalMetric
    from agentdiff.core.scoring.metrics import MetricEvaluation, MetricStatus

    metric = EvalMetric(metric_name="response_match_score", threshold=0.8)
    scores = [1.0, 0.5, 0.9, 0.7]
    records = tuple(RunRecord((), None, (MetricEvaluation(metric, score, MetricStatus.PASSED if score >= 0.8 else MetricStatus.FAILED),),
                              CaseStatus.PASSED if score >= 0.8 else CaseStatus.FAILED) for score in scores)
    case = CaseResult(id="x", source="x", eval_set_id=None, eval_id="x", agent=None, mode="live", status=CaseStatus.FLAKY, runs=records)
    rate = with_pass_rate(case, PassRule(pass_hat_k=(2, 5))).pass_rate
    assert rate.pass_hat_k == ((2, pytest.approx(1 / 6)),)  # C(2,2)/C(4,2); pass^5 of 4 runs is not known
    spread = rate.metrics[0]
    reference = stats.t.interval(0.95, 3, loc=sum(scores) / 4, scale=stats.sem(scores))
    assert spread.name == "response_match_score" and spread.mean == pytest.approx(0.775)
    assert (spread.low, spread.high) == pytest.approx((max(0, reference[0]), min(1, reference[1])))  # on [0, 1], as the scores are


def test_the_most_specific_rule_holds_a_case():
    rules = PassRules(min_pass_rate=0.9, confidence=0.9, for_cases={"weather/*": 0.7, "weather/slow/*": 0.5})
    assert rules.rule("billing/a::x") == PassRule(0.9, 0.9)
    assert rules.rule("billing/a::x", suite_min=0.8, suite_confidence=0.99) == PassRule(0.8, 0.99)  # its test_config.json
    assert rules.rule("weather/slow/a::x", suite_min=0.8).min_pass_rate == 0.5  # a glob over the suite's file
    given = PassRules(min_pass_rate=0.9, for_cases={"weather/*": 0.7}, given_min_pass_rate=0.6, given_confidence=0.8)
    assert given.rule("weather/a::x", suite_min=0.8, suite_confidence=0.99) == PassRule(0.6, 0.8)  # the command line's over all


# --- agents with known chances, run many times ---------------------------------------------------------------


class ChancePool(EchoPool):
    """Each case's agent answers right with its chance (seeded per case: the same runs every time)."""

    def __init__(self, chances: dict[str, float], seed: int = 7) -> None:
        super().__init__()
        self.chances = chances
        self.rngs: dict[str, random.Random] = {}
        self.seed = seed

    async def run(self, job, timeout=None):
        out = await super().run(job, timeout)
        rng = self.rngs.setdefault(job.case_id, random.Random(f"{self.seed}:{job.case_id}"))
        if rng.random() >= self.chances.get(job.case_id, 1.0):
            for event in out.events[1::2]:
                event["content"] = {"role": "model", "parts": [{"text": WRONG}]}
        return out

    def runs_of(self, case: str) -> int:
        return sum(job.case_id == case for job in self.jobs)


CHANCES = {"always": 1.0, "mostly": 0.95, "often": 0.6, "never": 0.0}


def chance_project(root: Path) -> dict[str, str]:
    echo_project(root, {"echo": []})
    cases = eval_set("echo", ["hello"] * len(CHANCES))["eval_cases"]
    for case, name in zip(cases, CHANCES):
        case["eval_id"] = name
    write_set(root, "echo", {"eval_set_id": "echo", "eval_cases": cases})
    return {case_id("echo", name): name for name in CHANCES}


async def test_scripted_agents_with_known_chances_get_the_verdicts_their_counts_call_for(tmp_path):
    ids = chance_project(tmp_path)
    pool = ChancePool({case: CHANCES[name] for case, name in ids.items()})
    wb = Workbench(tmp_path, [tmp_path / "agents"], pool, RunOptions(num_runs=40, pass_rules=PassRules(min_pass_rate=0.8)))
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    verdicts = {}
    for case, name in ids.items():
        held = wb.cases[case].run.result
        rate = held.pass_rate
        assert rate.runs == 40 and (rate.low, rate.high) == pytest.approx(wilson(rate.passes, 40))
        assert held.status.value == expected_verdict(rate.passes, 40, 0.8), (name, rate)
        verdicts[name] = held.status.value
    assert verdicts["always"] == "passed" and verdicts["never"] == "failed" and verdicts["often"] == "failed"


async def test_run_until_confident_spends_runs_only_on_the_unclear_cases_and_stops_each_once_it_settles(tmp_path):
    ids = chance_project(tmp_path)
    by_name = {name: case for case, name in ids.items()}
    pool = ChancePool({case: CHANCES[name] for case, name in ids.items()}, seed=3)
    options = with_looks(RunOptions(num_runs=10, pass_rules=PassRules(min_pass_rate=0.5)), 80)
    assert options.pass_rules.rule("x").confidence == pytest.approx(1 - 0.05 / 4)  # looks at 10, 20, 40 and 80 runs
    wb = Workbench(tmp_path, [tmp_path / "agents"], pool, options)
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    first = [wb.cases[case].run for case in ids]
    unclear = [run.ref.id for run in first if run.result.status is CaseStatus.INCONCLUSIVE]
    assert by_name["always"] not in unclear and by_name["never"] not in unclear  # 10/10 and 0/10 settle against 0.5 at once
    assert "runs at the most" not in plan(first, 80).line() and f"{len(unclear)} inconclusive case(s): at most" in plan(first, 80).line()
    looked = []
    settled = await settle_all(first, pool, options, tmp_path, 80, looked=looked.append)
    for run in settled:
        name = ids[run.ref.id]
        runs = len(run.result.runs)
        assert pool.runs_of(run.ref.id) == runs  # every run it was given is in its verdict
        if run.ref.id not in unclear:
            assert runs == 10 and run is first[list(ids).index(run.ref.id)]
            continue
        rate = run.result.pass_rate
        assert runs in (20, 40, 80) and rate.runs == runs
        confidence = 1 - 0.05 / 4
        assert run.result.status.value == expected_verdict(rate.passes, runs, 0.5, confidence), (name, rate)
        if run.result.status is CaseStatus.INCONCLUSIVE:
            assert runs == 80  # it stops only at the most it may have
        else:  # and it stopped at the first look that settled it
            half = [record.status is CaseStatus.PASSED for record in run.result.runs[: runs // 2]]
            assert runs == 20 or expected_verdict(sum(half), runs // 2, 0.5, confidence) == "inconclusive"
    assert any(len(run.result.runs) > 10 for run in settled) and looked


# --- compare and gate --------------------------------------------------------------------------------------


def kept(name: str, **cases: tuple[int, int]) -> KeptRun:
    def case(case_id: str, passes: int, runs: int) -> dict:
        status = "passed" if passes == runs else "failed" if passes == 0 else "flaky"
        return {"id": case_id, "source": "s.evalset.json", "status": status, "metrics": [], "layers": [], "error": None, "runs": runs,
                "pass_rate": {"passes": passes, "runs": runs, "rate": passes / runs, "interval": list(wilson(passes, runs)),
                              "confidence": 0.95, "min_pass_rate": None, "more_runs": None, "pass_hat_k": {}, "metrics": []}}
    return KeptRun(name, Path(name), {"cases": [case(i, *counts) for i, counts in cases.items()]})


def test_compare_calls_a_drop_a_regression_only_when_it_is_significant():
    cmp = compare(kept("base", slips=(9, 10), falls=(10, 10), holds=(10, 10)), kept("head", slips=(8, 10), falls=(2, 10), holds=(10, 10)))
    by_id = {c.id: c for c in cmp.cases}
    reference = stats.fisher_exact([[9, 1], [8, 2]], alternative="greater").pvalue
    assert by_id["slips"].category == "not significant" and by_id["slips"].p_value == pytest.approx(reference)
    assert by_id["falls"].category == "regressed" and by_id["falls"].p_value < 0.001
    assert by_id["holds"].category == "unchanged"
    from agentdiff.core.reports.compare import comparison_lines

    lines = "\n".join(comparison_lines(cmp))
    assert f"slips: flaky → flaky (9/10 → 8/10 runs passed, p={reference:.2g})" in lines
    one_each = compare(kept("base", once=(1, 1)), kept("head", once=(0, 1)))
    assert one_each.cases[0].category == "regressed"  # one run a side: the verdicts, as ever
    assert compare(kept("base", all=(3, 3)), kept("head", all=(0, 3))).cases[0].category == "regressed"  # p = 0.05
    older = kept("base", slips=(9, 10))
    older.cases["slips"].pop("pass_rate")  # a run kept before pass rates: compared by its verdicts
    assert compare(older, kept("head", slips=(10, 10))).cases[0].category == "fixed"


def test_the_gate_holds_pass_rates_inconclusive_cases_and_the_paired_drop():
    base = kept("base", **{f"c{i}": (10, 10) for i in range(6)})
    head = kept("head", c0=(10, 10), c1=(9, 10), c2=(1, 10), c3=(6, 10), c4=(6, 10), c5=(5, 10))
    result = gate(compare(base, head), {"min_pass_rate": 0.5, "max_inconclusive": 1, "max_paired_drop": 0.1})
    broken = {rule.name: rule.broken for rule in result.rules}
    assert broken["min_pass_rate = 0.5"].startswith("1 case(s) below it: c2 (1/10)")
    assert broken["max_inconclusive = 1"].startswith("3 case(s) inconclusive")  # 6/10, 6/10 and 5/10 straddle 0.5
    drops = [0, 0.1, 0.9, 0.4, 0.4, 0.5]
    mean = sum(drops) / 6
    low = mean - stats.t.ppf(0.975, 5) * stats.sem(drops)
    assert low > 0 and f"fell {100 * mean:.1f} points on average over 6 cases" in broken["max_paired_drop = 0.1"]
    calm = gate(compare(base, kept("head", **{f"c{i}": (10, 10) for i in range(5)}, c5=(9, 10))), {"max_paired_drop": 0.1})
    assert calm.passed


def test_a_judges_samples_get_their_mean_and_interval_too():
    from agentdiff.core.formats.eval_config import EvalMetric
    from agentdiff.core.scoring.metrics import InvocationScore, MetricEvaluation, MetricStatus

    metric = EvalMetric(metric_name="final_response_match_v2", threshold=0.5)
    samples = [[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]  # two runs, a judge sampled three times each
    records = tuple(RunRecord((), None, (MetricEvaluation(metric, sum(s) / 3, MetricStatus.PASSED,
                                                          (InvocationScore(sum(s) / 3, MetricStatus.PASSED, {"samples": [{"score": v} for v in s]}),)),),
                              CaseStatus.PASSED) for s in samples)
    case = CaseResult(id="x", source="x", eval_set_id=None, eval_id="x", agent=None, mode="live", status=CaseStatus.PASSED, runs=records)
    spreads = {m.name: m for m in with_pass_rate(case, PassRule()).pass_rate.metrics}
    flat = [v for s in samples for v in s]
    reference = stats.t.interval(0.95, 5, loc=sum(flat) / 6, scale=stats.sem(flat))
    judged = spreads["final_response_match_v2 · samples"]
    assert judged.runs == 6 and (judged.low, judged.high) == pytest.approx((reference[0], 1.0))  # a score's interval stays on [0, 1]


def test_the_pass_rate_flags_reach_the_workbench_of_every_command_that_runs_cases():
    from agentdiff.tui.cli import build_parser
    from agentdiff.tui.cli.options import pass_rules
    from agentdiff.tui.cli.serve import watch_command
    from agentdiff.core.project.config import ProjectConfig

    args = build_parser().parse_args(["serve", "--min-pass-rate", "0.8", "--confidence", "0.9", "--pass-hat-k", "3"])
    assert "--min-pass-rate 0.8 --confidence 0.9 --pass-hat-k 3" in watch_command(args)  # each browser tab's TUI
    watch = build_parser().parse_args(["watch", "--min-pass-rate", "0.8"])
    rules = pass_rules(watch, ProjectConfig(Path("."), min_pass_rate=0.5, pass_hat_k=(2,)))
    assert rules.rule("a::b", suite_min=0.7) == PassRule(0.8, 0.95, (2,))
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--min-pass-rate", "1.5"])


def test_exit_codes_of_inconclusive_and_new_cases_and_the_settings_that_let_them_pass():
    from agentdiff.tui.cli.errors import exit_code

    passed, new, unsure, failed = (result(3, 3, status) for status in (CaseStatus.PASSED, CaseStatus.NEW, CaseStatus.INCONCLUSIVE, CaseStatus.FAILED))
    assert exit_code([passed, unsure], []) == 3 and exit_code([passed, unsure], [], inconclusive_passes=True) == 0
    assert exit_code([passed, new], []) == 1 and exit_code([passed, new], [], new_passes=True) == 0  # a new snapshot in CI fails
    assert exit_code([new, unsure], [], new_passes=True) == 3 and exit_code([failed, unsure], [], inconclusive_passes=True) == 1


def test_the_table_says_a_repeated_cases_rate_and_still_its_divergence():
    from agentdiff.core.scoring.results import LayerSummary
    from agentdiff.tui.cli.table import render_case_table
    import dataclasses

    failed = dataclasses.replace(with_pass_rate(result(0, 3), PassRule()),
                                 layers=(LayerSummary("response", "changed", "turn 1 · response · \"a\" → \"b\"", True),))
    text = render_case_table([failed])
    assert "    0/3 runs passed: 0% (95% interval 0–56%)" in text and '    turn 1 · response · "a" → "b"' in text
