"""What the workbench keeps besides verdicts: triage labels and notes in `agentdiff-triage.yaml`
(a plain file a team commits) and each case's recent verdicts in `.agentdiff/history.sqlite`.
Both are files in, files out; History writes in a background thread, so every test that reads its
file first calls `save(wait=True)`."""

from __future__ import annotations

import json

import pytest
import yaml
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus, MetricResult
from agentdiff.core.workbench import history as history_module
from agentdiff.core.workbench.history import KEEP, History, headline_score
from agentdiff.core.workbench.triage import DEFAULT_LABELS, TRIAGE_FILE, Triage, TriageUnreadable
from workbench_support import history_rows

CASE = "agents/home/home.evalset.json::dim_living_room"
OTHER = "agents/home/home.evalset.json::kitchen_on"


# --- triage -------------------------------------------------------------------------------------


def test_no_triage_file_means_the_default_labels_and_no_cases(tmp_path):
    triage = Triage.load(tmp_path)
    assert (triage.path, triage.labels, triage.cases, triage.error) == (tmp_path / TRIAGE_FILE, list(DEFAULT_LABELS), {}, None)
    assert triage.label_of(CASE) is None and triage.note_of(CASE) is None
    assert not (tmp_path / TRIAGE_FILE).exists()  # loading writes nothing


def test_set_writes_the_file_and_loading_it_gives_the_same_labels_and_cases(tmp_path):
    triage = Triage.load(tmp_path)
    triage.set(CASE, label="bad arguments", note="the playbook has no brightness rule")
    triage.set(OTHER, note="looks fine: the model rephrased")
    again = Triage.load(tmp_path)
    assert (again.labels, again.cases, again.error) == (triage.labels, triage.cases, None)
    assert again.label_of(CASE) == "bad arguments" and again.note_of(CASE) == "the playbook has no brightness rule"
    assert again.label_of(OTHER) is None and again.note_of(OTHER) == "looks fine: the model rephrased"


def test_the_file_lists_the_labels_then_the_cases_sorted_by_id(tmp_path):
    triage = Triage.load(tmp_path)
    triage.set(OTHER, label="wrong tool")
    triage.set(CASE, note="a: b, with 'quotes'")
    data = yaml.safe_load((tmp_path / TRIAGE_FILE).read_text(encoding="utf-8"))
    assert list(data) == ["labels", "cases"]
    assert data["labels"] == list(DEFAULT_LABELS)
    assert list(data["cases"]) == [CASE, OTHER]
    assert data["cases"] == {CASE: {"note": "a: b, with 'quotes'"}, OTHER: {"label": "wrong tool"}}


def test_a_new_label_joins_the_team_dictionary_once(tmp_path):
    triage = Triage.load(tmp_path)
    triage.set(CASE, label="stale fixture")
    triage.set(OTHER, label="stale fixture")
    assert triage.labels == [*DEFAULT_LABELS, "stale fixture"]
    assert Triage.load(tmp_path).labels == [*DEFAULT_LABELS, "stale fixture"]


def test_none_leaves_a_field_as_it_is_and_empty_removes_it(tmp_path):
    triage = Triage.load(tmp_path)
    triage.set(CASE, label="wrong tool", note="first look")
    triage.set(CASE, note="second look")
    assert triage.cases[CASE] == {"label": "wrong tool", "note": "second look"}
    triage.set(CASE, label="")
    assert triage.cases[CASE] == {"note": "second look"}


def test_removing_a_cases_last_field_removes_the_case_from_the_file(tmp_path):
    triage = Triage.load(tmp_path)
    triage.set(CASE, label="wrong tool")
    triage.set(CASE, label="")
    assert triage.cases == {}
    assert yaml.safe_load((tmp_path / TRIAGE_FILE).read_text(encoding="utf-8"))["cases"] == {}


def test_loading_keeps_only_label_and_note_and_reads_values_as_text(tmp_path):
    (tmp_path / TRIAGE_FILE).write_text(
        "labels: [wrong tool, 42]\n"
        "cases:\n"
        f"  '{CASE}': {{label: wrong tool, note: 7, owner: alice}}\n"
        f"  '{OTHER}': just a string\n",
        encoding="utf-8",
    )
    triage = Triage.load(tmp_path)
    assert triage.labels == ["wrong tool", "42"]
    assert triage.cases == {CASE: {"label": "wrong tool", "note": "7"}}
    assert triage.error is None


def test_an_empty_labels_list_falls_back_to_the_defaults(tmp_path):
    (tmp_path / TRIAGE_FILE).write_text("labels: []\ncases: {}\n", encoding="utf-8")
    assert Triage.load(tmp_path).labels == list(DEFAULT_LABELS)


def test_an_empty_note_written_by_hand_is_no_note(tmp_path):
    (tmp_path / TRIAGE_FILE).write_text(f"cases:\n  '{CASE}':\n    label: wrong tool\n    note:\n", encoding="utf-8")
    triage = Triage.load(tmp_path)
    assert triage.label_of(CASE) == "wrong tool"
    assert triage.note_of(CASE) is None


def test_a_broken_triage_file_is_an_error_with_the_defaults_not_a_crash(tmp_path):
    (tmp_path / TRIAGE_FILE).write_text("labels: [wrong tool\ncases: {}\n", encoding="utf-8")
    triage = Triage.load(tmp_path)
    assert triage.error is not None and triage.error.startswith(f"{TRIAGE_FILE}:2:")
    assert (triage.labels, triage.cases) == (list(DEFAULT_LABELS), {})


@pytest.mark.parametrize("cases, kind", [("[a, b]", "a list"), ("just text", "a string"), ("42", "a number")])
def test_cases_that_are_not_a_mapping_are_a_located_error_not_a_crash(tmp_path, cases, kind):
    # read as no cases, the labels bound in it would be lost to the gate: the file is an error instead
    (tmp_path / TRIAGE_FILE).write_text(f"labels: [wrong tool]\ncases: {cases}\n", encoding="utf-8")
    triage = Triage.load(tmp_path)
    assert triage.error == f"{TRIAGE_FILE}:2:1: `cases` must be a mapping, not {kind}"
    assert triage.cases == {}


def test_labelling_while_the_triage_file_is_broken_leaves_the_file_as_it_was(tmp_path):
    # e.g. a merge conflict in the committed file: writing over it would lose the team's labels
    broken = f"cases:\n<<<<<<< HEAD\n  '{CASE}': {{label: wrong tool}}\n=======\n  '{CASE}': {{label: bad arguments}}\n>>>>>>> main\n"
    (tmp_path / TRIAGE_FILE).write_text(broken, encoding="utf-8")
    triage = Triage.load(tmp_path)
    assert triage.error == f"{TRIAGE_FILE}:2: merge-conflict markers (<<<<<<<, >>>>>>>): resolve them first"
    with pytest.raises(TriageUnreadable, match="merge-conflict markers"):
        triage.set(OTHER, label="wrong tool")
    assert (tmp_path / TRIAGE_FILE).read_text(encoding="utf-8") == broken


def test_two_processes_labelling_keep_each_others_labels(tmp_path):
    """Each writer reads the file as it is when it writes: a label another process (or a teammate's
    hand edit) added meanwhile is kept."""
    first, second = Triage.load(tmp_path), Triage.load(tmp_path)  # two TUIs open on one project
    first.set(CASE, label="wrong tool")
    second.set(OTHER, label="bad arguments")  # its copy in memory did not know CASE's label
    (tmp_path / TRIAGE_FILE).write_text((tmp_path / TRIAGE_FILE).read_text() + f"  '{CASE}x':\n    note: by hand\n")
    first.set(CASE, note="checked")
    on_disk = Triage.load(tmp_path)
    assert on_disk.cases == {CASE: {"label": "wrong tool", "note": "checked"}, OTHER: {"label": "bad arguments"}, CASE + "x": {"note": "by hand"}}


def test_a_label_is_journaled_and_undone_like_a_baseline(tmp_path):
    from agentdiff.core.baselines.journal import undo_last

    Triage.load(tmp_path).set(CASE, label="wrong tool")
    assert undo_last(tmp_path).reason == f"triage {CASE}: label 'wrong tool'"
    assert not (tmp_path / TRIAGE_FILE).exists()


def test_a_project_it_cannot_write_into_says_so_in_one_line(tmp_path):
    from agentdiff.core.baselines.journal import BaselineWriteError

    (tmp_path / ".agentdiff").write_text("")  # a file where its folder goes: no lock, no journal can be made
    with pytest.raises(BaselineWriteError, match="nothing was written"):
        Triage.load(tmp_path).set(CASE, label="wrong tool")
    assert not (tmp_path / TRIAGE_FILE).exists()


# --- history ------------------------------------------------------------------------------------


def result(status: CaseStatus = CaseStatus.PASSED, *metrics: MetricResult, mode: str = "live") -> CaseResult:
    return CaseResult(id=CASE, source="agents/home/home.evalset.json", eval_set_id="home", eval_id="dim_living_room",
                      agent="home", mode=mode, status=status, metrics=tuple(metrics))


def metric(name: str, score: float | None, status: MetricStatus, threshold: float | None = 0.8) -> MetricResult:
    return MetricResult(name=name, score=score, threshold=threshold, status=status)


def test_the_headline_score_is_the_failing_metric_s_else_the_lowest_gating_one():
    """As the tree shows it: a failing case never plots at full height because a passing metric came first."""
    assert headline_score(result(CaseStatus.FAILED,
                                 metric("tool_call_count_v1", 3.0, MetricStatus.INFORMATIONAL, None),
                                 metric("safety_v1", None, MetricStatus.NOT_EVALUATED),
                                 metric("tool_trajectory_avg_score", 1.0, MetricStatus.PASSED),
                                 metric("response_match_score", 0.43, MetricStatus.FAILED),
                                 metric("check: max_tool_calls ≤ 3", 0.0, MetricStatus.FAILED, 1.0))) == 0.43
    assert headline_score(result(CaseStatus.PASSED,
                                 metric("tool_trajectory_avg_score", 1.0, MetricStatus.PASSED),
                                 metric("response_match_score", 0.91, MetricStatus.PASSED))) == 0.91
    assert headline_score(result(CaseStatus.ERROR)) is None
    assert headline_score(result(CaseStatus.NOT_EVALUATED, metric("safety_v1", None, MetricStatus.NOT_EVALUATED))) is None


def test_each_verdict_is_an_entry_with_its_time_status_score_and_mode(tmp_path):
    history = History(tmp_path / "history.sqlite")
    history.add(CASE, result(CaseStatus.PASSED, metric("response_match_score", 0.9, MetricStatus.PASSED)), 1000.12345)
    history.add(CASE, result(CaseStatus.ERROR, mode="replay"), 1000.5)
    assert history.entries(CASE) == [
        {"time": 1000.123, "status": "passed", "score": 0.9, "mode": "live"},
        {"time": 1000.5, "status": "error", "score": None, "mode": "replay"},
    ]
    assert history.entries(OTHER) == []


def test_entries_is_a_copy_the_caller_cannot_change_the_history_through(tmp_path):
    history = History(tmp_path / "history.sqlite")
    history.add(CASE, result(), 1.0)
    history.entries(CASE).clear()
    assert len(history.entries(CASE)) == 1


def test_only_the_last_KEEP_verdicts_of_a_case_are_kept(tmp_path):
    history = History(tmp_path / "history.sqlite")
    for second in range(KEEP + 5):
        history.add(CASE, result(), float(second))
    history.add(OTHER, result(CaseStatus.FAILED), 100.0)
    assert KEEP == 20
    assert [entry["time"] for entry in history.entries(CASE)] == [float(s) for s in range(5, KEEP + 5)]
    assert len(history.entries(OTHER)) == 1


def test_save_then_a_new_history_on_the_file_gives_the_same_entries(tmp_path):
    path = tmp_path / ".agentdiff" / "history.sqlite"  # its folder is made when first written
    history = History(path)
    history.add(CASE, result(CaseStatus.PASSED, metric("response_match_score", 1.0, MetricStatus.PASSED)), 10.0)
    history.add(OTHER, result(CaseStatus.FAILED, metric("response_match_score", 0.5, MetricStatus.FAILED)), 11.0)
    history.save(wait=True)
    assert history_rows(path) == {
        CASE: [{"time": 10.0, "status": "passed", "score": 1.0, "mode": "live"}],
        OTHER: [{"time": 11.0, "status": "failed", "score": 0.5, "mode": "live"}],
    }
    again = History(path)
    assert (again.entries(CASE), again.entries(OTHER)) == (history.entries(CASE), history.entries(OTHER))


def test_two_sessions_on_one_history_keep_each_other_s_entries(tmp_path):
    """Two terminals (or two tabs of `serve`) on one project: each reads what the other wrote, each
    entry once, each case's newest KEEP; blobs the other's entries need are known too."""
    path = tmp_path / "history.sqlite"
    first, second = History(path), History(path)
    first.add(CASE, result(), 10.0)
    first.save(wait=True)
    second.add(CASE, result(CaseStatus.FAILED), 11.0)
    second.add(OTHER, result(), 12.0, read={"prompt.md": "ab" * 32})
    second.save(wait=True)
    first.add(CASE, result(), 13.0)
    first.save(wait=True)
    assert [(e["time"], e["status"]) for e in history_rows(path)[CASE]] == [(10.0, "passed"), (11.0, "failed"), (13.0, "passed")]
    assert [e["time"] for e in history_rows(path)[OTHER]] == [12.0]
    assert first.digests() == {"ab" * 32}  # the other session's W still has its file
    assert [e["time"] for e in first.entries(OTHER)] == [12.0]  # and this session's plots show its entries
    assert [e["time"] for e in first.entries(CASE)] == [10.0, 11.0, 13.0]
    for second_ in range(100, 100 + KEEP):
        second.add(CASE, result(), float(second_))
    second.save(wait=True)
    first.add(OTHER, result(), 14.0)
    first.save(wait=True)
    assert [e["time"] for e in history_rows(path)[CASE]] == [float(s) for s in range(100, 100 + KEEP)]  # the newest KEEP
    assert [e["time"] for e in history_rows(path)[OTHER]] == [12.0, 14.0]
    assert first.entries(CASE) == second.entries(CASE)


def test_a_session_s_entries_not_yet_written_are_read_with_the_written_ones(tmp_path):
    history = History(tmp_path / "history.sqlite")
    history.add(CASE, result(), 10.0)  # written at once (the first)
    history.save(wait=True)
    history.add(CASE, result(CaseStatus.FAILED), 10.5, seconds=2.5)  # within SAVE_EVERY: waits in memory
    assert [(e["time"], e["status"]) for e in history_rows(tmp_path / "history.sqlite")[CASE]] == [(10.0, "passed")]
    assert [(e["time"], e["status"]) for e in history.entries(CASE)] == [(10.0, "passed"), (10.5, "failed")]
    assert history.last_seconds([CASE, OTHER]) == {CASE: 2.5}
    assert history.pass_rates() == [(0.0, 0, 1)]


def test_the_last_seconds_of_many_cases_come_from_one_pass(tmp_path):
    history = History(tmp_path / "history.sqlite")
    for i in range(300):
        history.add(f"c{i}", result(), 10.0 + i, seconds=float(i))
        history.add(f"c{i}", result(), 1000.0 + i, seconds=i / 2)
    history.save(wait=True)
    again = History(tmp_path / "history.sqlite")
    ids = [f"c{i}" for i in range(250)] + ["gone"]
    assert again.last_seconds(ids) == {f"c{i}": i / 2 for i in range(250)}
    assert again.last_seconds(ids[:3]) == {"c0": 0.0, "c1": 0.5, "c2": 1.0}
    again.read_last_seconds()  # read ahead (the TUI's), then kept up by what this session adds
    again.add("c1", result(), 5000.0, seconds=9.0)
    again.save(wait=True)
    assert again._last is not None and again.last_seconds(ids) == {**{f"c{i}": i / 2 for i in range(250)}, "c1": 9.0}


def test_a_burst_of_verdicts_within_SAVE_EVERY_seconds_is_written_once(tmp_path, monkeypatch):
    from agentdiff.core.workbench import history_store

    path = tmp_path / "history.sqlite"
    written: list[list[tuple]] = []
    real = history_store.Store.write

    def recording(store, rows):
        if store.path == path:  # not another test's history, still writing in its own thread
            written.append(rows)
        real(store, rows)

    monkeypatch.setattr(history_store.Store, "write", recording)
    history = History(path)
    assert history_module.SAVE_EVERY == 2.0
    for when in (100.0, 100.5, 101.0, 101.9):  # the first is written at once, the rest wait
        history.add(CASE, result(), when)
    history.add(CASE, result(), 102.0)  # two seconds after the last write: the other four are written
    history.save(wait=True)  # nothing new to write: only waits
    assert [len(rows) for rows in written] == [1, 4]
    assert len(history_rows(path)[CASE]) == 5


def test_an_earlier_version_s_history_json_is_moved_into_the_database(tmp_path):
    folder = tmp_path / ".agentdiff"
    folder.mkdir()
    legacy = {CASE: [{"time": float(t), "status": "passed", "score": 1.0, "mode": "live", "batch": 5.0} for t in range(KEEP + 3)],
              OTHER: [{"time": 1.0, "status": "failed", "score": None, "mode": "replay", "read": {"p.md": "cd" * 32}}, "oops"],
              "agents/x.evalset.json::gone": "not a list"}
    (folder / "history.json").write_text(json.dumps(legacy), encoding="utf-8")
    history = History(folder / "history.sqlite")
    assert history.loaded and not (folder / "history.json").exists()
    assert history.entries(CASE) == legacy[CASE][-KEEP:]  # entries of another shape dropped, each case's newest KEEP
    assert history.entries(OTHER) == legacy[OTHER][:1]
    assert history.digests() == {"cd" * 32}
    assert history_rows(folder / "history.sqlite")[OTHER] == legacy[OTHER][:1]
    assert History(folder / "history.sqlite").entries(CASE) == legacy[CASE][-KEEP:]  # once moved, read from the database


def test_save_without_a_new_verdict_writes_nothing(tmp_path):
    path = tmp_path / "history.sqlite"
    History(path).save(wait=True)
    assert not path.exists()


@pytest.mark.parametrize("content", [b"{not json", b"SQLite format 3\x00" + b"\xff" * 200, b"\x00\xff", "a FIFO", "a folder"])
def test_a_history_database_that_cannot_be_read_is_set_aside_and_replaced_on_the_next_save(tmp_path, content):
    import os

    path = tmp_path / ".agentdiff" / "history.sqlite"
    path.parent.mkdir()
    if content == "a FIFO":
        os.mkfifo(path)  # never opened: it would wait for a writer
    elif content == "a folder":
        path.mkdir()
    else:
        path.write_bytes(content)
    history = History(path)
    assert not history.loaded and history.entries(CASE) == []
    (aside,) = (tmp_path / ".agentdiff" / "set-aside").iterdir()
    assert aside.read_bytes() == content if isinstance(content, bytes) else aside.is_fifo() or aside.is_dir()
    history.add(CASE, result(), 5.0)
    history.save(wait=True)
    assert history_rows(path) == {CASE: [{"time": 5.0, "status": "passed", "score": None, "mode": "live"}]}


def test_a_history_that_cannot_be_written_is_no_error(tmp_path):
    (tmp_path / "a_file").write_text("not a folder")
    history = History(tmp_path / "a_file" / "history.sqlite")
    history.add(CASE, result(), 1.0)
    history.save(wait=True)  # the write failed in its thread, quietly: history is a convenience
    assert history.entries(CASE) == [{"time": 1.0, "status": "passed", "score": None, "mode": "live"}]


def test_history_keeps_each_run_s_seconds_tools_and_tokens_and_the_suite_s_pass_rate_per_batch(tmp_path):
    from agentdiff.core.scoring.results import CaseResult, CaseStatus
    from agentdiff.core.workbench.history import History

    def result(status, tokens=0):
        usage = {"agent": {"gemini": {"input": tokens, "output": 0}}} if tokens else {}
        return CaseResult(id="x", source="s", eval_set_id=None, eval_id="x", agent=None, mode="live", status=status, usage=usage)

    history = History(tmp_path / "history.sqlite")
    history.add("a", result(CaseStatus.PASSED, 120), 1000.0, seconds=1.25, tools=3, batch=990.0)
    history.add("b", result(CaseStatus.FAILED), 1001.0, seconds=2.0, tools=0, batch=990.0)
    history.add("a", result(CaseStatus.PASSED), 2000.0, batch=1990.0)
    history.add("b", result(CaseStatus.PASSED), 2001.0, batch=1990.0)
    first = history.entries("a")[0]
    assert (first["seconds"], first["tools"], first["tokens"], first["batch"]) == (1.25, 3, 120, 990.0)
    assert "tokens" not in history.entries("b")[0]  # nothing spent: nothing to plot
    history.add("b", result(CaseStatus.FAILED), 3000.0, batch=2990.0)  # one case re-run: the others stand
    assert history.pass_rates() == [(990.0, 1, 2), (1990.0, 2, 2), (2990.0, 1, 2)]
    history.save(wait=True)
    assert History(tmp_path / "history.sqlite").pass_rates() == [(990.0, 1, 2), (1990.0, 2, 2), (2990.0, 1, 2)]


def test_the_slowest_and_most_expensive_cases_come_from_their_last_runs():
    from types import SimpleNamespace

    from agentdiff.core.run.case_run import CaseRun
    from agentdiff.core.scoring.results import CaseResult, CaseStatus
    from agentdiff.core.worker.jobs import RunOutput, ToolOut
    from agentdiff.core.workbench.costs import case_costs, most_expensive, slowest
    from agentdiff.core.workbench.events import CaseState

    def state(name, seconds, tokens, tools):
        ref = SimpleNamespace(id=f"set::{name}", name=name)
        usage = {"agent": {"gemini-x": {"input": tokens, "output": 10}}} if tokens else {}
        result = CaseResult(id=ref.id, source="s", eval_set_id=None, eval_id=name, agent=None, mode="live", status=CaseStatus.PASSED, usage=usage)
        calls = [ToolOut(agent="a", turn=0, seq=i, name="t") for i in range(tools)]
        outputs = (RunOutput(seconds=seconds, tools=calls), RunOutput(seconds=seconds + 2, tools=calls))
        return CaseState(ref, run=CaseRun(ref=ref, result=result, outputs=outputs))

    states = [state("quick", 1.0, 0, 0), state("slow", 9.0, 100, 4), state("costly", 3.0, 5_000, 1), CaseState(SimpleNamespace(id="x", name="x"))]
    costs = case_costs(states, {"gemini-x": {"input": 1.0, "output": 2.0}})
    assert [c.name for c in slowest(costs)] == ["slow", "costly", "quick"]
    assert [(c.seconds, c.tool_calls) for c in slowest(costs)][0] == (10.0, 4)  # a mean over the repeats
    assert [c.name for c in most_expensive(costs)] == ["costly", "slow"]  # nothing spent: not listed
    assert most_expensive(costs)[0].cost == round(5_000 / 1e6 + 10 * 2 / 1e6, 6)
    assert [c.cost for c in most_expensive(case_costs(states))] == [None, None]  # no prices: by tokens


def test_what_changed_since_a_pass_keeps_bytes_and_knows_large_files_by_size_and_time(tmp_path):
    from agentdiff.core.workbench import snapshots as snapshots_module
    from agentdiff.core.workbench.snapshots import Snapshots

    crlf, large = tmp_path / "prompt.md", tmp_path / "data.bin"
    crlf.write_bytes(b"one\r\ntwo\r\n")
    large.write_bytes(b"x" * 64)
    snapshots_module.MAX_BYTES, before = 32, snapshots_module.MAX_BYTES
    try:
        store = Snapshots(tmp_path)
        read = store.keep([str(crlf), str(large)])
        assert store.changed_since(read) == []  # nothing changed: nothing said, a large file included
        crlf.write_bytes(b"one\r\nTWO\r\n")
        (change,) = store.changed_since(read)
        assert change.path == "prompt.md" and "-two" in change.diff and "+TWO" in change.diff and "-one" not in change.diff
    finally:
        snapshots_module.MAX_BYTES = before


def test_a_closed_history_leaves_its_database_whole_and_opens_again_when_used(tmp_path):
    path = tmp_path / "history.sqlite"
    history = History(path)
    history.add(CASE, result(), 1.0)
    history.add(CASE, result(CaseStatus.FAILED), 1.5)  # waiting: written by close
    assert history.entries(CASE)  # the reader open
    history.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.sqlite"]  # SQLite's journal folded in
    assert [e["status"] for e in history_rows(path)[CASE]] == ["passed", "failed"]
    history.add(OTHER, result(), 3.0)
    history.close()
    assert [e["time"] for e in History(path).entries(OTHER)] == [3.0]


def test_an_earlier_history_moves_in_on_a_file_system_without_hard_links(tmp_path, monkeypatch):
    import os

    folder = tmp_path / ".agentdiff"
    folder.mkdir()
    (folder / "history.json").write_text(json.dumps({CASE: [{"time": 1.0, "status": "passed", "score": None, "mode": "live"}]}))

    def no_links(source, target):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    history = History(folder / "history.sqlite")
    assert history.entries(CASE) == [{"time": 1.0, "status": "passed", "score": None, "mode": "live"}]
    assert sorted(p.name for p in folder.iterdir()) == ["history.sqlite"]
    history.add(OTHER, result(), 2.0)
    history.close()
    assert set(history_rows(folder / "history.sqlite")) == {CASE, OTHER}
