"""CI that fans out: `run --shard K/N` splits the cases evenly and the same way everywhere (by last
known durations when known), and `merge` puts the shards' JSON reports back into one run."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from agentdiff.core.reports.merge import MergeError, merge_reports, shard
from conftest import ROOT


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_cover_every_case_exactly_once_with_or_without_durations(count):
    ids = [f"set_{i % 4}::case_{i}" for i in range(23)]
    durations = {case_id: float(len(case_id) % 5 + 1) for case_id in ids[::2]}  # some known, some not
    for known in (None, durations):
        shards = [shard(ids, k, count, key=str, durations=known) for k in range(1, count + 1)]
        assert sorted(case for part in shards for case in part) == sorted(ids)
        assert shards == [shard(list(reversed(ids)), k, count, key=str, durations=known) for k in range(1, count + 1)]  # any order in
        if known is None:
            assert max(map(len, shards)) - min(map(len, shards)) <= 1  # even by count


def test_durations_balance_the_shards_by_time():
    ids = ["a", "b", "c", "d", "e", "f"]
    durations = {"a": 10.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0, "f": 6.0}
    first, second = shard(ids, 1, 2, key=str, durations=durations), shard(ids, 2, 2, key=str, durations=durations)
    assert (first, second) == (["a"], ["b", "c", "d", "e", "f"])  # 10 s against 10 s, not three cases each


def test_merge_refuses_reports_that_overlap(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"cases": [{"id": "s::a", "status": "passed"}]}))
    with pytest.raises(MergeError, match="s::a is in both"):
        merge_reports([one, one])
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(MergeError, match="not a readable JSON report"):
        merge_reports([broken])
    for shape, said in (('{"cases":[1]}', "cases[0] must be a mapping"), ('{"cases":[{"id":"x","status":"bogus"}]}', "cases[0].status"),
                        ('{"cases":[{"id":"x"}]}', "cases[0].status is missing"), ('{"cases":{"a":1}}', "no `cases` list"),
                        ('{"cases":[{"id":["x"],"status":"passed"}]}', "cases[0].id must be a string"),
                        ('{"cases":[{"id":"x","status":"passed","metrics":[{"score":1}]}]}', "cases[0].metrics[0].name is missing")):
        broken.write_text(shape)  # as compare and gate check a report: one line, never a traceback
        with pytest.raises(MergeError, match=re.escape(said)):
            merge_reports([broken])


@pytest.mark.adk
def test_two_shards_merged_are_the_whole_run(tmp_path, monkeypatch):
    from test_cli import run

    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "agents" / "home_automation", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    shutil.copy(ROOT / "sample_agents" / "demo_model.py", tmp_path / "agents" / "demo_model.py")
    monkeypatch.chdir(tmp_path)
    for k in (1, 2):
        code, _, err = run("run", "agents", "--shard", f"{k}/2", "--report", f"json=shard{k}.json")
        assert f"shard {k}/2: " in err and "of 5 cases" in err
    shards = [json.loads((tmp_path / f"shard{k}.json").read_text())["cases"] for k in (1, 2)]
    assert len(shards[0]) + len(shards[1]) == 5 and {c["id"] for c in shards[0]}.isdisjoint({c["id"] for c in shards[1]})
    code, out, err = run("merge", "shard1.json", "shard2.json", "--report", "junit=all.xml", "--report", "json=all.json")
    assert code == 1, err  # dim_living_room fails, as in one run
    assert "5 cases: 4 passed, 1 failed" in out
    merged = json.loads((tmp_path / "all.json").read_text())
    assert merged["summary"]["total"] == 5 and 'tests="5"' in (tmp_path / "all.xml").read_text()
    code, _, err = run("merge", "shard1.json", "--report", "csv=x.csv")
    assert code == 2 and "concatenate the shards' CSVs" in err
    run("run", "agents")  # a full run: its durations balance the next shards, the same for both
    splits = [run("run", "agents", "--shard", f"{k}/2", "--report", f"json=again{k}.json")[2] for k in (1, 2)]
    assert all("balanced by their last known durations" in err for err in splits)
    again = [{c["id"] for c in json.loads((tmp_path / f"again{k}.json").read_text())["cases"]} for k in (1, 2)]
    assert again[0].isdisjoint(again[1]) and len(again[0] | again[1]) == 5
    code, _, err = run("run", "agents", "--shard", "1/2", "--shard-durations", "missing.json")
    assert code == 2 and "every shard must split alike" in err
    with pytest.raises(SystemExit) as refused:  # argparse's usage error
        run("run", "agents", "--shard", "3/2")
    assert refused.value.code == 2
