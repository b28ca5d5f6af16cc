"""The release loop: kept runs, comparing two runs, the release gate; and end to end on the samples:
a prompt edit breaks a critical case, `compare` lists it and `gate` fails naming the rule."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from agentdiff.core.project.config import load_project_config
from agentdiff.core.reports.compare import compare, comparison_dict, percentile
from agentdiff.core.reports.gate import gate, gate_junit, gate_markdown
from agentdiff.core.reports.kept_runs import RUNS_DIR, KeptRun, RunNotFound, default_pair, find_run, kept, prune
from conftest import ROOT


def case(case_id, status, score=None, seconds=None, tokens=None, cost=None, tools=None):
    data = {"id": case_id, "source": f"{case_id.split('::')[0]}", "status": status, "metrics": [], "layers": [], "error": None,
            "seconds": seconds, "tool_calls": tools}
    if score is not None:
        data["metrics"] = [{"name": "response_match_score", "score": score, "threshold": 0.7, "status": "passed" if score >= 0.7 else "failed"}]
    if tokens is not None:
        data["usage"] = {"agent": {"m": {"input": tokens, "output": 0}}}
    if cost is not None:
        data["cost"] = cost
    return data


def report(name, *cases, branch=None):
    return KeptRun(name, Path(name), {"cases": list(cases), "run": {"git": {"branch": branch}} if branch else {}})


BASE = report(
    "base",
    case("s.evalset.json::steady", "passed", 0.9, 1.0, 100, 0.01, 2),
    case("s.evalset.json::breaks", "passed", 0.9, 1.0, 100, 0.01, 2),
    case("s.evalset.json::heals", "failed", 0.5, 1.0, 100, 0.01, 2),
    case("s.evalset.json::wobbles", "passed", 0.9, 1.0, 100, 0.01, 2),
    case("s.evalset.json::crashes", "passed", 0.9, 1.0, 100, 0.01, 2),
    case("s.evalset.json::goes", "passed", 0.9, 1.0, 100, 0.01, 2),
)
HEAD = report(
    "head",
    case("s.evalset.json::steady", "passed", 0.8, 2.0, 150, 0.02, 3),
    case("s.evalset.json::breaks", "failed", 0.4, 9.0, 900, 0.09, 14),
    case("s.evalset.json::heals", "passed", 0.9, 1.0, 100, 0.01, 2),
    case("s.evalset.json::wobbles", "flaky", 0.9, 1.0, 100, 0.01, 2),
    case("s.evalset.json::crashes", "error"),
    case("t.evalset.json::arrives", "passed", 1.0, 1.0, 100, 0.01, 1),
)


def test_a_comparison_sorts_every_case_into_what_happened_to_it():
    cmp = compare(BASE, HEAD)
    assert {c.id.split("::")[1]: c.category for c in cmp.cases} == {
        "steady": "unchanged", "breaks": "regressed", "heals": "fixed", "wobbles": "newly flaky",
        "crashes": "newly erroring", "goes": "removed", "arrives": "added"}
    steady = next(c for c in cmp.cases if c.id.endswith("steady"))
    assert steady.metrics["response_match_score"] == (0.9, 0.8)
    assert steady.measures == {"seconds": (1.0, 2.0), "tokens": (100.0, 150.0), "cost": (0.01, 0.02), "tool_calls": (2.0, 3.0)}
    totals = cmp.totals("head")
    assert totals["total tokens"] == 1350 and totals["total tool_calls"] == 22 and totals["p95 seconds"] == 9.0
    assert cmp.pass_rate("base") == pytest.approx(100 * 5 / 6) and cmp.pass_rate("head") == pytest.approx(100 * 3 / 6)
    data = comparison_dict(cmp)
    assert data["counts"]["regressed"] == 1 and data["cases"][1]["tokens"] == {"base": 100.0, "head": 900.0}
    assert percentile([1, 2, 3, 4], 50) == 2 and percentile([], 95) is None


def broken(result) -> dict[str, str]:
    return {rule.name: rule.broken for rule in result.rules if rule.broken}


def test_with_no_rules_the_gate_lets_no_case_regress():
    from agentdiff.core.reports.gate import gate_text

    result = gate(compare(BASE, HEAD), {})
    assert "note: 1 case(s) of the baseline are not in this run and were not checked (s.evalset.json::goes)" in gate_text(
        result, compare(BASE, HEAD), configured=False)
    assert not result.passed and list(broken(result)) == ["critical id:*"]
    assert {c.id.split("::")[1] for c in result.regressions} == {"breaks", "crashes", "wobbles"}  # newly flaky counts
    assert gate(compare(BASE, BASE), {}).passed


def test_in_a_ci_job_markdown_links_lead_to_the_case_s_file_on_the_code_host_at_the_run_s_commit(tmp_path, monkeypatch):
    """A PR comment is read on GitHub or GitLab: a project-relative path would lead nowhere there."""
    from agentdiff.core.reports.links import file_link

    meta = {"git": {"commit": "abc123", "prefix": "services/bot/"}}
    github = {"GITHUB_REPOSITORY": "acme/agents", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_SHA": "fff",
              "GITHUB_WORKSPACE": str(tmp_path)}
    assert file_link("evals/my set.evalset.json", meta, github) == "https://github.com/acme/agents/blob/abc123/services/bot/evals/my%20set.evalset.json"
    # a JSON report keeps no git state: the job's commit, and the project's place in the job's checkout
    (tmp_path / "services" / "bot").mkdir(parents=True)
    assert file_link("a.evalset.json", {}, github, cwd=str(tmp_path / "services" / "bot")) == \
        "https://github.com/acme/agents/blob/fff/services/bot/a.evalset.json"
    assert file_link("a.evalset.json", {}, github, cwd=str(tmp_path)) == "https://github.com/acme/agents/blob/fff/a.evalset.json"
    assert file_link("a.evalset.json", {}, {**github, "GITHUB_WORKSPACE": ""}) == "a.evalset.json"  # its place unknown: no guess
    assert file_link("../elsewhere/a.evalset.json", meta, github) == "../elsewhere/a.evalset.json"  # outside the project
    gitlab = {"CI_PROJECT_URL": "https://gitlab.example/acme/agents", "CI_COMMIT_SHA": "eee"}
    assert file_link("a.evalset.json", meta, gitlab) == "https://gitlab.example/acme/agents/-/blob/abc123/services/bot/a.evalset.json"
    assert file_link("a.evalset.json", meta, {}) == "a.evalset.json"  # not in a CI job: the path
    from agentdiff.core.reports.compare import comparison_lines

    cmp = compare(BASE, HEAD)
    monkeypatch.chdir(tmp_path)  # the checkout's top
    link = "- [s.evalset.json::breaks](https://github.com/acme/agents/blob/fff/s.evalset.json): passed → failed"
    assert link in gate_markdown(gate(cmp, {}), cmp, configured=False, env=github)
    assert link in comparison_lines(cmp, True, github)


def test_each_gate_rule_holds_or_says_why_it_broke():
    cmp = compare(BASE, HEAD)
    labels = {"s.evalset.json::breaks": "payments"}.get
    result = gate(cmp, {"max_pass_rate_drop": 50, "critical": ["label:payments", "label:search", "set:s", "id:*heals"],
                        "max_p95_seconds": 5, "max_total_tokens": 2000, "max_case_tokens": 500, "max_total_cost": 0.1,
                        "max_case_cost": 0.05, "max_case_tool_calls": 12}, labels)
    assert broken(result) == {
        "critical label:payments": "1 critical case(s) regressed: s.evalset.json::breaks",
        "critical set:s": "3 critical case(s) regressed: s.evalset.json::breaks, s.evalset.json::wobbles, s.evalset.json::crashes",
        "max_p95_seconds = 5": "p95 seconds 9.00 s, more than 5.00 s",
        "max_case_tokens = 500": "1 case(s) over 500 tokens: s.evalset.json::breaks (900)",
        "max_total_cost = 0.1": "total cost $0.1400, more than $0.1000",
        "max_case_cost = 0.05": "1 case(s) over $0.0500 cost: s.evalset.json::breaks ($0.0900)",
        "max_case_tool_calls = 12": "1 case(s) over 12 tool calls: s.evalset.json::breaks (14)",
    }
    held = {rule.name for rule in result.rules if not rule.broken}
    assert held == {"max_pass_rate_drop = 50", "critical label:search", "critical id:*heals", "max_total_tokens = 2000"}
    dropped = gate(cmp, {"max_pass_rate_drop": 10})
    assert broken(dropped) == {"max_pass_rate_drop = 10": "the pass rate fell 33.3 points (83.3% → 50.0%), more than 10"}
    unpriced = compare(report("b", case("a", "passed", seconds=1.0)), report("h", case("a", "passed", seconds=1.0)))
    assert "cannot be checked: the run reports no cost" in broken(gate(unpriced, {"max_total_cost": 1}))["max_total_cost = 1"]
    markdown = gate_markdown(result, cmp, configured=True, env={})
    assert markdown.startswith("## agentdiff gate: ❌ failed") and markdown.index("### Broken rules") < markdown.index("### Regressions")
    assert "- [s.evalset.json::breaks](s.evalset.json): passed → failed" in markdown
    assert gate_junit(result).count("<failure") == 7


def test_gate_rules_in_the_configuration_are_checked(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.agentdiff.gate]\nmax_p95_seconds = 30\ncritical = ["label:pay", "set:"]\nmax_speed = 3\n')
    config, errors = load_project_config(tmp_path)
    assert config.gate == {"max_p95_seconds": 30.0}
    assert sorted(e.message for e in errors) == [
        "`gate.critical` must be a list of label:NAME (or failure:NAME), set:NAME or id:GLOB",
        "unknown gate rule 'max_speed' (use max_pass_rate_drop, max_p95_seconds, max_total_tokens, max_case_tokens, "
        "max_total_cost, max_case_cost, max_case_tool_calls, min_pass_rate, max_inconclusive, max_paired_drop, critical, "
        "require_signoff, signoff_since)"]


def write_kept(root: Path, name: str, branch: str | None = None) -> Path:
    folder = root / RUNS_DIR / name
    folder.mkdir(parents=True)
    (folder / "report.json").write_text(json.dumps({"cases": [], "run": {"git": {"branch": branch}}}))
    return folder


def test_runs_are_named_latest_previous_by_a_beginning_or_a_file_and_the_base_prefers_main(tmp_path):
    for name, branch in (("20261101-100000-000aaaa", "main"), ("20261102-100000-000bbbb", "feature"), ("20261103-100000-000cccc", "feature")):
        write_kept(tmp_path, name, branch)
    assert find_run(tmp_path, "latest").name == "20261103-100000-000cccc"
    assert find_run(tmp_path, "previous").name == "20261102-100000-000bbbb"
    assert find_run(tmp_path, "20261101").name == "20261101-100000-000aaaa"
    with pytest.raises(RunNotFound, match="names 3 kept runs"):
        find_run(tmp_path, "2026110")
    with pytest.raises(RunNotFound, match="no such run"):
        find_run(tmp_path, "nope")
    other = tmp_path / "ci.json"
    other.write_text("{}")
    with pytest.raises(RunNotFound, match="not an agentdiff JSON report"):
        find_run(tmp_path, str(other))
    base, head = default_pair(tmp_path, None, None)
    assert (base.name, head.name) == ("20261101-100000-000aaaa", "20261103-100000-000cccc")  # the last on main
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:  # HEAD named by its folder, relative: still recognised among the kept runs
        base, head = default_pair(tmp_path, None, ".agentdiff/runs/20261102-100000-000bbbb")
    finally:
        os.chdir(here)
    assert base.name == "20261101-100000-000aaaa" and head.path.parent.name == "20261102-100000-000bbbb"
    prune(tmp_path, 2)
    assert [p.name for p in kept(tmp_path)] == ["20261102-100000-000bbbb", "20261103-100000-000cccc"]
    base, _ = default_pair(tmp_path, None, None)
    assert base.name == "20261102-100000-000bbbb"  # none on main left: the one before
    shard = write_kept(tmp_path, "20261104-100000-000dddd", "main")
    (shard / "report.json").write_text(json.dumps({"cases": [], "run": {"git": {"branch": "main"}, "shard": "1/2"}}))
    assert find_run(tmp_path, "latest").name == "20261103-100000-000cccc"  # a shard is no whole run
    assert find_run(tmp_path, "20261104").name == "20261104-100000-000dddd"  # but can be named


@pytest.mark.adk
def test_a_prompt_edit_that_breaks_a_critical_case_fails_the_gate_naming_the_rule(tmp_path, monkeypatch):
    from test_cli import run

    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "sample_agents" / "home_automation",
                    ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    shutil.copy(ROOT / "sample_agents" / "demo_model.py", tmp_path / "sample_agents" / "demo_model.py")
    (tmp_path / "pyproject.toml").write_text('[tool.agentdiff]\nkeep_runs = 3\nconfirm_live_above = 2\n[tool.agentdiff.gate]\n'
                                             'critical = ["set:lights"]\nmax_pass_rate_drop = 50\n')
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "sample_agents")
    assert code == 1, err  # dim_living_room fails on purpose
    first = find_run(tmp_path, "latest")
    assert first.meta["source"] == "run" and first.meta["git"]["branch"] == "main" and "home_automation" in first.meta["agents"]
    assert {c["id"].rsplit("/", 1)[-1].split("::")[-1] for c in first.report["cases"]} >= {"kitchen_on_then_check", "dim_living_room"}
    prompt = tmp_path / "sample_agents" / "home_automation" / "prompt.md"
    prompt.write_text(prompt.read_text().replace("never invent a device", "never make up a device"))
    run("run", "sample_agents")
    code, out, err = run("compare")
    assert code == 1, err
    assert "regressed (1):\n  sample_agents/home_automation/conformance/lights/kitchen_on_then_check: passed → failed" in out
    assert '"invent" → "make up"' in out
    assert "changed: home_automation: prompt of home_automation changed" in out  # from the hashes each run kept
    code, out, err = run("gate", "--junit", str(tmp_path / "gate.xml"))
    assert code == 1, err
    assert "✗ critical set:lights: 1 critical case(s) regressed: sample_agents/home_automation/conformance/lights/kitchen_on_then_check" in out
    assert "✓ max_pass_rate_drop = 50" in out
    assert 'failures="1"' in (tmp_path / "gate.xml").read_text()
    code, out, _ = run("gate", "--baseline", "latest", "latest")
    assert code == 0 and out.startswith("gate passed")
    for _ in range(3):
        code, out, err = run("run", "--mode", "live", "sample_agents/home_automation/home_automation.evalset.json")
    # more live runs than confirm_live_above: what they took the last time is said first (no terminal: no question)
    assert "4 case(s) to run live: ≈ 10 model calls, " in err and "(from the last live run of 4)" in err
    assert len(kept(tmp_path)) == 3  # keep_runs


def test_changed_since_chooses_the_cases_a_change_can_affect_and_says_why(tmp_path):
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.reports.changed_since import GitRefError, select_changed
    from workbench_support import echo_project

    echo_project(tmp_path, {"echo": ["hello", "bye"], "other": ["hi"]})
    data = tmp_path / "shared" / "données.yaml"  # git quotes such names unless told not to
    data.parent.mkdir()
    data.write_text("a: 1\n")
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=tmp_path, check=True)
    cases = discover([tmp_path / "agents"], tmp_path).cases

    def chosen() -> dict[str, str]:
        return {ref.id: reason for ref, reason in select_changed(cases, tmp_path, "HEAD")}

    assert chosen() == {}
    (tmp_path / "agents" / "other" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message  # edited\n")
    assert chosen() == {"agents/other/other.evalset.json::case_0": "a file of its agent changed: agents/other/agent.py"}
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=tmp_path, check=True)
    (tmp_path / "agents" / "echo" / "agentdiff-checks.yaml").write_text("checks:\n  max_tool_calls: 1\n")  # new, untracked
    assert set(chosen().values()) == {"its checks changed: agents/echo/agentdiff-checks.yaml"} and len(chosen()) == 2
    (tmp_path / "agents" / "echo" / "agentdiff-checks.yaml").unlink()
    folder = write_kept(tmp_path, "20261101-100000-000aaaa")  # the last kept run: case_1's agent read the data file
    (folder / "report.json").write_text(json.dumps({"cases": [], "run": {"files_read": {"agents/echo/echo.evalset.json::case_1": ["shared/données.yaml"]}}}))
    data.write_text("a: 2\n")
    assert chosen() == {"agents/echo/echo.evalset.json::case_1": "its agent read shared/données.yaml in the last kept run, and it changed"}
    with pytest.raises(GitRefError, match="unknown revision"):
        select_changed(cases, tmp_path, "no-such-ref")


def test_the_estimate_of_a_live_re_run_comes_from_the_last_live_runs(tmp_path):
    from agentdiff.core.reports.estimate import from_kept, from_results
    from agentdiff.core.scoring.results import CaseResult, CaseStatus

    def result(mode, calls, tokens):
        return CaseResult(id="x", source="s", eval_set_id=None, eval_id="x", agent=None, mode=mode, status=CaseStatus.PASSED,
                          usage={"agent": {"m": {"input": tokens, "output": 0}}}, model_calls=calls)

    prices = {"m": {"input": 1_000_000.0, "output": 0.0}}  # a dollar a token: easy sums
    estimate = from_results([result("live", 2, 3), result("live", 4, 5), result("replay", 9, 9), None], prices)
    assert (estimate.cases, estimate.known, estimate.model_calls, estimate.tokens, estimate.cost) == (4, 2, 6, 8, 8.0)
    assert estimate.line() == "4 case(s) to run live: ≈ 6 model calls, 8 tokens, est. $8.00 (from the last live run of 2; 2 never ran live)"
    assert from_results([None]).line() == "1 case(s) to run live; none ran live before, so their cost is unknown"
    older, newer = write_kept(tmp_path, "20261101-100000-000aaaa"), write_kept(tmp_path, "20261102-100000-000bbbb")
    live = {"mode": "live", "model_calls": 3, "usage": {"agent": {"m": {"input": 10, "output": 5}}}}
    (older / "report.json").write_text(json.dumps({"cases": [{"id": "a", "status": "passed", **live}, {"id": "b", "status": "passed", **live}]}))
    (newer / "report.json").write_text(json.dumps({"cases": [{"id": "a", "status": "passed", **live, "model_calls": 1}, {"id": "b", "status": "passed", "mode": "replay"}]}))
    kept_estimate = from_kept(tmp_path, ["a", "b", "c"])
    assert (kept_estimate.known, kept_estimate.model_calls, kept_estimate.tokens) == (2, 4, 30)  # a's newest, b's last live


async def test_re_running_many_cases_live_in_the_tui_asks_first_with_their_cost(tmp_path):
    from agentdiff.tui.app import create_app
    from fake_pool import CannedPool
    from tui_support import FakeEditor, copy_samples, settle, until

    copy_samples(tmp_path)
    pool = CannedPool(tmp_path)
    app = create_app(tmp_path, [tmp_path / "sample_agents"], pool=pool, watch=False, editor=FakeEditor(), project="samples",
                     confirm_live_above=3)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        pool.take_jobs()
        await pilot.press("R")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        said = app.screen.preview
        assert said.startswith("9 case(s) to run live: ≈ ") and " tokens (from the last live run of 9)" in said
        await pilot.press("n")
        await pilot.pause(0.2)
        assert pool.take_jobs() == []  # declined: nothing ran
        await pilot.press("R")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        await pilot.press("y")
        await settle(app, pilot)
        assert len(pool.take_jobs()) == 12


@pytest.mark.adk
def test_a_rerecorded_baseline_is_listed_until_signed_and_the_gate_can_require_the_sign_off(tmp_path, monkeypatch):
    from test_cli import run

    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "sample_agents" / "home_automation",
                    ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    shutil.copy(ROOT / "sample_agents" / "demo_model.py", tmp_path / "sample_agents" / "demo_model.py")
    (tmp_path / "pyproject.toml").write_text('[tool.agentdiff.gate]\nrequire_signoff = true\nsignoff_since = "main"\n'
                                             'max_pass_rate_drop = 100\n')
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=tmp_path, check=True)
    subprocess.run(["git", "checkout", "-q", "-b", "work"], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("baselines", "--since", "main")
    assert code == 0 and "no baseline was re-recorded since main" in out
    prompt = tmp_path / "sample_agents" / "home_automation" / "prompt.md"
    prompt.write_text(prompt.read_text().replace("never invent a device", "never make up a device"))
    run("record", "kitchen_on_then_check")  # re-recorded until green, spec.yaml untouched
    run("accept", "dim_living_room", "--yes")  # an eval case's expectations accepted, its question unchanged
    code, out, err = run("baselines", "--since", "main")
    assert code == 1, err
    kitchen, dim = out.split("sample_agents/home_automation/conformance/lights/kitchen_on_then_check  ")[1], out
    assert kitchen.startswith("(✗ not signed off)") and "agent: prompt of home_automation changed" in kitchen
    assert 'request: turn 1 · request · home_automation call 1 config.system_instruction line 3: "invent" → "make up"' in kitchen
    assert "home_automation.evalset.json::dim_living_room  (✗ not signed off)" in dim
    assert "tool_calls: turn 1 · tool_calls · set_device_state args.brightness missing" in dim
    assert "2 baseline change(s), 2 not signed off" in out
    run("run", "sample_agents")
    run("run", "sample_agents")
    code, out, _ = run("gate")
    assert code == 1 and "✗ require_signoff: 2 baseline change(s) not signed off" in out
    code, out, _ = run("sign", "kitchen_on_then_check", "dim_living_room", "--note", "wording only")
    assert code == 0 and "signed off 2 case(s)" in out
    code, out, _ = run("baselines", "--since", "main")
    assert code == 0 and "signed off by" in out and ": wording only" in out
    code, out, _ = run("gate")
    assert code == 0 and "✓ require_signoff" in out
    run("undo")  # the sign-off is one undoable step
    assert run("baselines", "--since", "main")[0] == 1


async def test_b_compares_the_workbench_with_a_kept_run_marking_regressions_and_showing_its_actual(tmp_path):
    from agentdiff.tui.app import create_app
    from fake_pool import CannedPool
    from tui_support import FakeEditor, copy_samples, edit_the_home_prompt, settle, until

    samples = copy_samples(tmp_path, agents=("home_automation",))
    kitchen = "sample_agents/home_automation/conformance/lights/kitchen_on_then_check"

    def app_with(scenarios):
        return create_app(tmp_path, [samples], pool=CannedPool(tmp_path, scenarios), watch=False, editor=FakeEditor(),
                          project="samples", keep_runs=5)

    first = app_with("samples")
    async with first.run_test(size=(160, 48)) as pilot:
        await settle(first, pilot)
    (kept_run,) = kept(tmp_path)  # the session was kept when it closed
    assert json.loads((kept_run / "report.json").read_text())["run"]["source"] == "tui"
    edit_the_home_prompt(samples)
    second = app_with(["prompt_edit", "samples"])
    async with second.run_test(size=(160, 48)) as pilot:
        await settle(second, pilot)
        await pilot.press("B")
        await until(pilot, lambda: type(second.screen).__name__ == "ComparePicker")
        await pilot.press("down", "enter")
        await until(pilot, lambda: second.main.versus is not None)
        tree = second.main.tree
        assert "↓ regressed" in str(tree._case_nodes[kitchen].label)
        assert "↓" not in str(tree._case_nodes["sample_agents/home_automation/home_automation.evalset.json::two_devices"].label)
        tree.select_case(kitchen)
        await pilot.pause(0.3)
        detail = second.main.detail
        assert f"vs {kept_run.name}: passed → failed" in str(detail.extra)
        assert str(detail.query_one("#expected-title").render()) == f"Run {kept_run.name}"
        compared = detail.shown_diff(second.workbench.cases[kitchen])
        assert compared is not second.workbench.cases[kitchen].run.diff
        assert compared.first_divergence.path == "config.system_instruction"  # then's actual against now's
        await pilot.press("B")
        await until(pilot, lambda: type(second.screen).__name__ == "ComparePicker")
        await pilot.press("enter")  # the first option: the baselines again
        await until(pilot, lambda: second.main.versus is None)
        assert "↓" not in str(tree._case_nodes[kitchen].label)
