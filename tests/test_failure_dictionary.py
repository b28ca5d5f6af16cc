"""The failure dictionary as a team asset: entries with meaning, evidence and a blocking level; labels
pinned to a trace element; entries and bindings retired with why, listed as no longer tested; the
gate blocking on failures marked so."""

from __future__ import annotations

import json

import pytest
import yaml
from agentdiff.core.reports.compare import compare
from agentdiff.core.reports.gate import gate
from agentdiff.core.workbench.triage import TRIAGE_FILE, Triage
from fake_pool import CannedPool
from test_cli import run
from test_release_loop import case, report
from tui_support import copy_samples, make_app, settle, until

REFUND_TWICE = "sample_agents/customer_service/customer_service.evalset.json::no_second_refund"


def test_entries_bindings_and_retirement_round_trip_through_the_file(tmp_path):
    (tmp_path / TRIAGE_FILE).write_text("labels: [wrong tool]\ncases:\n  a::x: {label: wrong tool, note: seen}\n")  # as written before
    triage = Triage.load(tmp_path)
    assert triage.labels == ["wrong tool"] and triage.label_of("a::x") == "wrong tool" and triage.blocking_of("a::x") is None
    triage.define("double refund", description="refunds twice", evidence="issue_refund twice", blocking="block")
    triage.set_many(["a::y", "a::z"], label="double refund", element="turn 2 · tool_calls · call 3")
    again = Triage.load(tmp_path)
    assert again.labels == ["wrong tool", "double refund"] and again.blocking_of("a::y") == "block"
    assert again.cases["a::y"] == {"label": "double refund", "element": "turn 2 · tool_calls · call 3"}
    data = yaml.safe_load((tmp_path / TRIAGE_FILE).read_text())
    assert data["failures"] == {"double refund": {"description": "refunds twice", "evidence": "issue_refund twice", "blocking": "block"}}
    again.unbind("a::z", "the case was split", "a::z2")
    assert Triage.load(tmp_path).retired_binding("a::z") == "no longer tested because the case was split (now: a::z2)"
    assert Triage.load(tmp_path).blocking_of("a::z") is None and Triage.load(tmp_path).label_of("a::z") == "double refund"
    again.define("wrong tool", retired={"reason": "split in two", "replaced_by": "wrong lookup"})
    assert Triage.load(tmp_path).retired_binding("a::x") == "no longer tested because split in two (now: wrong lookup)"
    again.set_many(["a::z"], label="double refund")  # labelled anew: bound again
    assert Triage.load(tmp_path).retired_binding("a::z") is None


def test_the_failures_command_lists_defines_and_retires(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run("failures", "define", "double refund", "--description", "refunds twice", "--blocking", "block")[0] == 0
    copy_samples(tmp_path, agents=("customer_service",))
    code, _, err = run("failures", "bind", "double refnud", "no_second_refund")  # a typo: refused, nothing bound
    assert code == 2 and "no entry 'double refnud' in the failure dictionary (did you mean 'double refund'?" in err
    assert REFUND_TWICE not in Triage.load(tmp_path).cases
    code, out, _ = run("failures", "bind", "double refund", "no_second_refund", "--element", "turn 2 · tool_calls · call 3")
    assert code == 0 and "bound 1 case(s) to 'double refund'" in out
    assert Triage.load(tmp_path).cases[REFUND_TWICE] == {"label": "double refund", "element": "turn 2 · tool_calls · call 3"}
    Triage.load(tmp_path).set_many(["s::a", "s::b"], label="double refund", element="turn 1 · tool_calls · call 2")
    assert run("failures", "unbind", "s::b", "--reason", "the tool is gone")[0] == 0
    code, out, _ = run("failures")
    assert code == 0
    assert out.splitlines()[:4] == ["double refund  [block]", "  description: refunds twice",
                                    "  - s::a at turn 1 · tool_calls · call 2",
                                    "  - s::b at turn 1 · tool_calls · call 2: no longer tested because the tool is gone"]
    assert f"  - {REFUND_TWICE} at turn 2 · tool_calls · call 3" in out
    code, _, err = run("failures", "retire", "no such thing", "--reason", "x")
    assert code == 2 and "no entry 'no such thing'" in err
    assert run("failures", "retire", "double refund", "--reason", "merged", "--replaced-by", "refund errors")[0] == 0
    assert "double refund  [block]  retired: merged (now: refund errors)" in run("failures")[1]


def test_a_failing_case_bound_to_a_blocking_failure_fails_the_gate():
    base = report("b", case("s::a", "passed"), case("s::b", "failed"))
    head = report("h", case("s::a", "passed"), case("s::b", "failed"))
    result = gate(compare(base, head), {"max_pass_rate_drop": 10}, blocked=["s::b"])
    assert {r.name: r.broken for r in result.rules if r.broken} == {
        "no failure that blocks the release": "1 failing case(s) show a failure marked block: s::b"}
    assert gate(compare(base, head), {"critical": ["failure:double refund"]}, {"s::b": "double refund"}.get).passed  # not a regression


async def test_a_label_is_pinned_to_the_divergence_shown_and_the_detail_says_what_it_means(tmp_path):
    copy_samples(tmp_path)
    Triage.load(tmp_path).define("double refund", description="refunds one order twice", blocking="block")
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case(REFUND_TWICE)
        await pilot.pause(0.2)
        await pilot.press("l", *"double refund", "enter")
        await until(pilot, lambda: Triage.load(tmp_path).label_of(REFUND_TWICE) == "double refund")
        element = Triage.load(tmp_path).cases[REFUND_TWICE]["element"]
        first = app.workbench.cases[REFUND_TWICE].run.diff.divergences[0]
        assert element.startswith(f"turn {first.turn + 1} · {first.layer}")
        await pilot.pause(0.2)
        assert f"label: double refund at {element} [block] — refunds one order twice" in str(app.main.detail.extra)


async def test_w_shows_the_files_read_at_the_last_pass_that_differ_now_as_diffs(tmp_path):
    from fake_pool import PROMPT_EDIT
    from tui_support import edit_the_home_prompt

    samples = copy_samples(tmp_path)
    kitchen = "sample_agents/home_automation/conformance/lights/kitchen_on_then_check"
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        read = app.workbench.history.last_passed(kitchen)["read"]
        assert "sample_agents/home_automation/prompt.md" in read and (tmp_path / ".agentdiff" / "blobs").is_dir()
        app.main.tree.select_case(kitchen)
        await pilot.pause(0.1)
        await pilot.press("W")
        await pilot.pause(0.1)
        assert any(f"none of the {len(read)} files its agent read changed" in n.message for n in app._notifications)
        edit_the_home_prompt(samples)
        await pilot.press("W")
        await until(pilot, lambda: type(app.screen).__name__ == "TextModal")
        assert app.screen.title_text.startswith(f"1 of the {len(read)} files its agent read changed since it last passed")
        old, new = PROMPT_EDIT
        lines = app.screen.body.splitlines()
        assert any(line.startswith("-") and old in line for line in lines) and any(line.startswith("+") and new in line for line in lines)
        assert "a/sample_agents/home_automation/prompt.md (last pass)" in app.screen.body
        await pilot.press("escape")


async def test_closing_the_app_removes_the_old_blobs_no_history_entry_needs(tmp_path):
    """`.agentdiff/blobs` stays bounded: a blob no kept history entry refers to goes when the app
    closes, once it is a day old (a new one may belong to another session not yet saved)."""
    import os
    import time

    copy_samples(tmp_path)
    blobs = tmp_path / ".agentdiff" / "blobs"
    stale, fresh = blobs / "aa" / ("aa" + "0" * 62), blobs / "bb" / ("bb" + "0" * 62)
    for blob in (stale, fresh):
        blob.parent.mkdir(parents=True)
        blob.write_text("an earlier prompt")
    two_days_ago = time.time() - 2 * 86400
    os.utime(stale, (two_days_ago, two_days_ago))
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        needed = app.workbench.history.digests()
        assert needed  # the passing runs' files read
        for digest in needed:  # as old as the stale one: referenced, so kept
            os.utime(blobs / digest[:2] / digest, (two_days_ago, two_days_ago))
    assert not stale.exists() and not stale.parent.exists() and fresh.exists()
    assert all((blobs / d[:2] / d).exists() for d in needed)


def test_a_blob_used_again_is_spared_and_one_pruned_meanwhile_is_kept_again(tmp_path, monkeypatch):
    """Another session may prune a blob this one still uses: using it refreshes its time (so a prune
    spares it), and a blob gone from under the cache is written again."""
    import os
    import time

    from agentdiff.core.workbench import snapshots as snapshots_module
    from agentdiff.core.workbench.history import History
    from agentdiff.core.workbench.snapshots import Snapshots

    monkeypatch.setattr(snapshots_module, "TOUCH_EVERY", 0.0)  # each use touches (the blob's time is set back by hand here)

    prompt = tmp_path / "prompt.md"
    prompt.write_text("be brief")
    snapshots = Snapshots(tmp_path)
    (digest,) = snapshots.keep([str(prompt)]).values()
    blob = tmp_path / ".agentdiff" / "blobs" / digest[:2] / digest
    two_days_ago = time.time() - 2 * 86400
    os.utime(blob, (two_days_ago, two_days_ago))
    snapshots.keep([str(prompt)])  # used again (from the cache): its time is now
    assert Snapshots(tmp_path).prune(set(), time.time()) == 0 and blob.exists()
    os.utime(blob, (two_days_ago, two_days_ago))
    assert Snapshots(tmp_path).prune(set(), time.time()) == 1 and not blob.exists()  # another session's prune
    snapshots.keep([str(prompt)])
    assert blob.read_text() == "be brief"
    history = tmp_path / ".agentdiff" / "history.json"
    assert History(history).loaded  # none yet: nothing to lose
    history.write_text("{not json")
    assert not History(history).loaded  # unreadable: the app then prunes nothing by it


def test_the_same_file_kept_for_many_passing_cases_is_stated_once_each_and_its_blob_touched_once(tmp_path, monkeypatch):
    """One verdict after another lands on the app's loop: a file's stat is taken for each (its content
    may have just changed), the blob's touch and the look for a committed link are not."""
    from agentdiff.core.workbench import snapshots as snapshots_module
    from agentdiff.core.workbench.snapshots import Snapshots

    prompt = tmp_path / "prompt.md"
    prompt.write_text("be brief")
    calls = {"stat": 0, "utime": 0, "link": 0}
    real_stat, real_utime, real_link = snapshots_module.os.stat, snapshots_module.os.utime, snapshots_module.linked_state
    monkeypatch.setattr(snapshots_module.os, "stat", lambda p, **k: calls.__setitem__("stat", calls["stat"] + (p == str(prompt))) or real_stat(p, **k))
    monkeypatch.setattr(snapshots_module.os, "utime", lambda *a, **k: calls.__setitem__("utime", calls["utime"] + 1) or real_utime(*a, **k))
    monkeypatch.setattr(snapshots_module, "linked_state", lambda *a: calls.__setitem__("link", calls["link"] + 1) or real_link(*a))
    snapshots = Snapshots(tmp_path)
    digests = {tuple(snapshots.keep([str(prompt)]).values()) for _ in range(50)}
    assert len(digests) == 1 and calls == {"stat": 50, "utime": 1, "link": 1}  # looked for once, then written: no touch needed since
    prompt.write_text("be briefer")
    assert snapshots.keep([str(prompt)]) != {"prompt.md": digests.pop()[0]}, "a changed file is a new content at once"


async def test_an_unreadable_history_prunes_nothing(tmp_path):
    import os
    import time

    copy_samples(tmp_path)
    blob = tmp_path / ".agentdiff" / "blobs" / "aa" / ("aa" + "0" * 62)
    blob.parent.mkdir(parents=True)
    blob.write_text("an earlier prompt")
    os.utime(blob, (time.time() - 2 * 86400,) * 2)
    (tmp_path / ".agentdiff" / "history.json").write_text("{cut short")
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
    assert blob.exists()


BROKEN_DICTIONARIES = {
    "merge-conflict markers": ("<<<<<<< HEAD\nlabels: [x]\n=======\nlabels: [y]\n>>>>>>> theirs\n", ":1: merge-conflict markers"),
    "bad YAML": ("failures:\n  double refund: {blocking: block\n", ":3:1: invalid YAML"),
    "an alias bomb": ("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdef", "bcdefg")),
                      ":1:1: invalid YAML: its aliases expand"),
    "bad UTF-8": (b"labels: [caf\xe9]\n", ":1:"),
    "a list": ("- double refund\n", ":1:1: the file must be a mapping"),
    "failures as a list": ("failures:\n  - double refund\n", ":1:1: `failures` must be a mapping, not a list"),
    "an unknown blocking level": ("failures:\n  double refund:\n    blocking: blok\n", ":3:5: blocking must be one of block, review, info, not 'blok'"),
}


@pytest.mark.parametrize("kind", BROKEN_DICTIONARIES)
def test_the_gate_fails_closed_on_a_dictionary_it_cannot_read(tmp_path, monkeypatch, kind):
    monkeypatch.chdir(tmp_path)
    reports = {}
    for name in ("base", "head"):
        reports[name] = tmp_path / f"{name}.json"
        reports[name].write_text(json.dumps({"cases": [case("s::a", "passed"), case("s::b", "failed")]}))
    (tmp_path / TRIAGE_FILE).write_text("failures:\n  double refund: {blocking: block}\ncases:\n  s::b: {label: double refund}\n")
    code, out, err = run("gate", str(reports["head"]), "--baseline", str(reports["base"]))
    assert code == 1 and "no failure that blocks the release" in out  # bound to a blocking failure: fails
    text, where = BROKEN_DICTIONARIES[kind]
    (tmp_path / TRIAGE_FILE).write_bytes(text if isinstance(text, bytes) else text.encode())
    code, out, err = run("gate", str(reports["head"]), "--baseline", str(reports["base"]))
    assert code == 2 and err.startswith(f"error: {TRIAGE_FILE}{where}") and "the gate cannot decide" in err, err
    code, _, err = run("failures")
    assert code == 2 and err.startswith(f"error: {TRIAGE_FILE}{where}")


def test_a_blank_failure_name_is_refused_not_said_done(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (["failures", "define", "  "], ["failures", "bind", "", "s::a"]):
        code, out, err = run(*argv)
        assert code == 2 and "cannot be blank" in err and "bound" not in out, (argv, out, err)
    assert not (tmp_path / TRIAGE_FILE).exists()
