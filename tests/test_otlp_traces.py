"""OpenTelemetry traces in: what ADK 2.13 itself emits, in both telemetry schemas, read as the
conversations ADK's own session events say happened; imported as EvalSet cases a live run then
matches; scored with no agent call; and files that do not read said with their line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentdiff.core.formats.otlp.spans import read_spans
from agentdiff.core.traces.otlp import conversations

FIXTURES = Path(__file__).parent / "fixtures" / "otlp"
AGENTDIFF = str(Path(sys.executable).parent / "agentdiff")
CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
VARIANTS = {"schema1": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"},
            "schema2": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "2", CONTENT: "SPAN_ONLY"},
            "schema2-bare": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "2"}}


@pytest.fixture(scope="module")
def emitted(tmp_path_factory) -> dict[str, Path]:
    """What ADK emitted running the weather agent's conversations, per schema (each in its own process:
    ADK reads its telemetry settings when it starts)."""
    out = tmp_path_factory.mktemp("otlp")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ADK_", "OTEL_"))}
    for name, settings in VARIANTS.items():
        done = subprocess.run([sys.executable, str(FIXTURES / "emit_spans.py"), str(out / name)], env={**env, **settings},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
    return {name: out / name for name in VARIANTS}


def _what_adk_did(events: list[dict]) -> list[dict]:
    """Per turn, from ADK's session events: the user's text, each tool call with its response, the final text."""
    turns: list[dict] = []
    for event in events:
        parts = (event.get("content") or {}).get("parts") or []
        if event.get("author") == "user" and any("text" in p for p in parts):
            turns.append({"user": "".join(p["text"] for p in parts if "text" in p), "calls": [], "responses": [], "final": None})
            continue
        for part in parts:
            if "function_call" in part:
                turns[-1]["calls"].append((part["function_call"]["name"], part["function_call"].get("args")))
            elif "function_response" in part:
                turns[-1]["responses"].append(part["function_response"]["response"])
            elif part.get("text") and event.get("author") != "user":
                turns[-1]["final"] = part["text"]
    return turns


@pytest.mark.parametrize("variant", ["schema1", "schema2"])
def test_both_schemas_read_as_what_adks_session_says_happened(emitted, variant):
    folder = emitted[variant]
    spans, errors = read_spans(folder / "traces.json", folder)
    assert errors == []
    found = {c.id: c for c in conversations(spans)}
    session = json.loads((folder / "session.json").read_text())
    assert sorted(found) == sorted(session)
    for session_id, events in session.items():
        conversation = found[session_id]
        assert conversation.schema == int(variant[-1]) and conversation.missing == [] and conversation.adk_version == "2.13.0"
        adk = _what_adk_did(events)
        assert len(conversation.trace.turns) == len(adk), session_id  # one trace a turn, joined by the session id
        for turn, did in zip(conversation.trace.turns, adk):
            assert turn.user_text == did["user"]
            assert [(c.name, c.args) for c in turn.tool_calls] == did["calls"], session_id  # the merged span is no call
            assert [c.response for c in turn.tool_calls if c.has_response] == did["responses"]
            assert turn.final_response == did["final"]
            assert all(call.agent == "weather_agent" and call.end >= call.start for call in turn.tool_calls)
    assert found["sess-error"].trace.turns[0].error == "ValueError: unknown city: Atlantis"
    assert found["sess-error"].trace.turns[0].tool_calls[0].error == "ValueError: unknown city: Atlantis"
    parallel = found["sess-parallel"].trace.turns[0]
    assert [x.request["contents"][-1]["parts"][0] for x in parallel.llm][0] == {"text": "Compare the weather in Paris and Tokyo."}
    assert parallel.llm[0].responses[0]["usage_metadata"]["prompt_token_count"] == 17


@pytest.mark.parametrize("schema", [1, 2])
def test_sub_agents_agent_tools_streaming_and_sequences_read_as_adks_session_says(schema):
    """Captured from ADK 2.13 (`fixtures/otlp/multi_agent/emit_multi.py`): a transfer to a sub-agent over two
    turns, an AgentTool whose agent calls a tool of its own, a streamed answer, a SequentialAgent."""
    folder = FIXTURES / "multi_agent"
    spans, errors = read_spans(folder / f"schema{schema}.hex.jsonl", folder)
    found = {c.id: c for c in conversations(spans)}
    session = json.loads((folder / f"schema{schema}.session.json").read_text())
    assert errors == [] and sorted(found) == sorted(session)  # the AgentTool's own session is no conversation of its own
    for session_id, events in session.items():
        conversation = found[session_id]
        for turn, did in zip(conversation.trace.turns, _what_adk_did(events), strict=True):
            assert turn.user_text == did["user"]
            assert [(c.name, c.args) for c in turn.tool_calls] == did["calls"], session_id  # the AgentTool's own calls are its session's
            assert [c.response for c in turn.tool_calls if c.has_response] == did["responses"]
            assert turn.final_response == did["final"], session_id  # a streamed answer once, not its chunks and then it
    transfer = found["sess-transfer"].trace.turns[0]
    assert [(x.agent, x.index) for x in transfer.llm] == [("coordinator", 0), ("weather_agent", 0), ("weather_agent", 1)]
    assert [c.agent for c in transfer.tool_calls] == ["coordinator", "weather_agent"] and found["sess-transfer"].agent == "coordinator"
    assert [x.agent for x in found["sess-sequential"].trace.turns[0].llm] == ["researcher", "researcher", "writer"]


def test_a_streamed_answer_whose_last_chunk_has_its_finish_reason_is_read_once(tmp_path):
    """Gemini's progressive streaming ends its last chunk with STOP, and ADK then adds the whole answer."""
    folder = FIXTURES / "multi_agent"
    line = next(line for line in (folder / "schema2.hex.jsonl").read_text().splitlines() if "sess-stream" in line)
    path = tmp_path / "stream.json"
    path.write_text(line.replace('\\"sunny, 26C.\\",\\"type\\":\\"text\\"}],\\"finish_reason\\":\\"\\"',
                                 '\\"sunny, 26C.\\",\\"type\\":\\"text\\"}],\\"finish_reason\\":\\"stop\\"'))
    assert path.read_text() != line
    (conversation,) = conversations(read_spans(path, tmp_path)[0])
    assert conversation.trace.turns[0].final_response == "Weather report -- Rome: sunny, 26C."


def test_hex_and_base64_ids_and_protobuf_read_alike(emitted):
    folder = emitted["schema2"]
    by_base64, _ = read_spans(folder / "traces.json", folder)
    by_hex, errors = read_spans(folder / "traces.hex.json", folder)
    assert errors == [] and [(s.trace_id, s.span_id, s.parent_id) for s in by_hex] == [(s.trace_id, s.span_id, s.parent_id) for s in by_base64]
    assert all(len(s.trace_id) == 32 and len(s.span_id) == 16 for s in by_hex)
    binary, errors = read_spans(folder / "traces.pb", folder)
    assert errors == [] and [c.trace for c in conversations(binary)] == [conversations(by_base64)[0].trace]


def test_a_trace_without_content_says_what_is_missing_and_how_to_keep_it(emitted, tmp_path):
    folder = emitted["schema2-bare"]
    spans, _ = read_spans(folder / "traces.json", folder)
    (single, *_) = conversations(spans)
    assert single.missing and CONTENT in single.missing[0] and "SPAN_ONLY" in single.missing[0]
    assert [c.name for c in single.trace.turns[0].tool_calls] == ["get_weather"] and single.trace.turns[0].tool_calls[0].args is None  # never made up
    done = subprocess.run([AGENTDIFF, "import", str(folder / "traces.json"), "--into", "cases.evalset.json", "--yes"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 1 and "left out: sess-single" in done.stderr and CONTENT in done.stderr, done.stderr
    assert "nothing to import: 4 conversation(s) left out" in done.stdout
    assert not (tmp_path / "cases.evalset.json").exists()
    from agentdiff.core.traces.otlp import content_left_out

    assert CONTENT in content_left_out(spans)  # what `receive` says of an export as it arrives
    assert [content_left_out(read_spans(emitted[v] / "traces.json", folder)[0]) for v in ("schema1", "schema2")] == [None, None]
    scored = subprocess.run([AGENTDIFF, "score", str(folder / "traces.json")], cwd=tmp_path, capture_output=True, text=True)
    assert scored.returncode == 2 and "not scored: conversation sess-single" in scored.stderr, scored.stderr  # never a silent pass


def _project(tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(FIXTURES / "weather_agent", tmp_path / "weather_agent", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([AGENTDIFF, *args], cwd=root, capture_output=True, text=True, env={**os.environ, "AGENTDIFF_NO_COLOR": "1"})


def test_imported_traces_are_cases_a_run_matches_a_score_grades_with_no_agent_call_and_undo_takes_back(emitted, tmp_path):
    root = _project(tmp_path)
    imported = _cli(root, "import", str(emitted["schema2"] / "traces.json"), "--into", "weather_agent/traced.evalset.json", "--yes")
    assert imported.returncode == 0, imported.stderr
    assert "import 4 traced conversations into weather_agent/traced.evalset.json" in imported.stdout
    data = json.loads((root / "weather_agent/traced.evalset.json").read_text())
    assert [case["eval_id"] for case in data["eval_cases"]] == ["sess-single", "sess-parallel", "sess-multi", "sess-error"]
    ran = json.loads(_cli(root, "run", "weather_agent", "--json").stdout)
    verdicts = {case["eval_id"]: case["status"] for case in ran["cases"]}
    assert verdicts == {"sess-single": "passed", "sess-parallel": "passed", "sess-multi": "passed", "sess-error": "error"}, verdicts
    from agentdiff.core.reports.kept_runs import kept_runs, load_traces
    from agentdiff.core.traces.model import Trace

    (live,) = [run for run in kept_runs(root) if run.meta.get("source") == "run"]  # what agentdiff recorded of the same runs, live
    recorded = {case_id.rpartition("::")[2]: Trace.model_validate(trace) for case_id, trace in load_traces(live).items()}
    traced = {c.id: c.trace for c in conversations(read_spans(emitted["schema2"] / "traces.json", root)[0])}

    def said(trace: Trace) -> list:  # ids and times aside
        return [(t.user_text, [(c.name, c.args, c.response, c.agent) for c in t.tool_calls], t.final_response,
                 [(x.agent, x.request.get("contents"), x.responses[-1].get("content")) for x in t.llm]) for t in trace.turns]
    assert {k: said(v) for k, v in recorded.items() if k != "sess-error"} == {k: said(v) for k, v in traced.items() if k != "sess-error"}
    assert [len(x.request["contents"]) for x in recorded["sess-multi"].turns[1].llm] == [5, 7]  # the whole history, each call
    again = _cli(root, "import", str(emitted["schema2"] / "traces.json"), "--into", "weather_agent/traced.evalset.json", "--yes")
    assert again.returncode == 1 and "already in weather_agent/traced.evalset.json: sess-single" in again.stdout

    scored = _cli(root, "score", str(emitted["schema1"] / "traces.json"), "--json")  # the other schema's traces, against those cases
    results = {case["eval_id"]: case for case in json.loads(scored.stdout)["cases"]}
    assert {k: v["status"] for k, v in results.items()} == verdicts, scored.stderr
    assert all(case["mode"] == "score" for case in results.values())
    origin = results["sess-single"]["origin"]  # which conversation each row scored (several may map to one case)
    assert origin.startswith(f"{results['sess-single']['source']}:") and origin.endswith(", conversation sess-single"), results["sess-single"]
    assert results["sess-single"]["tool_calls"] == 1 and results["sess-single"]["model_calls"] == 2 and results["sess-single"]["seconds"] > 0
    scores = {m["name"]: m["score"] for m in results["sess-parallel"]["metrics"]}
    assert scores["tool_trajectory_avg_score"] == 1.0 and scores["response_match_score"] == 1.0

    (kept,) = [run for run in kept_runs(root) if run.meta.get("source") == "traces"]  # what `B` and compare take
    assert "kept as run" in scored.stderr and set(load_traces(kept)) == {case["id"] for case in results.values()}

    exported = _cli(root, "run", "weather_agent", "--report", "otlp=run.otlp.json")  # the run as OpenTelemetry, read back
    assert exported.returncode == 1, exported.stderr  # (sess-error errs, as its trace did)
    spans, errors = read_spans(root / "run.otlp.json", root)
    assert errors == [] and len(conversations(spans)) == 4
    evaluations = [e for s in spans for name, e in s.events if name == "gen_ai.evaluation.result"]
    assert {"gen_ai.evaluation.name": "tool_trajectory_avg_score", "gen_ai.evaluation.score.value": 1.0,
            "gen_ai.evaluation.score.label": "passed"} in evaluations, evaluations
    again_scored = json.loads(_cli(root, "score", "run.otlp.json", "--json").stdout)
    assert {case["eval_id"]: case["status"] for case in again_scored["cases"]} == verdicts
    _cli(root, "run", "weather_agent", "--report", "otlp=again.otlp.json")
    both = json.loads(_cli(root, "score", "run.otlp.json", "again.otlp.json", "--json").stdout)
    assert len(both["cases"]) == 8 and {c["status"] for c in both["cases"] if c["eval_id"] != "sess-error"} == {"passed"}  # never merged

    agent = root / "weather_agent" / "agent.py"
    agent.write_text(agent.read_text().replace('"Paris": ("sunny", 21)', '"Paris": ("stormy", 30)'))  # the agent changes
    diffed = json.loads(_cli(root, "run", "weather_agent", "--json").stdout)
    changed = {case["eval_id"]: case for case in diffed["cases"]}
    assert changed["sess-parallel"]["status"] == "failed" and changed["sess-multi"]["status"] == "passed"
    layers = {layer["layer"] for layer in changed["sess-single"]["layers"] if layer["status"] == "changed"}
    assert "response" in layers, changed["sess-single"]
    undone = _cli(root, "undo")
    assert undone.returncode == 0 and not (root / "weather_agent/traced.evalset.json").exists()  # the file was new
    unscored = _cli(root, "score", str(emitted["schema2"] / "traces.json"), "--json")  # no case now: each one said, in the JSON too
    assert unscored.returncode == 2 and len(json.loads(unscored.stdout)["load_errors"]) == 4, unscored.stdout


@pytest.mark.parametrize("text, said", [
    ("", "the file is empty"),
    ('{"resourceSpans": "x"}\n', "repeated field resourceSpans"),
    ('{"resourceSpans": []}\n{not json\n', "invalid JSON"),
    ("[" * 100_000, "nested too deeply"),
    ('{"other": 1}', "not an OTLP trace export"),
])
def test_a_trace_file_that_does_not_read_is_an_error_with_its_line_and_the_rest_reads(tmp_path, text, said):
    path = tmp_path / "traces.json"
    path.write_text(text)
    spans, errors = read_spans(path, tmp_path)
    assert spans == [] and errors and said in str(errors[0]), errors


def test_a_broken_line_loses_only_itself(emitted, tmp_path):
    lines = (emitted["schema1"] / "traces.json").read_text().splitlines()
    path = tmp_path / "traces.json"
    path.write_text("\n".join([lines[0], '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 5}]}]}]}', lines[1]]) + "\n")
    spans, errors = read_spans(path, tmp_path)
    assert [e.line for e in errors] == [2] and sorted(c.id for c in conversations(spans)) == ["sess-parallel", "sess-single"]
    garbage = tmp_path / "traces.pb"
    garbage.write_bytes(b"\x00\xff" * 50)
    assert read_spans(garbage, tmp_path)[1]


def test_exports_appended_to_a_trace_file_are_read_on_without_parsing_the_rest_again(tmp_path, monkeypatch):
    """`receive` and a collector append an export a line: a reload parses only the new lines, and finds
    what a whole read finds (a line's text may hold U+2028, which is no line break)."""
    from agentdiff.core.formats.otlp import spans as otlp_spans

    lines = (FIXTURES / "multi_agent" / "schema2.hex.jsonl").read_text().splitlines()
    noted = json.loads(lines[3])
    noted["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append({"key": "note", "value": {"stringValue": "a\u2028b"}})
    path = tmp_path / "traces.json"
    path.write_text("\n".join(lines[:2]) + "\n")
    parsed: list[object] = []
    request = otlp_spans._request
    monkeypatch.setattr(otlp_spans, "_request", lambda document: parsed.append(document) or request(document))
    first = otlp_spans.read_on(path, tmp_path)
    with path.open("a", encoding="utf-8") as file:
        file.write(lines[2] + "\n{broken\n" + json.dumps(noted, ensure_ascii=False) + "\n")
    parsed.clear()
    on = otlp_spans.read_on(path, tmp_path, first)
    assert len(parsed) == 2 and [e.line for e in on.errors] == [4] and on.lines == 5, (len(parsed), on.errors)
    assert on == otlp_spans.read_on(path, tmp_path)
    assert any(span.attributes.get("note") == "a\u2028b" for span in on.spans)
    from agentdiff.core.traces import otlp as otlp_traces

    turns: list[str] = []
    turn = otlp_traces._turn
    monkeypatch.setattr(otlp_traces, "_turn", lambda index, spans, schema: turns.append(spans[0].trace_id) or turn(index, spans, schema))
    conversations(first.spans)
    turns.clear()
    read_on = conversations(on.spans)  # the turns read before are not built again
    assert read_on == conversations(list(on.spans)) and 0 < len(turns) == len({s.trace_id for s in on.spans} - {s.trace_id for s in first.spans})
    assert read_on == [c for c in conversations(read_spans(path, tmp_path)[0])]

    path.write_text("\n".join([*reversed(lines), lines[0]]) + "\n")  # rewritten, longer: read whole
    parsed.clear()
    assert otlp_spans.read_on(path, tmp_path, on) == otlp_spans.read_on(path, tmp_path) and len(parsed) == 10

    pretty = json.dumps(json.loads(lines[0]), indent=2)  # a document over several lines, caught being written
    path.write_text(pretty[: len(pretty) // 2])
    half = otlp_spans.read_on(path, tmp_path)
    path.write_text(pretty + "\n")
    assert half.errors and otlp_spans.read_on(path, tmp_path, half) == otlp_spans.read_on(path, tmp_path) != half
    assert otlp_spans.read_on(path, tmp_path).errors == []

    path.write_text(lines[0] + "\n" + lines[1][:500])  # an export being written: said, and read again until it ends
    writing = otlp_spans.read_on(path, tmp_path)
    assert [(e.line, e.message.split(":")[0]) for e in writing.errors] == [(2, "its last line is not ended")], writing.errors
    with path.open("a", encoding="utf-8") as file:
        file.write(lines[1][500:] + "\n")
    parsed.clear()
    ended = otlp_spans.read_on(path, tmp_path, writing)
    assert len(parsed) == 1 and ended.errors == [] and ended == otlp_spans.read_on(path, tmp_path)


def test_a_big_trace_file_is_parsed_once_and_read_on_from_the_users_cache_by_later_commands(tmp_path, monkeypatch):
    from agentdiff.core.formats.otlp import kept
    from agentdiff.core.formats.otlp import spans as otlp_spans

    monkeypatch.setenv("AGENTDIFF_CACHE_DIR", str(tmp_path / "cache"))
    lines = (FIXTURES / "multi_agent" / "schema2.hex.jsonl").read_text().splitlines()
    copies = [line.replace('"sess-', f'"c{n}-sess-') for n in range(kept.MIN_BYTES // 60000 + 1) for line in lines]
    project = tmp_path / "project"
    path = project / "traces" / "traces.json"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(copies) + "\n")
    assert path.stat().st_size >= kept.MIN_BYTES
    parsed: list[object] = []
    request = otlp_spans._request
    monkeypatch.setattr(otlp_spans, "_request", lambda document: parsed.append(document) or request(document))

    first = otlp_spans.read_on(path, project)  # a first command: every export parsed, the read kept
    assert len(parsed) == len(copies) and list((tmp_path / "cache" / "traces").glob("*.json.z"))
    parsed.clear()
    assert otlp_spans.read_on(path, project) == first and parsed == []  # the next: none
    with path.open("a", encoding="utf-8") as file:
        file.write(lines[0].replace('"sess-', '"later-sess-') + "\n")
    on = otlp_spans.read_on(path, project)  # after an export arrived: that one
    assert len(parsed) == 1 and on.lines == len(copies) + 1
    monkeypatch.setenv("AGENTDIFF_NO_CACHE", "1")
    parsed.clear()
    assert otlp_spans.read_on(path, project) == on and len(parsed) == len(copies) + 1
    monkeypatch.delenv("AGENTDIFF_NO_CACHE")

    before, grown = on, 0  # grown an export at a time, as receive appends them: kept again after a megabyte more
    while grown < kept.MIN_BYTES:
        with path.open("a", encoding="utf-8") as file:
            file.write(lines[grown % len(lines)].replace('"sess-', f'"more{grown}-sess-') + "\n")
        before = otlp_spans.read_on(path, project, before)
        grown = before.size - on.size
    assert before.kept_size > on.size and kept.recall(path, project, "traces/traces.json")["size"] == before.kept_size

    path.write_text("\n".join(reversed(copies)) + "\n")  # the same size, other bytes: parsed whole
    parsed.clear()
    assert otlp_spans.read_on(path, project) != first and len(parsed) == len(copies)
    assert not any(p.suffix == ".z" for p in project.rglob("*"))  # never in the project


def test_a_scored_conversation_says_where_it_was_traced_and_a_long_list_of_problems_names_score_json():
    import io

    from agentdiff.core.formats.load_error import LoadError
    from agentdiff.core.scoring.results import CaseResult, CaseStatus
    from agentdiff.tui.cli.errors import print_errors
    from agentdiff.tui.cli.table import render_case_table

    rows = [CaseResult(id="a/traced.evalset.json::s1", source="traces.json", eval_set_id="traced", eval_id="s1", agent="a", mode="score",
                       status=CaseStatus.PASSED, origin=f"traces.json:{line}, conversation s{line}") for line in (3, 9)]
    assert render_case_table(rows).splitlines()[:4] == [
        "✓ passed        a/traced.evalset.json::s1  ", "    from traces.json:3, conversation s3",
        "✓ passed        a/traced.evalset.json::s1  ", "    from traces.json:9, conversation s9"]
    said = io.StringIO()
    print_errors([LoadError(file="traces.json", line=n, message="not scored") for n in range(5)], said, listed_by="agentdiff score --json")
    assert said.getvalue().splitlines()[-1] == "error: traces.json: and 2 more problems in this file (`agentdiff score --json` lists every one)"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def receiver(folder: Path):
    """`agentdiff receive FOLDER` on a free port, once it says it listens; its port."""
    import time

    port = _free_port()
    server = subprocess.Popen([AGENTDIFF, "receive", str(folder), "--port", str(port)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while "receiving OTLP traces on" not in (line := server.stderr.readline()) and time.monotonic() < deadline:
            assert server.poll() is None, line
        yield port
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_receive_takes_what_an_otlp_http_exporter_sends_and_refuses_other_hosts(tmp_path):
    import urllib.error
    import urllib.request

    folder = tmp_path / "received"
    with receiver(folder) as port:
        endpoint = f"http://127.0.0.1:{port}/v1/traces"
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("ADK_", "OTEL_"))}, **VARIANTS["schema2"],
               "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint}
        done = subprocess.run([sys.executable, str(FIXTURES / "emit_spans.py"), str(tmp_path / "emitted")], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        sent, _ = read_spans(tmp_path / "emitted" / "traces.json", tmp_path)
        got, errors = read_spans(folder / "traces.json", tmp_path)  # the exporter's protobuf, kept as OTLP/JSON lines
        first = json.loads((folder / "traces.json").read_text().splitlines()[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        assert len(first["traceId"]) == 32 and first["kind"] == 1  # OTLP/JSON's own form: hex ids, integer enums
        assert errors == [] and [c.trace for c in conversations(got)] == [c.trace for c in conversations(sent)]

        def post(body: bytes, kind: str, host: str = f"127.0.0.1:{port}") -> int:
            request = urllib.request.Request(endpoint, data=body, headers={"Content-Type": kind, "Host": host}, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    return answer.status
            except urllib.error.HTTPError as refused:
                return refused.code

        line = (tmp_path / "emitted" / "traces.json").read_text().splitlines()[0].encode()
        assert post(line, "application/json") == 200  # OTLP/JSON too
        assert post(line, "application/json", host=f"rebound.example:{port}") == 403  # a name that is not this server's
        assert post(b"{not json", "application/json") == 400 and post(line, "text/plain") == 415
        assert len((folder / "traces.json").read_text().splitlines()) == len(sent) + 1  # a line an export (a span each), then the posted one


def test_colliding_ids_a_span_its_own_parent_and_wrong_types_still_read(tmp_path):
    span = {"traceId": "0" * 32, "spanId": "1" * 16, "parentSpanId": "1" * 16, "name": "execute_tool get_weather",
            "startTimeUnixNano": "5", "endTimeUnixNano": "1",  # ends before it starts
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                           {"key": "gen_ai.tool.call.arguments", "value": {"intValue": "7"}},  # not the JSON text ADK writes
                           {"key": "gen_ai.conversation.id", "value": {"arrayValue": {"values": [{"stringValue": "x"}]}}}]}
    path = tmp_path / "traces.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span, span]}]}]}))
    spans, errors = read_spans(path, tmp_path)
    assert errors == [] and len(spans) == 2
    (conversation,) = conversations(spans)
    assert [call.args for call in conversation.trace.turns[0].tool_calls] == [None, None] and conversation.missing
    served = dict(span, traceId="2" * 32, name="POST /run", attributes=[{"key": "http.method", "value": {"stringValue": "POST"}}])
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [served]}]}]}))
    assert conversations(read_spans(path, tmp_path)[0]) == []  # a server's own request: no agent ran in it, no conversation


def test_scores_from_traces_equal_adks_scores_of_the_same_invocations(emitted, tmp_path):
    """ADK's own evaluators on the invocations ADK's own session events make (the conversation as ADK
    recorded it) against the imported cases give the scores `score TRACES` gives from the spans."""
    from google.adk.evaluation.eval_case import Invocation
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator
    from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
    from google.adk.events.event import Event

    root = _project(tmp_path)
    assert _cli(root, "import", str(emitted["schema2"] / "traces.json"), "--into", "weather_agent/traced.evalset.json", "--yes").returncode == 0
    scored = json.loads(_cli(root, "score", str(emitted["schema1"] / "traces.json"), "--json").stdout)  # the other schema's spans
    ours = {case["eval_id"]: {m["name"]: m["score"] for m in case["metrics"]} for case in scored["cases"]}
    cases = {c["eval_id"]: c for c in json.loads((root / "weather_agent/traced.evalset.json").read_text())["eval_cases"]}
    session = json.loads((emitted["schema1"] / "session.json").read_text())
    for session_id in ("sess-single", "sess-parallel", "sess-multi"):
        actual = EvaluationGenerator.convert_events_to_eval_invocations([Event.model_validate(e) for e in session[session_id]])
        expected = [Invocation.model_validate(turn) for turn in cases[session_id]["conversation"]]
        trajectory = TrajectoryEvaluator(threshold=1.0).evaluate_invocations(actual, expected).overall_score
        rouge = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=0.8)).evaluate_invocations(actual, expected).overall_score
        assert (ours[session_id]["tool_trajectory_avg_score"], ours[session_id]["response_match_score"]) == (trajectory, rouge), session_id


def test_receive_takes_gzip_as_an_exporter_sends_it_and_an_empty_export_adds_nothing(tmp_path):
    import gzip
    import urllib.request

    folder = tmp_path / "received"
    with receiver(folder) as port:
        line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "1" * 32, "spanId": "2" * 16, "name": "invoke_agent a",
                                                                          "startTimeUnixNano": "1", "endTimeUnixNano": "2"}]}]}]})

        def post(body: bytes, encoding: str = "") -> int:
            headers = {"Content-Type": "application/json", **({"Content-Encoding": encoding} if encoding else {})}
            with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/v1/traces", data=body, headers=headers,
                                                               method="POST"), timeout=10) as answer:
                return answer.status

        assert post(gzip.compress(line.encode()), "gzip") == 200  # as the collector's otlphttp exporter sends by default
        assert post(b'{"resourceSpans": []}') == 200
        assert len((folder / "traces.json").read_text().splitlines()) == 1  # the empty export added no line


async def test_traces_arriving_in_the_project_are_pending_cases_live_that_accept_makes_eval_cases(emitted, tmp_path):
    """The traces family: each conversation `receive` appends to the project's traces.json is a new case as
    it arrives (watch loads it, and its run is its trace: no agent call); accepting it adds it to
    traced.evalset.json in its agent's folder, where it is an EvalSet case, and it is pending no more."""
    from agentdiff.core.baselines.documents import RecordError
    from agentdiff.core.families.traces.writes import with_cases
    from agentdiff.core.scoring.results import CaseStatus
    from agentdiff.core.workbench.workbench import Workbench
    from workbench_support import EchoPool

    root = _project(tmp_path)
    lines = (emitted["schema2"] / "traces.hex.json").read_text().splitlines(keepends=True)  # one export a conversation
    traces = root / "traces" / "traces.json"
    traces.parent.mkdir()
    pool = EchoPool()
    wb = Workbench(root, [root], pool)
    assert list(wb.cases) == []
    traces.write_text(lines[0])
    await wb.on_changes([traces])
    await wb.wait()
    assert list(wb.cases) == ["traces/traces.json::sess-single"]
    with open(traces, "a") as handle:  # more arrive
        handle.writelines(lines[1:])
    await wb.on_changes([traces])
    await wb.wait()
    pending = [f"traces/traces.json::{s}" for s in ("sess-single", "sess-parallel", "sess-multi", "sess-error")]
    assert sorted(wb.cases) == sorted(pending) and all(wb.cases[i].status is CaseStatus.NEW for i in pending) and pool.jobs == []
    multi = wb.cases[pending[2]].run
    assert [t.user_text for t in multi.trace.turns] == ["What's the weather in Berlin?", "Thanks! And in Rome?"]
    assert [c.name for c in multi.trace.turns[1].tool_calls] == ["get_weather"] and multi.diff.divergences == ()

    plan = await wb.plan_accept_all(pending[:3])
    target = root / "weather_agent" / "traced.evalset.json"
    assert [w.path for w in plan.writes] == [target]
    await wb.accept(plan)
    await wb.wait()
    assert sorted(wb.cases) == sorted([pending[3], *(f"weather_agent/traced.evalset.json::{s}" for s in ("sess-single", "sess-parallel", "sess-multi"))])
    assert [c["eval_id"] for c in json.loads(target.read_text())["eval_cases"]] == ["sess-single", "sess-parallel", "sess-multi"]
    await wb.undo()
    await wb.wait()
    assert not target.exists() and sorted(wb.cases) == sorted(pending)

    with pytest.raises(RecordError, match="the run failed .* in its trace: `agentdiff import` makes it a case all the same"):
        await wb.plan_accept(pending[3])
    traces.write_text("".join(lines[:3]))
    await wb.on_changes([traces])
    await wb.accept(await wb.plan_accept_all(pending[:3]))  # none pending left; then undone elsewhere (`agentdiff undo`, MCP)
    await wb.wait()
    assert not [i for i in wb.cases if i.startswith("traces/")]
    assert _cli(root, "undo").returncode == 0
    await wb.on_changes([target])
    await wb.wait()
    assert not target.exists() and sorted(wb.cases) == sorted(pending[:3])  # pending again

    await wb.accept(await wb.plan_accept(pending[0]))
    await wb.wait()
    single = "weather_agent/traced.evalset.json::sess-single"
    assert wb.cases[single].status is CaseStatus.FAILED  # (the echo pool answers in its own words)
    both = await wb.plan_accept_all([pending[1], single])  # one file, both accepts: written once
    (written,) = [w for w in both.writes if w.path == target]  # (and the accepted case's registration beside it)
    assert '"eval_id": "sess-parallel"' in written.text
    await wb.accept(both)
    await wb.wait()
    assert [c["eval_id"] for c in json.loads(target.read_text())["eval_cases"]] == ["sess-single", "sess-parallel"]

    other = root / "weather_agent" / "other.evalset.json"  # imported into a file of its own (`import --into`)
    other.write_text(with_cases(None, other, [c for c in conversations(read_spans(traces, root)[0]) if c.id == "sess-multi"])[0])
    await wb.on_changes([other])
    await wb.wait()
    with open(traces, "a") as handle:  # and the next export arrives
        handle.write(lines[3])
    await wb.on_changes([traces])
    await wb.wait()
    assert sorted(i for i in wb.cases if i.startswith("traces/")) == [pending[3]]  # sess-multi is other.evalset.json's


def test_in_an_agents_cli_project_traced_conversations_become_dataset_cases_with_their_first_baseline(emitted, tmp_path):
    """A trace of the project's own agent goes into traced-dataset.json (a continuation for more turns
    than one) with what it did as its baseline, which a live run of the agent then matches."""
    root = _project(tmp_path)
    (root / "agents-cli-manifest.yaml").write_text("agent_directory: weather_agent\nname: weather\n")
    (root / "traces").mkdir()
    (root / "traces" / "traces.json").write_text((emitted["schema2"] / "traces.hex.json").read_text())
    listed = _cli(root, "list", "--json")
    assert {c["kind"] for c in json.loads(listed.stdout)["cases"]} == {"traces"}
    accepted = _cli(root, "accept", "traces/traces.json::sess-single", "--yes")  # one accepted, the others imported
    assert accepted.returncode == 0 and "+++ b/tests/eval/baselines/traced-dataset.json" in accepted.stdout, accepted.stderr
    imported = _cli(root, "import", "traces", "--yes")
    assert imported.returncode == 0, imported.stderr
    assert "already in tests/eval/datasets/traced-dataset.json: sess-single" in imported.stdout
    dataset = json.loads((root / "tests/eval/datasets/traced-dataset.json").read_text())["eval_cases"]
    assert [c["eval_case_id"] for c in dataset] == ["sess-single", "sess-parallel", "sess-multi", "sess-error"]
    multi = dataset[2]["agent_data"]["turns"]
    assert [e["author"] for e in multi[-1]["events"]] == ["user"] and len(multi) == 2  # the first turn given, the last sent
    assert dataset[0]["reference"]["response"]["parts"] == [{"text": "Weather report -- Paris: sunny, 21C."}]
    baselines = json.loads((root / "tests/eval/baselines/traced-dataset.json").read_text())["eval_cases"]
    assert [len(b["agentdiff_llm_requests"]) for b in baselines][:3] == [2, 2, 2]
    ran = _cli(root, "run", "--json")
    results = {c["id"].rpartition("::")[2]: c["status"] for c in json.loads(ran.stdout)["cases"]}
    assert results == {"sess-single": "passed", "sess-parallel": "passed", "sess-multi": "passed", "sess-error": "error"}, ran.stderr
    assert _cli(root, "list", "--json").stdout.count('"kind": "traces"') == 0
    scored = _cli(root, "score", "traces", "--json")  # the continuation scored on the turn it sends, its first given
    assert {c["id"].rpartition("::")[2]: c["status"] for c in json.loads(scored.stdout)["cases"]} == results, scored.stderr


async def test_the_workbench_shows_traced_conversations_as_they_arrive_and_a_makes_one_a_case(emitted, tmp_path, worker_pool):
    from agentdiff.core.scoring.results import CaseStatus
    from agentdiff.tui.app import create_app
    from textual.widgets import OptionList
    from tui_support import FakeEditor, ScriptedChanges, screen_text, settle, until

    root = _project(tmp_path)
    lines = (emitted["schema1"] / "traces.hex.json").read_text().splitlines(keepends=True)
    traces = root / "traces" / "traces.json"
    traces.parent.mkdir()
    traces.write_text(lines[0])
    changes = ScriptedChanges()
    app = create_app(root, [root], pool=worker_pool, changes=changes, watch=True, editor=FakeEditor(), clock=lambda: 1_800_000_000.0,
                     project="traced", keep_runs=3)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot, timeout=30)
        assert list(app.workbench.cases) == ["traces/traces.json::sess-single"]
        with open(traces, "a") as handle:  # the receiver appends what the exporter sends next
            handle.writelines(lines[1:])
        await changes.push(traces)
        await changes.handled()
        await settle(app, pilot, timeout=30)
        multi = "traces/traces.json::sess-multi"
        assert len(app.workbench.cases) == 4 and app.workbench.cases[multi].status is CaseStatus.NEW
        app.main.tree.select_case(multi)
        await pilot.pause(0.1)
        shown = screen_text(app)
        assert "+ sess-multi" in shown and "What's the weather in Berlin?" in shown  # what the trace did, shown as new
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "AcceptModal")
        assert "+++ b/weather_agent/traced.evalset.json" in app.screen.preview and '"eval_id": "sess-multi"' in app.screen.preview
        await pilot.press("y")
        await settle(app, pilot, timeout=30)
        accepted = "weather_agent/traced.evalset.json::sess-multi"
        assert multi not in app.workbench.cases and app.workbench.cases[accepted].status is CaseStatus.PASSED  # the agent, run again, did it
        assert app.main.tree.current_case_id == accepted  # the cursor went with it

        await pilot.press("B")  # the trace file, as a kept run: its conversation of the case scored with no agent call
        await until(pilot, lambda: type(app.screen).__name__ == "ComparePicker")
        options = app.screen.query_one(OptionList)
        (at,) = [i for i in range(options.option_count) if options.get_option_at_index(i).id.startswith("traces:")]
        options.highlighted = at
        await pilot.press("enter")
        await until(pilot, lambda: app.main.versus is not None, timeout=30)
        assert app.main.versus.run.meta["source"] == "traces" and app.main.versus.verdicts[accepted]["status"] == "passed"
        app.main.versus = None
        await pilot.press("z")
        await settle(app, pilot, timeout=30)
        assert accepted not in app.workbench.cases and app.workbench.cases[multi].status is CaseStatus.NEW


def test_a_traced_agent_is_found_by_its_folder_by_the_name_its_code_gives_it_or_as_the_only_one(tmp_path):
    from agentdiff.core.families.traces.agents import agent_folder
    from agentdiff.core.families.traces.cases import target_of

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "traces").mkdir()
    shop = tmp_path / "my_agent"
    shop.mkdir()
    (shop / "agent.py").write_text('root_agent = LlmAgent(name="shop_assistant", model=model)\n')
    here = tmp_path / "traces"
    assert agent_folder(here, "my_agent", tmp_path) == shop  # ADK's app name: the folder's
    assert agent_folder(here, "shop_assistant", tmp_path) == shop  # the agent's own name, in its code
    assert agent_folder(here, "someone_else", tmp_path) == shop  # the only agent package there is
    (tmp_path / "billing").mkdir()
    (tmp_path / "billing" / "__init__.py").write_text("")
    assert agent_folder(here, "shop_assistant", tmp_path) == shop and agent_folder(here, "someone_else", tmp_path) is None
    assert target_of(here / "traces.json", "someone_else", tmp_path) == here / "traced.evalset.json"  # beside the trace
    outside = tmp_path.parent / f"{tmp_path.name}-downloads"
    outside.mkdir()
    assert target_of(outside / "traces.json", "shop_assistant", tmp_path) == shop / "traced.evalset.json"  # from the project, not from there


async def test_a_workbench_with_no_cases_says_what_it_reads_and_how_conversations_become_cases(tmp_path):
    from agentdiff.tui.app import create_app
    from tui_support import FakeEditor, screen_text, until
    from workbench_support import EchoPool

    app = create_app(tmp_path, [tmp_path], pool=EchoPool(), changes=None, watch=False, editor=FakeEditor(), clock=lambda: 1_800_000_000.0,
                     project="empty")
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: "No cases here yet." in screen_text(app), timeout=20, what="the empty workbench's hint")
        assert "agentdiff receive" in screen_text(app)

