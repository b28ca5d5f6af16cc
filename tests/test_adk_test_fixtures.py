"""ADK's `adk test` fixtures: found, replayed and judged as ADK judges them, accepted and re-recorded
into the fixture file as `adk test --rebuild` writes it.

The core tests hold the format's rules on hand-written events. The oracle tests use ADK itself: ADK's
own `adk test --rebuild` records the fixtures of a real ADK agent (its Gemini model reached through the
fake Gemini server), then ADK's `adk test` and agentdiff judge variants of the agent's code, and must
agree on every one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from agentdiff.core.formats.adk_test.fixture import load_fixture
from agentdiff.core.formats.adk_test.normalize import compared, renumbered, same
from agentdiff.core.formats.adk_test.replay_plan import picked, replay_plan
from agentdiff.core.worker.fixture_replay import in_order
from agentdiff.core.project.discovery import discover
from agentdiff.core.project.family import family_of
from fake_gemini import FakeGemini, Reply
from test_cli import run

ADK = Path(sys.executable).with_name("adk")


def user(text: str, **extra) -> dict:
    return {"author": "user", "content": {"role": "user", "parts": [{"text": text}]}, **extra}


def model(author: str, *parts: dict, **extra) -> dict:
    return {"author": author, "content": {"role": "model", "parts": list(parts)}, **extra}


def call(name: str, id: str, **args) -> dict:
    return {"functionCall": {"name": name, "id": id, "args": args}}


def answer(name: str, id: str, **response) -> dict:
    return {"functionResponse": {"name": name, "id": id, "response": response}}


# --- the format's rules ---------------------------------------------------------------------------


def test_a_runs_ids_are_renumbered_as_adk_renumbers_them_and_references_move_with_them():
    events = [
        model("a", call("lookup", "adk-9f", order="adk-9f"), longRunningToolIds=["adk-9f"], id="x1", nodeInfo={"path": "wf@1/lookup@adk-9f"}),
        {"author": "a", "content": {"role": "user", "parts": [answer("lookup", "adk-9f", ok=True)]}, "id": "x2", "branch": "task:adk-9f"},
        model("a", {"text": "done"}, partial=True, id="x3"),
        model("a", {"text": "done"}, id="x4", actions={"requestedToolConfirmations": {"adk-9f": {"hint": "ok"}}}),
    ]
    out = renumbered(events)
    assert [e["id"] for e in out] == ["e-1", "e-2", "e-3"]  # the partial event dropped
    first = out[0]
    assert first["content"]["parts"][0]["functionCall"] == {"name": "lookup", "id": "fc-1", "args": {"order": "fc-1"}}
    assert first["longRunningToolIds"] == ["fc-1"] and first["nodeInfo"]["path"] == "wf@1/lookup@fc-1"
    assert out[1]["content"]["parts"][0]["functionResponse"]["id"] == "fc-1" and out[1]["branch"] == "task:fc-1"
    assert out[2]["actions"]["requestedToolConfirmations"] == {"fc-1": {"hint": "ok"}}
    assert events[0]["id"] == "x1"  # the events given are not changed


def test_what_adk_test_compares_leaves_out_volatile_fields_and_sorts_by_author_and_node_path():
    recorded = [model("b", {"text": "2"}, id="e-9", timestamp=1.5, finishReason="STOP", usageMetadata={"x": 1}),
                model("a", {"text": "1", "thoughtSignature": "c2ln"}, invocationId="i-1", actions={"stateDelta": {}, "artifactDelta": {}}),
                model("a", call("adk_request_input", "fc-1"), actions={"stateDelta": {"node_join_state": 1, "kept": 2}})]
    run = [model("a", {"text": "1"}), model("a", call("adk_request_input", "fc-1"), actions={"stateDelta": {"kept": 2}}),
           model("b", {"text": "2"}, finish_reason="MAX_TOKENS")]
    assert same(run, recorded)
    asking = compared(recorded)[0]  # (a call sorts before a text: by the event as sorted JSON)
    assert "role" not in asking["content"]  # a request to the human carries no role in the comparison
    assert not same([model("a", {"text": "1"}), model("b", {"text": "2"})], recorded)


def test_the_mock_model_serves_what_adk_serves_in_the_order_adk_serves_it():
    events = [
        user("hi"),
        model("planner", call("set_model_response", "fc-1", answer=1)),
        {"author": "planner", "content": {"role": "user", "parts": [answer("set_model_response", "fc-1", answer=1)]}},
        model("planner", {"text": "made by ADK from the tool's response"}),
        model("worker__1", {"text": "second"}),
        model("worker__0", {"text": "first"}),
        model("wf", call("adk_request_confirmation", "fc-2"), nodeInfo={"path": "wf@1/step@1"}),
        model("wf", call("adk_request_input", "fc-3"), nodeInfo={"path": "wf@1/ask@1"}),
        model("root", call("adk_request_input", "fc-4"), nodeInfo={"path": "root@1"}),
        model("root", {"text": "last"}),
    ]
    texts = [json.dumps(c["parts"][0]) for c in in_order(picked(events[1:]), lambda content: content)]
    assert texts == [json.dumps(call("set_model_response", "fc-1", answer=1)), json.dumps({"text": "first"}), json.dumps({"text": "second"}),
                     json.dumps(call("adk_request_input", "fc-4")), json.dumps({"text": "last"})]
    # a content ADK cannot read is dropped before the parallel authors are grouped, as ADK drops it
    odd = [model("w__1", {"text": "b"}), model("x", {"text": "unreadable"}), model("w__0", {"text": "a"})]
    readable = lambda content: None if content["parts"][0]["text"] == "unreadable" else content  # noqa: E731
    assert [c["parts"][0]["text"] for c in in_order(picked(odd), readable)] == ["a", "b"]
    plan = replay_plan([*events, user("again")])
    assert plan.user_message == "hi" and [later["content"]["parts"] for later in plan.later] == [[{"text": "again"}]]
    assert plan.call_ids == ["fc-1", "fc-2", "fc-3", "fc-4"]
    assert replay_plan([model("a", {"text": "no user first"})]) is None


@pytest.mark.parametrize("text, line, message", [
    ('{"events": [\n  {"author": "user",}\n]}\n', 2, "invalid JSON"),
    ('{\n "events": {"author": "user"}\n}\n', 2, "`events` is a list"),
    ('{"events": [], "mocks": {\n "random.random": ["high"]\n}}\n', 2, "`random.random` is a list of numbers"),
    ('{"events": [], "mocks": {\n "random.randint": 4\n}}\n', 2, "`random.randint` is a list of numbers"),
])
def test_a_malformed_fixture_is_a_load_error_with_its_line(tmp_path, text, line, message):
    path = tmp_path / "fixture.json"
    path.write_text(text)
    fixture, errors = load_fixture(path, "fixture.json")
    assert fixture is None and [(e.line, message in e.message) for e in errors] == [(line, True)]


def test_mocks_are_read_as_adk_reads_them():
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f.json"
        for mocks, kept in [(None, {}), ({"time.time": 5, "random.random": [0.1, True]}, {"time.time": 5, "random.random": [0.1, True]})]:
            path.write_text(json.dumps({"events": [user("hi")], "mocks": mocks}))
            fixture, errors = load_fixture(path)
            assert errors == [] and fixture.mocks == kept


def _agent(root: Path, name: str = "helper") -> Path:
    folder = root / name
    (folder / "tests").mkdir(parents=True)
    (folder / "agent.py").write_text("root_agent = None\n")
    return folder


def test_fixtures_are_found_beside_the_eval_sets_a_tests_folder_may_also_hold(tmp_path):
    folder = _agent(tmp_path)
    (folder / "tests" / "greeting.json").write_text(json.dumps({"events": [user("hello")]}))
    (folder / "tests" / "flaky_path_xfail.json").write_text(json.dumps({"events": [user("bye")]}))
    (folder / "tests" / "broken.json").write_text('{"events": [\n,]}\n')
    eval_set = {"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": "hi"}]}}]}]}
    (folder / "tests" / "smoke.test.json").write_text(json.dumps(eval_set))  # ADK's eval set name: an eval set
    (folder / "tests" / "named.json").write_text(json.dumps(eval_set))  # an eval set a test names: never a fixture
    (folder / "tests" / "report.json").write_text(json.dumps({"passed": 3}))  # a report kept there: no fixture
    (folder / "tests" / "list.json").write_text("[1, 2]")  # nor an array
    (folder / "tests" / "commented.json").write_text('{"a": 1, // a comment\n}')  # nor JSON that does not parse and names no events
    (tmp_path / "notes" / "tests").mkdir(parents=True)
    (tmp_path / "notes" / "tests" / "x.json").write_text(json.dumps({"events": [user("no agent here")]}))
    found = discover([tmp_path], tmp_path)
    fixtures = [ref for ref in found.cases if ref.family == "adk_test"]
    assert [ref.id for ref in fixtures] == ["helper/tests/flaky_path_xfail.json::flaky_path_xfail", "helper/tests/greeting.json::greeting"]
    assert [ref.id for ref in found.cases if ref.family == "eval_set"] == ["helper/tests/smoke.test.json::c"]
    assert [(e.file, e.line) for e in found.errors] == [("helper/tests/broken.json", 2)]
    family = family_of(fixtures[0])
    assert family.described(fixtures[0])["expected_to_fail"] is True and family.named_agent(fixtures[1]) == "helper"
    assert family.listed(fixtures[1]) == "adk test; 1 turn; agent helper"


# --- ADK as the oracle ----------------------------------------------------------------------------

AGENT = '''\
from google.adk.agents import LlmAgent
from google.adk.tools.tool_context import ToolContext


def get_weather(city: str, tool_context: ToolContext) -> dict:
    """Returns the weather in a city."""
    tool_context.state["last_city"] = city
    return {"city": city, "forecast": "sunny", "celsius": 21}


root_agent = LlmAgent(name="weather", model="gemini-2.5-flash", instruction="Answer weather questions with get_weather.",
                      tools=[get_weather])
'''

#: Each variant of the agent's code, as an edit of AGENT; what `adk test` says of each is the oracle.
VARIANTS = {
    "unchanged": lambda code: code,
    "other_value": lambda code: code.replace('"celsius": 21', '"celsius": 22'),
    "other_state": lambda code: code.replace('state["last_city"] = city', 'state["last_city"] = city.upper()'),
    "tool_renamed": lambda code: code.replace("def get_weather(", "def get_forecast(").replace("tools=[get_weather]", "tools=[get_forecast]"),
    "tool_raises": lambda code: code.replace('    return {"city"', '    raise RuntimeError("the weather service is down")\n    return {"city"'),
    "model_text": lambda code: code.replace("Answer weather questions", "Always answer weather questions"),  # the model is mocked
    "callback": lambda code: code.replace("tools=[get_weather])", "tools=[get_weather],\n"
                                          "                      after_tool_callback=lambda tool, args, tool_context, tool_response: {'city': 'Rome'})"),
}


def respond(call) -> Reply:
    contents = call.body.get("contents", [])
    answered = sum(1 for c in contents for p in c.get("parts", []) if "functionResponse" in p)
    asked = [c for c in contents if c.get("role") == "user" and any("text" in p for p in c.get("parts", []))]
    city = "Oslo" if "Oslo" in json.dumps(asked[-1]) else "Paris"
    if answered < len(asked):
        return Reply(function_calls=[{"name": "get_weather", "args": {"city": city}}])
    return Reply(text=f"It is sunny in {city}.")


def _adk(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(ADK), *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300)


def _adk_verdicts(folder: Path, junit: Path) -> dict[str, bool]:
    """`adk test`'s verdict per fixture (`agent/fixture.json`): passed (an expected failure that fails counts)."""
    _adk("test", str(folder), "--", f"--junitxml={junit}", "-p", "no:cacheprovider")
    verdicts = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        key = case.get("name", "").partition("[")[2].rstrip("]")
        failed = case.find("failure") is not None or case.find("error") is not None
        verdicts[key] = not failed
    return verdicts


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """An agent whose two fixtures ADK's own `adk test --rebuild` recorded (one of two turns), with the
    fake Gemini server that played its model."""
    root = tmp_path_factory.mktemp("adk_test")
    folder = root / "weather"
    (folder / "tests").mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(AGENT)
    (folder / "tests" / "paris.json").write_text(json.dumps({"events": [user("Weather in Paris?")]}))
    (folder / "tests" / "two_cities.json").write_text(json.dumps({"events": [user("Weather in Paris?"), user("And in Oslo?")]}))
    server = FakeGemini(respond).start()
    done = _adk("test", str(root), "--rebuild", env=server.env)
    assert "Successfully rebuilt" in done.stdout and "Error" not in done.stdout, done.stdout + done.stderr
    yield root, server
    server.close()



@pytest.mark.adk
def test_agentdiff_judges_every_variant_of_the_agent_as_adk_test_does(recorded, tmp_path, monkeypatch):
    root, _ = recorded
    project = tmp_path / "variants"
    for variant, edit in VARIANTS.items():
        shutil.copytree(root / "weather", project / variant)
        (project / variant / "agent.py").write_text(edit(AGENT))
    adk = _adk_verdicts(project, tmp_path / "adk.xml")
    monkeypatch.chdir(project)
    code, out, err = run("run", "--json")
    ours = {f"{c['id'].split('/')[0]}/{c['id'].split('/')[-1].split('::')[0]}": c["status"] == "passed" for c in json.loads(out)["cases"]}
    assert len(adk) == 2 * len(VARIANTS) and ours == adk, err
    assert adk["unchanged/paris.json"] and adk["model_text/two_cities.json"] and not adk["other_value/paris.json"]
    failing = next(c for c in json.loads(out)["cases"] if c["id"] == "other_value/tests/paris.json::paris")
    assert "response.celsius expected 21, got 22" in failing["error"]
    assert [layer for layer in failing["layers"] if layer["status"] == "changed"][0]["layer"] == "tool_calls"


@pytest.mark.adk
def test_accept_writes_what_adk_test_then_passes_and_undo_puts_the_fixture_back(recorded, tmp_path, monkeypatch):
    root, _ = recorded
    project = tmp_path / "project"
    shutil.copytree(root, project)
    agent = project / "weather" / "agent.py"
    agent.write_text(VARIANTS["other_value"](AGENT))
    fixture = project / "weather" / "tests" / "paris.json"
    before = fixture.read_bytes()
    monkeypatch.chdir(project)
    code, out, err = run("accept", "weather/tests/paris.json::paris", "--yes")
    assert code == 0, err
    changed = [line for line in fixture.read_text().splitlines() if line not in before.decode().splitlines()]
    assert changed == ['                "celsius": 22,']  # the one value that changed; ids and order as --rebuild wrote them
    assert _adk_verdicts(project, tmp_path / "after.xml")["weather/paris.json"]
    assert not (project / "weather" / "tests" / "agentdiff-record.json").exists()  # adk test would read it as a fixture
    code, _, err = run("undo")
    assert code == 0 and fixture.read_bytes() == before, err


@pytest.mark.adk
def test_a_re_record_writes_the_fixture_byte_for_byte_as_adk_test_rebuild_does(recorded, tmp_path, monkeypatch):
    root, server = recorded
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for copy in (ours, theirs):
        shutil.copytree(root, copy)
        (copy / "weather" / "agent.py").write_text(VARIANTS["other_state"](AGENT))
    done = _adk("test", str(theirs), "--rebuild", env=server.env)
    assert "Successfully rebuilt" in done.stdout, done.stdout
    for key, value in server.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(ours)
    code, out, err = run("record", "weather/tests/two_cities.json::two_cities", "weather/tests/paris.json::paris")
    assert code == 0, out + err
    for name in ("paris.json", "two_cities.json"):
        assert (ours / "weather" / "tests" / name).read_bytes() == (theirs / "weather" / "tests" / name).read_bytes()


@pytest.mark.adk
async def test_watch_re_runs_the_fixtures_an_agent_edit_touches_and_an_accept_makes_them_pass(recorded, tmp_path, worker_pool):
    from agentdiff.core.scoring.results import CaseStatus
    from agentdiff.core.workbench.workbench import Workbench

    root, _ = recorded
    project = tmp_path / "project"
    shutil.copytree(root, project)
    wb = Workbench(project, [project], worker_pool)
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    paris, cities = "weather/tests/paris.json::paris", "weather/tests/two_cities.json::two_cities"
    assert {i: s.status for i, s in wb.cases.items()} == {paris: CaseStatus.PASSED, cities: CaseStatus.PASSED}
    agent = project / "weather" / "agent.py"
    agent.write_text(VARIANTS["other_state"](AGENT))
    await wb.on_changes([agent])
    await wb.wait()
    state = wb.cases[cities]
    assert state.status is CaseStatus.FAILED and state.reason == "re-run: weather/agent.py changed"
    assert state.run.diff.first_divergence.layer == "session" and "PARIS" in state.run.diff.first_divergence.summary
    plan = await wb.plan_accept_all([paris, cities])
    assert {w.path.name for w in plan.writes} == {"paris.json", "two_cities.json", "agentdiff-record.json"}
    await wb.accept(plan)
    await wb.wait()
    assert {i: s.status for i, s in wb.cases.items()} == {paris: CaseStatus.PASSED, cities: CaseStatus.PASSED}
    assert _adk_verdicts(project, tmp_path / "after.xml") == {"weather/paris.json": True, "weather/two_cities.json": True}


def test_an_expected_failure_passes_however_it_fails(tmp_path):
    from agentdiff.core.families.adk_test.judge import judge_fixture
    from agentdiff.core.scoring.results import CaseStatus
    from agentdiff.core.worker.jobs import RunOutput

    folder = _agent(tmp_path)
    (folder / "tests" / "crash_xfail.json").write_text(json.dumps({"events": [user("hi"), model("helper", {"text": "hello"})]}))
    (ref,) = [r for r in discover([tmp_path], tmp_path).cases if r.family == "adk_test"]
    crashed = judge_fixture(ref, None, "replay", RunOutput(error="RuntimeError: down"))
    matched = judge_fixture(ref, None, "replay", RunOutput(events=[model("helper", {"text": "hello"})]))
    assert crashed.result.status is CaseStatus.PASSED and "and it does: RuntimeError: down" in crashed.result.error
    assert matched.result.status is CaseStatus.PASSED and "but it passes" in matched.result.error
