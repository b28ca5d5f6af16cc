"""Case ids read well and are the same in `list`, `run` and `score`: `<file>::<eval_id>`, the file
relative to the project root, and `case_<n>` (1-based) for an eval_id that is a path."""

from __future__ import annotations

import json

from agentdiff.core.project.discovery import discover
from test_cli import run

TURN = {
    "invocation_id": "i1",
    "user_content": {"role": "user", "parts": [{"text": "hi"}]},
    "final_response": {"role": "model", "parts": [{"text": "hello"}]},
}
FOREIGN = "/usr/local/google/home/someone/project/tests/greeting.test.json"


def _project(tmp_path):
    unit = tmp_path / "tests" / "unit"
    unit.mkdir(parents=True)
    (unit / "legacy.test.json").write_text(json.dumps([{"query": "hi", "expected_tool_use": [], "reference": "hello"}]))
    (unit / "named.test.json").write_text(json.dumps([{"name": "greets", "data": [{"query": "hi", "reference": "hello"}]}]))
    cases = [{"eval_id": FOREIGN, "conversation": [TURN]}, {"eval_id": "plain", "conversation": [TURN]}]
    (unit / "abs.evalset.json").write_text(json.dumps({"eval_set_id": "abs_set", "eval_cases": cases}))
    return tmp_path


def _result_case(eval_id: str, eval_set_id: str) -> dict:
    pair = {"actual_invocation": TURN, "expected_invocation": TURN, "eval_metric_results": []}
    metric = {"metric_name": "response_match_score", "threshold": 0.5, "score": 1.0, "eval_status": 1}
    return {"eval_set_id": eval_set_id, "eval_id": eval_id, "final_eval_status": 1,
            "overall_eval_metric_results": [metric], "eval_metric_result_per_invocation": [pair]}


def _results_file(folder, eval_set_id: str, eval_ids: list[str]):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"app_{eval_set_id}_1700000000.0.evalset_result.json"
    path.write_text(json.dumps({
        "eval_set_result_id": f"app_{eval_set_id}_1700000000.0", "eval_set_id": eval_set_id,
        "eval_case_results": [_result_case(e, eval_set_id) for e in eval_ids],
    }))
    return path


def _ids(output: str) -> dict[str, str]:
    """eval_id -> id, from a `list --json` or `run/score --json` document."""
    return {c["eval_id"]: c["id"] for c in json.loads(output)["cases"]}


def test_a_legacy_row_file_is_named_once_and_by_position(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    ref = next(r for r in discover([tmp_path], tmp_path).cases if r.source.endswith("legacy.test.json"))
    assert ref.case.eval_id == "tests/unit/legacy.test.json"  # what the file says (ADK's naming) is kept
    assert ref.id == "tests/unit/legacy.test.json::case_1"
    named = next(r for r in discover([tmp_path], tmp_path).cases if r.source.endswith("named.test.json"))
    assert named.id == "tests/unit/named.test.json::greets"


def test_eval_ids_that_are_absolute_paths_become_positions(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    found = discover([tmp_path / "tests"], tmp_path)
    ids = {r.case.eval_id: r.id for r in found.cases}
    assert ids[FOREIGN] == "tests/unit/abs.evalset.json::case_1"
    assert ids["plain"] == "tests/unit/abs.evalset.json::plain"
    assert [r.id for r in found.resolve(FOREIGN)] == ["tests/unit/abs.evalset.json::case_1"]  # the eval_id still finds it


def test_an_eval_id_named_like_an_index_is_not_taken_twice(tmp_path):
    cases = [{"eval_id": "a/b", "conversation": [TURN]}, {"eval_id": "case_1", "conversation": [TURN]}]
    (tmp_path / "x.evalset.json").write_text(json.dumps({"eval_set_id": "x", "eval_cases": cases}))
    ids = [r.id for r in discover([tmp_path], tmp_path).cases]
    assert ids == ["x.evalset.json::a/b", "x.evalset.json::case_1"]


def test_list_run_and_score_agree_on_every_id(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    code, listed, _ = run("list", "--json")
    assert code == 0
    listed_ids = _ids(listed)
    assert listed_ids == {
        FOREIGN: "tests/unit/abs.evalset.json::case_1",
        "plain": "tests/unit/abs.evalset.json::plain",
        "tests/unit/legacy.test.json": "tests/unit/legacy.test.json::case_1",
        "greets": "tests/unit/named.test.json::greets",
    }
    _, ran, _ = run("run", "--json")  # no agent here: every case ends as an error, with its id
    assert _ids(ran) == listed_ids
    history = tmp_path / ".adk" / "eval_history"
    _results_file(history, "abs_set", [FOREIGN, "plain"])
    # ADK names a legacy row file's case after the path it was given, here someone else's absolute path.
    _results_file(history, "legacy", ["/home/someone/project/tests/unit/legacy.test.json"])
    code, scored, err = run("score", str(history), "--json")
    assert code == 0, err
    cases = json.loads(scored)["cases"]
    assert {c["id"] for c in cases} == {listed_ids[FOREIGN], listed_ids["plain"], listed_ids["tests/unit/legacy.test.json"]}
    assert {c["eval_id"] for c in cases} >= {FOREIGN, "plain"}  # the eval_id field is what the file says


def test_score_keeps_the_set_id_when_the_eval_set_is_not_found(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    history = tmp_path / ".adk" / "eval_history"
    _results_file(history, "abs_set", ["not_in_the_file"])
    _results_file(history, "elsewhere", ["plain"])
    _, scored, _ = run("score", str(history), "--json")
    assert sorted(c["id"] for c in json.loads(scored)["cases"]) == ["abs_set::not_in_the_file", "elsewhere::plain"]


def test_eval_ids_that_would_read_ambiguously_become_positions_and_still_find_their_case(tmp_path):
    odd = ["a::b", "   ", " padded", "line\nbreak", "bell\x07", "fine id"]
    cases = [{"eval_id": eval_id, "conversation": [TURN]} for eval_id in odd]
    (tmp_path / "x.evalset.json").write_text(json.dumps({"eval_set_id": "x", "eval_cases": cases}))
    found = discover([tmp_path], tmp_path)
    assert [r.id for r in found.cases] == [f"x.evalset.json::case_{n}" for n in range(1, 6)] + ["x.evalset.json::fine id"]
    assert [r.id for r in found.resolve("a::b")] == ["x.evalset.json::case_1"]


def test_ids_that_look_alike_are_warned_of_by_list_and_marked_in_the_tui(tmp_path, monkeypatch):
    import json as _json

    from test_cli import run

    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    conversation = [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]
    eval_ids = ["caf\u00e9", "cafe\u0301", "x", "x\u200b", "a/b", "case_5", "plain"]
    (tmp_path / "agents" / "echo" / "s.evalset.json").write_text(_json.dumps(
        {"eval_set_id": "s", "eval_cases": [{"eval_id": e, "conversation": conversation} for e in eval_ids]}))
    monkeypatch.chdir(tmp_path)
    code, out, err = run("list")
    warned = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert code == 0 and len(warned) == 5, err
    assert "the same text in two Unicode forms (composed and decomposed)" in err
    assert "they differ only in invisible or look-alike characters" in err
    assert "warning: agents/echo/s.evalset.json::a/b: its eval_id 'a/b' reads ambiguously" in err
    assert "plain" not in err
    listed = {case["eval_id"]: case.get("look_alike") for case in _json.loads(run("list", "--json")[1])["cases"]}
    assert listed["plain"] is None and listed["x"] and listed["caf\u00e9"]


async def test_the_tree_marks_look_alike_ids(tmp_path):
    import json as _json

    from fake_pool import CannedPool
    from tui_support import copy_samples, make_app

    copy_samples(tmp_path, agents=("home_automation",))
    path = tmp_path / "sample_agents" / "home_automation" / "home_automation.evalset.json"
    data = _json.loads(path.read_text())
    data["eval_cases"].append({**data["eval_cases"][0], "eval_id": data["eval_cases"][0]["eval_id"] + " \u200b"})
    path.write_text(_json.dumps(data))
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()  # the tree as first drawn (the fake pool has no run for the new case: not waited for)
        labels = [str(node.label) for node in app.screen.tree._case_nodes.values()]
        assert sum(" ≈" in label for label in labels) == 2, labels
        assert any("look like another's (marked ≈" in n.message for n in app._notifications)


def test_a_file_of_plain_eval_ids_is_keyed_at_once_as_each_would_be():
    """`case_keys` and `look_alikes` look once at a file whose eval_ids are all plain: over random
    eval_ids of hostile characters, that look agrees with asking of each."""
    import random
    from pathlib import Path

    from agentdiff.core.formats.eval_cases import EvalCases
    from agentdiff.core.formats.eval_set import EvalSet
    from agentdiff.core.formats.eval_set_files import LoadedEvalSet
    from agentdiff.core.formats.source_file import SourceText
    from agentdiff.core.project.case_ids import INDEX_PREFIX, case_keys, eval_id_facts, makes_a_poor_key
    from agentdiff.core.project.look_alikes import _plain

    alphabet = list("ab:/\\ \t\n\x00\x1f\x7f\x85\xa0\u2003\u200bC1") + ["::", "c:", "f.evalset.json"]
    chance = random.Random(7)
    fast = 0
    for _ in range(3000):
        eval_ids = ["".join(chance.choice(alphabet) for _ in range(chance.randint(0, 3))) for _ in range(chance.randint(1, 4))]
        loaded = LoadedEvalSet(SourceText(path=Path("f.evalset.json"), display="f.evalset.json", text="", sha256=""),
                               EvalSet(eval_set_id="s", eval_cases=[]), EvalCases(eval_ids, [1] * len(eval_ids)))
        plain, marked = eval_id_facts(loaded.cases)
        assert plain == all(_plain(e) for e in eval_ids), eval_ids
        fast += plain and not marked
        taken = set(eval_ids)
        each = [f"{INDEX_PREFIX}{n}" if makes_a_poor_key(e, loaded) and f"{INDEX_PREFIX}{n}" not in taken else e
                for n, e in enumerate(eval_ids, start=1)]
        assert case_keys(loaded) == each, eval_ids
    assert fast > 300  # the one look was taken often
