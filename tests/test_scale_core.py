"""A big suite kept small: eval set files read once and kept as spans of their text, cases built again
when asked, values located in one case's text, reports written a case at a time, finished results slim."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from agentdiff.core.diff.source_index import SourceIndex
from agentdiff.core.formats import eval_cases
from agentdiff.core.formats.eval_cases import read_compact
from agentdiff.core.formats.eval_set import EvalSet
from agentdiff.core.formats.eval_set_files import eval_set_from_data, load_eval_set
from agentdiff.core.formats.source_file import SourceText, parse_source
from agentdiff.core.reports.json_report import render_json, report_dict, write_json
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus, MetricResult, RunRecord, slim
from agentdiff.core.traces.model import Origin


def _case(i: int, text: str = "hi") -> dict:
    return {"eval_id": f"c{i}", "conversation": [{"invocation_id": f"i{i}", "user_content": {"role": "user", "parts": [{"text": text}]},
                                                  "final_response": {"role": "model", "parts": [{"text": f"{text} {i}"}]}}]}


def _write(tmp_path: Path, text: str, name: str = "x.evalset.json") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def _whole(path: Path):
    """The set as it loads without spans: the models of the whole file, or its errors."""
    from agentdiff.core.formats.source_file import read_source

    source = read_source(path, path.name)
    return eval_set_from_data(source, parse_source(source, "json"))


SHAPES = {
    "expanded, CRLF, non-ASCII": json.dumps({"eval_set_id": "s", "eval_cases": [_case(1, "héllo ☃"), _case(2)]}, indent=2,
                                             ensure_ascii=False).replace("\n", "\r\n"),
    "one line, escapes": json.dumps({"eval_set_id": "s", "name": "n", "eval_cases": [_case(1, "\u00e9\ud83d\ude00"), _case(2)]}),
    "camelCase case keys, extra keys": json.dumps({"eval_set_id": "s", "team": {"a": [1]}, "eval_cases": [
        {"evalId": "c1", "conversation": [], "note": "kept"}, _case(2)]}),
    "a repeated eval_cases key keeps the last": '{"eval_set_id": "s", "eval_cases": [' + json.dumps(_case(9)) + '], "eval_cases": ['
                                                + json.dumps(_case(1)) + "," + json.dumps(_case(2)) + "]}",
    "no cases": '{"eval_set_id": "s", "eval_cases": []}',
}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_file_kept_as_spans_loads_the_cases_reading_it_whole_gives(tmp_path, shape):
    path = _write(tmp_path, SHAPES[shape])
    loaded, errors = load_eval_set(path, path.name)
    whole, whole_errors = _whole(path)
    assert errors == whole_errors == []
    assert loaded.cases._text is not None, "kept as spans"
    assert list(loaded.cases) == list(whole.cases)
    assert loaded.cases.eval_ids == whole.cases.eval_ids and loaded.cases.turns == whole.cases.turns
    assert loaded.eval_set == whole.eval_set and loaded.eval_set_id == "s"
    assert loaded.raw == json.loads(SHAPES[shape])


BROKEN = {
    "a case that does not validate": json.dumps({"eval_set_id": "s", "eval_cases": [_case(1), {"eval_id": "c2"}]}, indent=2),
    "camelCase top level": json.dumps({"evalSetId": "s", "eval_cases": [_case(1)]}),
    "a trailing comma": '{"eval_set_id": "s", "eval_cases": [' + json.dumps(_case(1)) + ",]}",
    "a duplicate eval_id": json.dumps({"eval_set_id": "s", "eval_cases": [_case(1), _case(1)]}),
    "half a surrogate pair": '{"eval_set_id": "s", "eval_cases": [' + json.dumps(_case(1)).replace("hi", "\\ud800") + "]}",
    "nested too deeply": json.dumps({"eval_set_id": "s", "eval_cases": [{**_case(1), "final_session_state": {"a": json.loads("[" * 199 + "]" * 199)}}]}),
    "not an object": "[1, 2",
}


@pytest.mark.parametrize("shape", BROKEN)
def test_a_file_that_does_not_read_as_spans_gets_the_errors_it_always_got(tmp_path, shape):
    from agentdiff.core.formats.source_file import SourceFileError

    path = _write(tmp_path, BROKEN[shape])
    loaded, errors = load_eval_set(path, path.name)
    assert loaded is None and errors
    try:
        expected = _whole(path)[1]
    except SourceFileError as exc:
        expected = [exc.error]
    assert errors == expected
    assert all(error.file == path.name for error in errors)


def test_cases_are_built_when_asked_and_only_the_last_few_stay_built(tmp_path, monkeypatch):
    monkeypatch.setattr(eval_cases, "KEPT", 3)
    path = _write(tmp_path, json.dumps({"eval_set_id": "s", "eval_cases": [_case(i) for i in range(10)]}))
    cases = load_eval_set(path, path.name)[0].cases
    first = cases[0]
    assert cases[0] is first  # kept while recent
    for i in range(10):
        assert cases[i].eval_id == f"c{i}"
    assert len(eval_cases._KEPT) == 3 and cases[0] is not first and cases[0] == first  # over every file loaded
    assert cases[-1].eval_id == "c9" and [c.eval_id for c in cases[2:4]] == ["c2", "c3"]
    with pytest.raises(IndexError):
        cases[10]


def test_a_value_in_a_case_is_located_in_that_case_alone_where_the_whole_file_would_put_it(tmp_path):
    text = SHAPES["expanded, CRLF, non-ASCII"]
    path = _write(tmp_path, text)
    loaded = load_eval_set(path, path.name)[0]
    spans = SourceIndex([loaded.source], {loaded.source.display: loaded.cases})
    whole = SourceIndex([loaded.source])
    for origin_path in [("eval_cases", 1, "conversation", 0, "final_response", "parts", 0, "text"), ("eval_cases", 0, "eval_id"),
                        ("eval_cases", 1, "conversation", 0, "intermediate_data", "tool_uses", 0), ("eval_cases", 0)]:
        origin = Origin(file=loaded.source.display, path=origin_path)
        assert spans.locate(origin) == whole.locate(origin), origin_path
    one_line = _write(tmp_path, SHAPES["one line, escapes"], "y.evalset.json")
    loaded = load_eval_set(one_line, one_line.name)[0]
    origin = Origin(file=loaded.source.display, path=("eval_cases", 1, "conversation", 0, "user_content", "parts", 0, "text"))
    assert SourceIndex([loaded.source], {loaded.source.display: loaded.cases}).locate(origin) == SourceIndex([loaded.source]).locate(origin)


def test_read_compact_takes_only_one_json_object_with_cases():
    assert read_compact('{"eval_set_id": "s"}') is None  # no cases: the set's own error says so
    assert read_compact('{"eval_set_id": "s", "eval_cases": {}}') is None
    assert read_compact('{"eval_set_id": "s", "eval_cases": []} x') is None
    fields, cases = read_compact(' {"eval_set_id": "s", "eval_cases": [] }\n')
    assert fields == {"eval_set_id": "s"} and len(cases) == 0


def _result(i: int, status: CaseStatus) -> CaseResult:
    metric = MetricResult("response_match_score", 1.0 if status is CaseStatus.PASSED else 0.2, 0.8,
                          MetricStatus.PASSED if status is CaseStatus.PASSED else MetricStatus.FAILED, (1.0,), None,
                          {"threshold": 0.8}, {"note": "é\nx"})
    from agentdiff.core.formats.eval_config import EvalMetric
    from agentdiff.core.scoring.metrics import MetricEvaluation

    evaluation = MetricEvaluation(EvalMetric(metric_name="response_match_score"), metric.score, metric.status)
    run = RunRecord(actual=("an invocation",), expected=("one",), metrics=(evaluation,), status=status)  # type: ignore[arg-type]
    return CaseResult(id=f"f::c{i}", source="f", eval_set_id="s", eval_id=f"c{i}", agent="a", mode="live", status=status,
                      metrics=(metric,), runs=(run,), usage={"agent": {"m": {"input": 3, "output": 4}}}, seconds=0.5)


def test_the_json_report_written_a_case_at_a_time_is_the_report_byte_for_byte():
    cases = [_result(i, CaseStatus.PASSED if i % 3 else CaseStatus.FAILED) for i in range(7)]
    prices = {"m": {"input": 1.0, "output": 2.0}}
    for group in (cases, []):
        out = io.StringIO()
        write_json(out, group, {"python": "3.11"}, prices, [], "1/2")
        expected = json.dumps(report_dict(group, {"python": "3.11"}, prices, [], "1/2"), indent=2, ensure_ascii=False) + "\n"
        assert out.getvalue() == expected == render_json(group, {"python": "3.11"}, prices, [], "1/2")
    out = io.StringIO()
    write_json(out, cases, indent=1, more={"run": {"source": "run"}})
    assert json.loads(out.getvalue()) == {**report_dict(cases), "run": {"source": "run"}}


def test_a_slim_result_keeps_what_reports_show():
    passed, failed = slim(_result(1, CaseStatus.PASSED)), slim(_result(2, CaseStatus.FAILED))
    assert passed.runs[0].actual == () and passed.runs[0].expected is None and passed.runs[0].metrics == ()
    assert failed.runs[0].actual == () and failed.runs[0].metrics  # a failing metric's runs: its judge's reasons
    assert passed.metrics == _result(1, CaseStatus.PASSED).metrics and len(passed.runs) == 1
    assert report_dict([passed]) == report_dict([_result(1, CaseStatus.PASSED)])


def test_a_loaded_set_of_models_still_answers_as_one_of_spans():
    from agentdiff.core.formats.eval_set_files import LoadedEvalSet

    eval_set = EvalSet.model_validate({"eval_set_id": "s", "eval_cases": [_case(1), _case(2)]})
    loaded = LoadedEvalSet.of(SourceText(Path("x.json"), "x.json", "{}", ""), eval_set)
    assert loaded.cases.eval_ids == ("c1", "c2") and loaded.cases[1] is eval_set.eval_cases[1] and loaded.eval_set == eval_set
    assert loaded.cases.text_of(0) is None and loaded.index_of("c2") == 1


async def test_a_big_sessions_older_runs_are_kept_on_disk_and_read_back_whole(tmp_path, monkeypatch):
    from agentdiff.core.workbench import spill as spills
    from agentdiff.core.workbench.workbench import Workbench
    from workbench_support import EchoPool, case_id, echo_project, set_path, write_set

    root = tmp_path.resolve()
    sets = echo_project(root, {"echo": ["hello", "bye", "ping", "pong"]})
    whole = Workbench(root, [root / "agents"], EchoPool())
    whole.run(list(whole.cases), "first run")
    await whole.wait()
    monkeypatch.setattr(spills, "SPILL_FROM", 2)
    monkeypatch.setattr(spills, "KEEP_WHOLE", 1)
    pool = EchoPool()
    wb = Workbench(root, [root / "agents"], pool)
    for case in list(wb.cases):  # one at a time: the settling order is known
        wb.run([case], "first run")
        await wb.wait()
    light = [i for i, s in wb.cases.items() if isinstance(s.run, spills.LightRun)]
    assert light == [case_id("echo", f"case_{i}") for i in range(3)]  # all but the one settled last
    for case in light:
        kept, read = whole.cases[case].run, wb.cases[case].run
        assert read.result.status is CaseStatus.PASSED and read.result.runs[0].actual == ()  # slim in memory
        assert (read.diff, read.trace, read.outputs, read.full().result) == (kept.diff, kept.trace, kept.outputs, kept.result)
        assert read.baseline.trace == kept.baseline.trace and read.files_read == kept.files_read
        assert read.changed_layers == kept.changed_layers
    # an expectation edited: the spilled case is re-scored from its run on disk, with no job
    pool.clear()
    sets["echo"]["eval_cases"][0]["conversation"][0]["final_response"]["parts"][0]["text"] = "goodbye"
    await wb.on_changes([write_set(root, "echo", sets["echo"])])
    await wb.wait()
    first = case_id("echo", "case_0")
    assert pool.jobs == [] and wb.cases[first].status is CaseStatus.FAILED
    # and accepted, from what was read back
    wb.cases[first].run = wb.spill.put(wb.cases[first].run) or wb.cases[first].run
    assert isinstance(wb.cases[first].run, spills.LightRun)
    plan = await wb.plan_accept(first)
    await wb.accept(plan)
    await wb.wait()
    assert json.loads(set_path(root, "echo").read_text())["eval_cases"][0]["conversation"][0]["final_response"]["parts"] == [{"text": "hello"}]
    assert wb.cases[first].status is CaseStatus.PASSED and pool.jobs == []


@pytest.mark.parametrize("layout", ["indent 2", "indent 4, CRLF", "one line", "tabs"])
def test_accepting_into_a_file_kept_as_spans_edits_only_that_case_as_editing_the_whole_file_would(tmp_path, layout):
    from agentdiff.core.baselines.case_edits import EvalFileEdit

    data = {"eval_set_id": "s", "eval_cases": [_case(i, "héllo") for i in range(4)]}
    text = {"indent 2": json.dumps(data, indent=2, ensure_ascii=False), "indent 4, CRLF": json.dumps(data, indent=4).replace("\n", "\r\n"),
            "one line": json.dumps(data), "tabs": json.dumps(data, indent="\t")}[layout]
    path = _write(tmp_path, text)
    loaded = load_eval_set(path, path.name)[0]
    by_case, whole = EvalFileEdit.of(loaded), EvalFileEdit(loaded, json.loads(text))
    assert by_case.data["eval_cases"].__class__.__name__ == "_Touched" and not by_case.changed()
    for file in (by_case, whole):
        turn = file.case(2)["conversation"][0]
        turn["final_response"] = {"role": "model", "parts": [{"text": "new ☃"}]}
        turn["intermediate_data"] = {"tool_uses": [{"name": "look", "args": {"q": [1, 2]}}]}  # a key added to the case
        file.case(0)  # read, not changed
    assert by_case.changed() and by_case.text() == whole.text()
    edited = json.loads(by_case.text())
    assert edited["eval_cases"][2]["conversation"][0]["intermediate_data"]["tool_uses"][0]["name"] == "look"
    assert edited["eval_cases"][:2] == data["eval_cases"][:2] and edited["eval_cases"][3] == data["eval_cases"][3]


def test_a_big_files_text_is_packed_once_its_cases_are_built_and_reads_back_the_same(tmp_path):
    """A suite held to run packs each big file's text (the eval set's and its source's, one object):
    the cases built, their located values and an edit's full text are those of the text as read."""
    import json as _json

    from agentdiff.core.formats.eval_set_files import load_eval_set
    from agentdiff.core.formats.packed_text import MIN_PACKED, PackedText

    cases = [{"eval_id": f"case_{i}", "conversation": [{"invocation_id": f"i{i}", "user_content": {"role": "user", "parts": [{"text": f"hé {i} " * 40}]}}]}
             for i in range(4000)]
    path = tmp_path / "big.evalset.json"
    path.write_text(_json.dumps({"eval_set_id": "big", "eval_cases": cases}, indent=1, ensure_ascii=False), encoding="utf-8")
    loaded, errors = load_eval_set(path, tmp_path)
    assert not errors and loaded is not None and len(path.read_text(encoding="utf-8")) > MIN_PACKED
    text = path.read_text(encoding="utf-8")
    assert isinstance(loaded.source.content, str)  # listed only: nothing packed yet
    assert loaded.cases[3999].eval_id == "case_3999"
    assert isinstance(loaded.source.content, PackedText) and loaded.source.content.packed_bytes < len(text) // 5
    assert loaded.source.text == text
    for index in (0, 1, 1234, 3999):
        assert loaded.cases[index].conversation[0].user_content.parts[0].text == cases[index]["conversation"][0]["user_content"]["parts"][0]["text"]
        part, line, column = loaded.cases.text_of(index)
        start = text.index(f'"eval_id": "case_{index}"') - 2
        start = text.rindex("{", 0, start + 2)
        assert _json.loads(part)["eval_id"] == f"case_{index}"
        assert text.count("\n", 0, start) + 1 == line and start - text.rfind("\n", 0, start) == column
    packed = loaded.source.content
    for start, end in ((0, 10), (65_530, 65_545), (100, 300_000), (len(text) - 5, len(text) + 9), (7, 7)):
        assert packed[start:end] == text[start:end]


def test_a_packed_text_survives_a_pickle():
    import pickle

    from agentdiff.core.formats.packed_text import BLOCK, PackedText

    text = "".join(f"line {i} é 天\n" for i in range(BLOCK // 4))
    again = pickle.loads(pickle.dumps(PackedText(text)))
    assert str(again) == text and again[BLOCK - 3 : BLOCK + 3] == text[BLOCK - 3 : BLOCK + 3] and len(again) == len(text)


async def test_a_small_runs_scoring_stays_on_the_loop_and_a_big_ones_goes_to_a_thread():
    """Each hop to a thread passes the interpreter's lock back and forth with the loop: a workbench's
    run whose output is small is scored where it is awaited; one over `SMALL_BYTES` in a thread, and
    a headless run's always in a thread."""
    import threading

    from agentdiff.core.run import cpu
    from agentdiff.core.worker.jobs import RunOutput

    small, big = RunOutput(), RunOutput()
    big._size = cpu.SMALL_BYTES + 1
    assert big.model_copy()._size == big._size  # repeats are copies of one job's output
    here = threading.get_ident()
    assert await cpu.cpu_step(cpu.small([small]), threading.get_ident) != here, "a headless run's: in a thread"
    cpu.ON_LOOP.set(cpu.Pacer())  # as the workbench does in each run's task
    assert await cpu.cpu_step(cpu.small([small, small]), threading.get_ident) == here
    assert await cpu.cpu_step(cpu.small([small, big]), threading.get_ident) != here


async def test_a_run_that_ran_again_while_its_batch_was_spilled_stays_as_it_is():
    """Runs are spilled in a thread; by the time a batch is written a case may have run again (or
    be running): only runs still their case's are swapped for their light ones."""
    import threading
    from types import SimpleNamespace

    from agentdiff.core.workbench.spill import Spiller

    release = threading.Event()

    class SlowSpill:
        def put(self, run):
            release.wait(5)
            return ("light", run)

    first, second = SimpleNamespace(run="run 1"), SimpleNamespace(run="run 2")
    spiller = Spiller(SlowSpill(), lambda state, run: state.run is run)
    spiller.add(first, "run 1")
    spiller.add(second, "run 2")  # waits for the next batch
    first.run = "run 1 again"  # ran again meanwhile
    release.set()
    await spiller.settled()
    assert first.run == "run 1 again" and second.run == ("light", "run 2")


async def test_a_result_read_from_a_worker_knows_how_many_bytes_it_came_in():
    """What `core.run.cpu` weighs a run by: the bytes of its result's JSON, as the pool reads the frame."""
    from agentdiff.core.worker import pool

    body = b'{"index": 3, "result": {"seconds": 0.5, "log": "' + b"x" * 1000 + b'"}}'
    reader = asyncio.StreamReader()
    reader.feed_data(len(body).to_bytes(pool._HEADER_SIZE, "big") + body)
    reader.feed_eof()
    frame = await pool._read_frame(reader)
    assert frame["index"] == 3 and frame["result"].seconds == 0.5 and frame["result"]._size == len(body) - len(b'{"index": 3, "result": ') - 1


async def test_a_spill_batch_that_fails_leaves_its_runs_whole_and_the_next_batch_still_goes():
    import threading
    from types import SimpleNamespace

    from agentdiff.core.workbench.spill import Spiller

    release = threading.Event()

    class FailingFirst:
        def put(self, run):
            release.wait(5)
            if run == "run 1":
                raise RuntimeError("cannot pickle it")
            return ("light", run)

    first, second, third = (SimpleNamespace(run=f"run {i}") for i in (1, 2, 3))
    spiller = Spiller(FailingFirst(), lambda state, run: state.run is run)
    for state in (first, second, third):
        spiller.add(state, state.run)
    release.set()
    await spiller.settled()
    assert (first.run, second.run, third.run) == ("run 1", ("light", "run 2"), ("light", "run 3"))
