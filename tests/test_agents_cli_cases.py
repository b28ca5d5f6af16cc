"""agents-cli projects through the real commands and workers: their dataset cases found with no
flags, run as `agents-cli eval generate` runs them (a prompt, or a continuation whose earlier events
seed the session), graded by the eval config's local metrics, *new* until a run is accepted, then
diffed against the accepted run; accept and undo touch only the accepted bytes of a hand-formatted
dataset; `--report agents-cli` writes a trace file."""

from __future__ import annotations

import json
import shutil

import pytest
from agentdiff.core.formats.agents_cli.dataset import load_dataset
from conftest import ROOT
from test_cli import run

SAMPLES = ROOT / "sample_agents"
DATASET = "tests/eval/datasets/basic-dataset.json"

# A team's hand-maintained dataset: 4-space indent, CRLF line endings, camelCase keys in places.
HAND_FORMATTED = (
    '{\r\n'
    '    "eval_cases": [\r\n'
    '        {\r\n'
    '            "eval_case_id": "paris_weather",\r\n'
    '            "prompt": {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}\r\n'
    '        },\r\n'
    '        {\r\n'
    '            "evalCaseId": "tokyo_time",\r\n'
    '            "agentData": {"turns": [{"turnIndex": 0, "events": [\r\n'
    '                {"author": "user", "content": {"role": "user", "parts": [{"text": "Weather in Tokyo?"}]}},\r\n'
    '                {"author": "model", "content": {"role": "model", "parts": [{"text": "Humid."}]}},\r\n'
    '                {"author": "user", "content": {"role": "user", "parts": [{"text": "What time is it in Tokyo?"}]}}\r\n'
    '            ]}]}\r\n'
    '        }\r\n'
    '    ]\r\n'
    '}'
)

METRICS = """\
metrics_to_run: [mentions_city, what_it_was_given, breaks, response_quality]
custom_metrics:
  - name: mentions_city
    custom_function_file: mentions_city.py
    threshold: 1
  - name: what_it_was_given
    custom_function: |
      import json
      def evaluate(instance):
          turns = instance["agent_data"]["turns"]
          return {"score": len(turns[-1]["events"]), "explanation": json.dumps(sorted(instance))}
  - name: breaks
    custom_function_file: breaks.py
  - name: response_quality
    prompt_template: "Rate {response}"
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """The weather_desk sample (an agents-cli project) with its dataset hand-formatted and no baselines."""
    shutil.copy(SAMPLES / "demo_model.py", tmp_path / "demo_model.py")
    root = tmp_path / "weather_desk"
    shutil.copytree(SAMPLES / "weather_desk", root, ignore=shutil.ignore_patterns("__pycache__", "baselines"))
    (root / DATASET).write_bytes(HAND_FORMATTED.encode())
    (root / "tests/eval/eval_config.yaml").write_text(METRICS)
    (root / "tests/eval/breaks.py").write_text("def evaluate(instance):\n    return {'score': instance['no_such_key']}\n")
    monkeypatch.chdir(root)
    return root


def _cases(out: str) -> dict:
    return {case["eval_id"]: case for case in json.loads(out)["cases"]}


def test_an_agents_cli_project_lists_its_dataset_cases_with_the_manifests_agent(project, monkeypatch):
    code, out, err = run("list", "--json", "--agents")
    assert code == 0, err
    cases = json.loads(out)["cases"]
    assert [c["id"] for c in cases] == [f"{DATASET}::paris_weather", f"{DATASET}::tokyo_time"]
    assert {c["kind"] for c in cases} == {"agents_cli"} and [c["shape"] for c in cases] == ["prompt", "continuation"]
    assert cases[0]["agent"] == "app" and cases[0]["agent_reason"] == "agent_directory of agents-cli-manifest.yaml"
    assert cases[0]["metrics"] == {"mentions_city": "local", "what_it_was_given": "local", "breaks": "local", "response_quality": "cloud"}
    monkeypatch.chdir(project / "tests" / "eval")  # any folder of the project
    code, out, _ = run("list", "--json")
    assert code == 0 and [c["id"] for c in json.loads(out)["cases"]] == ["datasets/basic-dataset.json::paris_weather",
                                                                        "datasets/basic-dataset.json::tokyo_time"]


def test_json_under_datasets_elsewhere_is_not_a_case_and_a_bad_dataset_is_a_located_error(tmp_path, monkeypatch):
    (tmp_path / "data" / "datasets").mkdir(parents=True)
    (tmp_path / "data" / "datasets" / "numbers.json").write_text('{"rows": [1, 2]}')  # no eval config, no manifest
    monkeypatch.chdir(tmp_path)
    assert run("list") == (0, "0 cases, 0 load errors\n", "")
    (tmp_path / "data" / "eval_config.yaml").write_text("metrics_to_run: [m]\n")
    code, out, err = run("list")
    assert code == 2 and "data/datasets/numbers.json:1:" in err and "rows" in err


def test_the_loop_new_accept_pass_edit_fail_undo(project):
    original = (project / DATASET).read_bytes()
    code, out, err = run("run", "--json")
    assert code == 1, err  # new cases have not passed yet
    cases = _cases(out)
    assert {c["status"] for c in cases.values()} == {"new"}
    assert "accept this run" in cases["paris_weather"]["error"]
    metrics = {m["name"]: m for m in cases["tokyo_time"]["metrics"]}
    assert metrics["mentions_city"]["score"] == 1.0 and metrics["mentions_city"]["status"] == "passed"
    # a continuation's instance: the seeded turn with the new events appended, no prompt (as the SDK builds it)
    given = metrics["what_it_was_given"]
    assert given["score"] == 6.0 and json.loads(given["details"]["explanation"]) == ["agent_data", "eval_case_id", "response"]
    assert given["status"] == "informational"
    assert metrics["breaks"]["status"] == "not_evaluated" and "breaks.py:2: CustomFunctionError(evaluate): 'no_such_key'" in metrics["breaks"]["reason"]
    assert "cloud eval service" in metrics["response_quality"]["reason"]

    code, out, err = run("accept", "tokyo_time", "--yes")
    assert code == 0, err
    after = (project / DATASET).read_bytes()
    reference = after.replace(original[:-len(b"\r\n        }\r\n    ]\r\n}")], b"")
    assert after.startswith(original[:-len(b"\r\n        }\r\n    ]\r\n}")])  # everything before the new key as it was
    assert b'"reference"' in reference and b"It is 01:00 in Tokyo." in reference and b"\r\n" in reference
    assert b"\n" not in after.replace(b"\r\n", b"")  # CRLF kept throughout
    baseline = json.loads((project / "tests/eval/baselines/basic-dataset.json").read_text())
    case = baseline["eval_cases"][0]
    assert case["eval_case_id"] == "tokyo_time" and case["responses"][0]["response"]["parts"][0]["text"] == "It is 01:00 in Tokyo."
    events = case["agent_data"]["turns"][0]["events"]
    assert [e["author"] for e in events] == ["user", "weather_desk", "user", "weather_desk", "weather_desk", "weather_desk"]
    assert events[3]["content"]["parts"][0]["function_call"]["name"] == "get_current_time"
    assert case["agentdiff_llm_requests"][0]["request"]["config"]["system_instruction"]

    code, out, _ = run("run", "tokyo_time", "--json")
    assert code == 0 and _cases(out)["tokyo_time"]["status"] == "passed"
    prompt = project / "app" / "prompt.md"
    prompt.write_text(prompt.read_text().replace('reply "It is <time> in <city>."', 'reply "<city>: <time>."'))
    code, out, _ = run("run", "tokyo_time", "--json")
    failed = _cases(out)["tokyo_time"]
    assert code == 1 and failed["status"] == "failed"
    layers = {layer["layer"]: layer for layer in failed["layers"]}
    assert layers["request"]["status"] == "changed" and layers["response"]["status"] == "changed"
    assert layers["tool_calls"]["status"] == "same"
    code, out, _ = run("diff", "tokyo_time")
    assert 'content.parts[0].text "It is 01:00 in Tokyo." → "Tokyo: 01:00."' in out and "turn 1 · response" in out

    code, out, err = run("undo")
    assert code == 0, err
    assert (project / DATASET).read_bytes() == original
    assert not (project / "tests/eval/baselines/basic-dataset.json").exists()


def test_a_threshold_that_a_score_misses_fails_the_case_and_the_trace_report(project):
    config = project / "tests/eval/eval_config.yaml"
    config.write_text(METRICS.replace("metrics_to_run: [mentions_city, what_it_was_given, breaks, response_quality]",
                                      "metrics_to_run: [mentions_city]").replace("threshold: 1", "threshold: 2"))
    code, out, err = run("run", "--json", "--report", "agents-cli=artifacts/traces")
    assert code == 1, err
    assert {c["status"] for c in _cases(out).values()} == {"failed"}
    (trace,) = (project / "artifacts" / "traces").glob("traces_*.json")
    loaded, errors = load_dataset(trace, trace=True)
    assert errors == [] and loaded.keys == ("paris_weather", "tokyo_time")
    text = trace.read_text()
    assert not text.endswith("\n") and '"event_time": "' in text and '"eval_case_id": "paris_weather"' in text
    first = loaded.cases[0]
    assert first.responses[0].response.text() == "It's 68 degrees and cloudy in Paris."
    assert [e.author for e in first.events()] == ["weather_desk"] * 3  # the prompt is not an event, as in eval generate


# --- hostile inputs (no workers) ------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_text = st.text(max_size=20)
_content = st.fixed_dictionaries({"parts": st.lists(st.fixed_dictionaries({"text": _text}), max_size=3)},
                                 optional={"role": st.sampled_from(["user", "model", "x"])})
_event = st.fixed_dictionaries({"author": st.sampled_from(["user", "model", "app", ""])},
                               optional={"content": _content, "state_delta": st.dictionaries(_text, st.integers(), max_size=2),
                                         "event_time": st.sampled_from(["2026-01-01T00:00:00Z", 1700000000.5])})
_case = st.fixed_dictionaries({}, optional={
    "eval_case_id": _text, "prompt": _content, "reference": st.fixed_dictionaries({"response": _content}),
    "agent_data": st.fixed_dictionaries({"turns": st.lists(st.fixed_dictionaries({"turn_index": st.integers(0, 3), "events": st.lists(_event, max_size=4)}), max_size=2)}),
    "extra_key": st.one_of(_text, st.integers(), st.none()),
    "responses": st.lists(st.fixed_dictionaries({"response": _content}), max_size=2)})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_case, events=st.lists(_event, max_size=4))
def test_any_case_agents_cli_loads_traces_and_grades_without_raising(case, events):
    """Whatever case the SDK's types accept, its trace (as eval generate writes it) loads back as a
    trace, and its instance is built or is None (no response to grade); the trace a worker builds
    (and grades) is the one the SDK's types give."""
    from agentdiff.core.formats.agents_cli.dataset import dataset_from_data
    from agentdiff.core.formats.agents_cli.traces import normalized, snake_case
    from agentdiff.core.formats.source_file import SourceText
    from agentdiff.core.worker.agents_cli_trace import instance, trace_case, trace_events

    source = SourceText(path=__import__("pathlib").Path("d.json"), display="d.json", text=json.dumps({"eval_cases": [case]}), sha256="")
    loaded, errors = dataset_from_data(source, {"eval_cases": [case]}, trace=True)
    if loaded is None:
        assert errors
        return
    adk_events = [{"author": e["author"], "content": e.get("content"), "actions": {"state_delta": e.get("state_delta")}, "timestamp": 1.5} for e in events]
    in_worker = trace_case(normalized(snake_case(case)), trace_events(adk_events), {}, "root")
    traced = normalized(in_worker)
    assert traced == in_worker and instance(traced) == instance(in_worker)
    again, errors = dataset_from_data(source, {"eval_cases": [traced]}, trace=True)
    assert errors == [] and again is not None
    given_instance = instance(traced)
    assert given_instance is None or ("response" in given_instance and "responses" not in given_instance)


def test_a_malformed_baseline_file_is_a_located_error_and_accept_writes_nothing(project):
    baselines = project / "tests/eval/baselines"
    baselines.mkdir()
    (baselines / "basic-dataset.json").write_text('{"eval_cases": [\n  {"eval_case_id": "paris_weather", "prompt": 3}\n]}')
    code, out, err = run("list")
    assert code == 2 and "tests/eval/baselines/basic-dataset.json:2:" in err
    before = (project / DATASET).read_bytes()
    (baselines / "basic-dataset.json").write_text('{"eval_cases": [')  # not even JSON
    code, out, err = run("accept", "paris_weather", "--yes")
    assert code != 0 and "basic-dataset.json is not valid JSON" in out + err
    assert (project / DATASET).read_bytes() == before and (baselines / "basic-dataset.json").read_text() == '{"eval_cases": ['


def test_score_grades_a_trace_file_and_diffs_it_against_the_baselines_with_no_agent_call(project):
    code, out, err = run("run", "--report", "agents-cli=artifacts/traces")
    (trace,) = (project / "artifacts" / "traces").glob("traces_*.json")
    assert run("accept", "paris_weather", "--yes")[0] == 0
    prompt = project / "app" / "prompt.md"
    prompt.write_text(prompt.read_text().replace("get_weather(query=<city>)", "get_current_time(city=<city>)"))  # no agent runs in score
    code, out, err = run("score", str(trace), "--json")
    assert code == 1, err
    cases = _cases(out)
    assert cases["paris_weather"]["status"] == "passed" and cases["paris_weather"]["mode"] == "score"
    assert {layer["layer"] for layer in cases["paris_weather"]["layers"]} == {"tool_calls", "response", "session"}  # a trace keeps no requests
    assert cases["tokyo_time"]["status"] == "new"
    assert {m["name"]: m["score"] for m in cases["tokyo_time"]["metrics"]}["what_it_was_given"] == 6.0  # graded from the trace


def test_replay_answers_from_the_baselines_recorded_calls_and_fails_on_a_changed_request(project):
    code, out, _ = run("run", "tokyo_time", "--mode", "replay", "--json")
    assert code == 1 and "replay needs recorded model calls" in _cases(out)["tokyo_time"]["error"]
    assert run("accept", "tokyo_time", "--yes")[0] == 0
    code, out, err = run("run", "tokyo_time", "--mode", "replay", "--json")
    assert code == 0, err
    assert _cases(out)["tokyo_time"]["mode"] == "replay" and _cases(out)["tokyo_time"]["status"] == "passed"
    prompt = project / "app" / "prompt.md"
    prompt.write_text(prompt.read_text().replace('reply "It is <time> in <city>."', 'reply "<city>: <time>."'))
    code, out, _ = run("run", "tokyo_time", "--mode", "replay", "--json")
    case = _cases(out)["tokyo_time"]
    assert code == 1 and case["status"] == "failed" and case["error"].startswith("replay: turn 1 · request")
    layers = {layer["layer"]: layer["status"] for layer in case["layers"]}
    assert layers["response"] == "same"  # the answer is the recorded one: the model was not asked


def test_a_scenario_case_is_played_by_adks_user_simulator_as_synthesize_plays_it(project, monkeypatch):
    """The weather agent is offline; the user simulator (ADK's, on Gemini) reaches the fake server."""
    from fake_gemini import FakeGemini, Reply

    def respond(call) -> Reply:
        said = call.prompt.count("in Tokyo.")  # the agent's answers so far
        return Reply(text="What time is it in Tokyo?" if said < 2 else "Thanks! </finished>")

    server = FakeGemini(respond).start()
    for key, value in server.env.items():
        monkeypatch.setenv(key, value)
    try:
        data = json.loads((project / DATASET).read_bytes())
        data["eval_cases"].append({"eval_case_id": "chat", "user_scenario": {
            "starting_prompt": "What is the weather in Tokyo?", "conversation_plan": "Ask about the weather, then the time, then finish."}})
        (project / DATASET).write_text(json.dumps(data, indent=2))
        config = project / "tests/eval/eval_config.yaml"
        config.write_text(METRICS.replace("[mentions_city, what_it_was_given, breaks, response_quality]", "[what_it_was_given]"))
        code, out, err = run("run", "chat", "--json")
        case = _cases(out)["chat"]
        assert case["status"] == "new", (case, err)
        given = {m["name"]: m for m in case["metrics"]}["what_it_was_given"]
        assert json.loads(given["details"]["explanation"]) == ["agent_data", "eval_case_id", "prompt", "response", "user_scenario"]
        assert run("accept", "chat", "--yes")[0] == 0
        baseline = json.loads((project / "tests/eval/baselines/basic-dataset.json").read_text())["eval_cases"][0]
        turns = baseline["agent_data"]["turns"]
        assert [[e["author"] for e in turn["events"]] for turn in turns][0][:1] == ["user"] and turns[0]["events"][-1]["author"] == "agent"
        assert [t["events"][0]["content"]["parts"][0]["text"] for t in turns] == ["What is the weather in Tokyo?", "What time is it in Tokyo?"]
        assert baseline["responses"][0]["response"]["parts"][0]["text"] == "It is 01:00 in Tokyo."
        assert set(baseline) >= {"eval_case_id", "user_scenario", "agent_data", "responses"}
    finally:
        server.close()


def test_journey_checks_apply_to_dataset_cases(project):
    (project / "tests" / "eval" / "agentdiff-checks.yaml").write_text(
        "eval_sets:\n  basic-dataset.json: {forbidden: [get_current_time]}\ncases:\n  paris_weather: {max_tool_calls: 0}\n")
    code, out, err = run("run", "--json")
    cases = _cases(out)
    assert cases["tokyo_time"]["status"] == "failed" and cases["paris_weather"]["status"] == "failed", err
    names = {m["name"]: m["status"] for m in cases["paris_weather"]["metrics"] if m["name"].startswith("check: ")}
    assert names == {"check: forbidden get_current_time": "passed", "check: max_tool_calls ≤ 0": "failed"}


def test_a_re_recorded_agents_cli_baseline_is_listed_until_signed(project):
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=project, check=True, capture_output=True)

    (project / ".gitignore").write_text(".agentdiff/\n")
    git("init", "-q")
    assert run("accept", "tokyo_time", "--yes")[0] == 0
    git("add", "-A")
    git("commit", "-qm", "baseline")
    prompt = project / "app" / "prompt.md"
    prompt.write_text(prompt.read_text().replace('reply "It is <time> in <city>."', 'reply "<city>: <time>."'))
    assert run("accept", "tokyo_time", "--yes")[0] == 0
    code, out, _ = run("baselines")
    assert "basic-dataset.json::tokyo_time  (✗ not signed off)" in out and "response: turn 1 · response" in out
    assert "files: tests/eval/baselines/basic-dataset.json" in out
    assert run("sign", "tokyo_time")[0] == 0
    code, out, err = run("baselines")
    assert "(✓ signed off)" in out and err == ""  # the sign-off's record beside the dataset is no dataset


def test_cases_without_ids_keep_their_own_baselines_and_an_identical_run_accepts_nothing(project):
    cases = [{"prompt": {"role": "user", "parts": [{"text": f"What is the weather in {city}?"}]}} for city in ("Paris", "Tokyo", "New York")]
    (project / DATASET).write_text(json.dumps({"eval_cases": cases}, indent=2))
    assert run("accept", "case_3", "--yes")[0] == 0
    baseline = json.loads((project / "tests/eval/baselines/basic-dataset.json").read_text())["eval_cases"][0]
    assert baseline["agentdiff_case_key"] == "case_3" and baseline["reference"] == json.loads((project / DATASET).read_text())["eval_cases"][2]["reference"]
    assert run("accept", "case_1", "--yes")[0] == 0
    code, out, _ = run("run", "--json")
    assert {key: case["status"] for key, case in _cases(out).items()} == {"case_1": "passed", "case_2": "new", "case_3": "passed"}
    code, out, _ = run("accept", "case_3", "--yes")
    assert code == 1 and out.startswith("nothing to accept")


def test_a_run_whose_agent_returned_an_error_is_an_error_as_in_eval_generate(project):
    from agentdiff.core.project.dataset_cases import DatasetCaseRef, history
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.run.dataset_case import score_dataset_case
    from agentdiff.core.worker.jobs import RunOutput

    ref = next(r for r in discover([project], project).cases if isinstance(r, DatasetCaseRef) and r.name == "paris_weather")
    out = RunOutput(events=[{"author": "user", "content": {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}},
                            {"author": "weather_desk", "error_code": "SAFETY", "error_message": "blocked"}])
    run_ = score_dataset_case(ref, None, [out])
    assert run_.result.status.value == "error" and run_.result.error == "Agent returned an error: SAFETY: blocked"
    scenario = ref.written.model_copy(update={"prompt": None, "user_scenario": ref.written.user_scenario})
    assert history(scenario, "model") == []  # a case with neither a prompt nor events seeds nothing


def test_cloud_metrics_go_through_googles_eval_sdk_when_a_project_and_credentials_are_set(project, monkeypatch, tmp_path):
    from fake_vertex import FakeVertex, score_of

    (project / "tests/eval/eval_config.yaml").write_text(METRICS.replace(
        "metrics_to_run: [mentions_city, what_it_was_given, breaks, response_quality]",
        "metrics_to_run: [response_quality, final_response_quality]").replace('prompt_template: "Rate {response}"',
                                                                              'prompt_template: "Rate {response}"\n    threshold: 3'))
    fake = FakeVertex().start()
    try:
        for key, value in fake.env(tmp_path).items():
            monkeypatch.setenv(key, value)
        code, out, err = run("run", "--json")
    finally:
        fake.close()
    assert code == 1, err
    assert {(c["project"], c["location"], c["authorization"]) for c in fake.calls} == {("fake-project", "global", "Bearer fake-token")}
    assert len(fake.calls) == 4  # two metrics for each of the two cases, each answered from its own request
    given = {}
    for call in fake.calls:
        (spec,) = call["body"]["metrics"]
        given.setdefault(json.dumps(spec, sort_keys=True), set()).add(score_of(call["body"]))
    specs = {"response_quality": {"llm_based_metric_spec": {"metric_prompt_template": "Rate {response}"}},
             "final_response_quality": {"predefined_metric_spec": {"metric_spec_name": "final_response_quality_v1", "metric_spec_parameters": None}}}
    for name, spec in specs.items():
        scored = {(m["score"], m["details"]["explanation"]) for case in _cases(out).values() for m in case["metrics"] if m["name"] == name}
        assert scored == given[json.dumps(spec, sort_keys=True)] and len(scored) == 2, name
    for case in _cases(out).values():
        metrics = {m["name"]: m for m in case["metrics"]}
        assert metrics["response_quality"]["status"] == ("passed" if metrics["response_quality"]["score"] >= 3 else "failed")
        assert metrics["final_response_quality"]["status"] == "informational"


def test_a_cloud_metric_without_a_project_or_the_sdk_says_what_to_set_and_sends_nothing(monkeypatch, tmp_path):
    import sys

    from agentdiff.core.worker.cloud_metrics import grade_cloud

    request = {"cloud": [{"name": "helpfulness", "entry": {"name": "helpfulness", "prompt_template": "Rate {response}"}}],
               "case": {"eval_case_id": "c", "prompt": {"parts": [{"text": "hi"}]}}}
    for key in ("GOOGLE_CLOUD_PROJECT", "GOOGLE_APPLICATION_CREDENTIALS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))  # no application-default login either
    (reason,) = (r["error_message"] for r in grade_cloud(request).values())
    assert "set GOOGLE_CLOUD_PROJECT" in reason and "application-default login" in reason
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    monkeypatch.setitem(sys.modules, "agentplatform", None)  # the project's environment lacks the eval SDK
    (reason,) = (r["error_message"] for r in grade_cloud(request).values())
    assert "google-cloud-aiplatform[evaluation]" in reason and "uv sync --extra eval" in reason


def test_doctor_says_which_metrics_run_here_and_whether_the_cloud_ones_can(project, monkeypatch, tmp_path):
    for key in ("GOOGLE_CLOUD_PROJECT", "GOOGLE_APPLICATION_CREDENTIALS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
    _, out, _ = run("doctor")
    assert "mentions_city, what_it_was_given, breaks run here" in out
    assert "response_quality need Google's cloud eval service: not evaluated here" in out and "set GOOGLE_CLOUD_PROJECT" in out
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    _, out, _ = run("doctor")
    assert "response_quality run through Google's cloud eval service (Google Cloud is configured" in out


def test_a_transient_metric_failure_is_tried_again_and_an_sdk_result_is_read_as_agents_cli_does(project):
    (project / "tests/eval/eval_config.yaml").write_text("""\
metrics_to_run: [flaky_judge, broken, sdk_result]
custom_metrics:
  - name: sdk_result
    custom_function: |
      from agentplatform import types
      def evaluate(instance):
          return types.EvalCaseMetricResult(metric_name="sdk_result", score=0.5, explanation="as the SDK's type")
  - name: flaky_judge
    custom_function: |
      tries = {}
      def evaluate(instance):
          key = instance["response"]["parts"][0]["text"]
          tries[key] = tries.get(key, 0) + 1
          if tries[key] < 3:
              raise ConnectionError("connection reset by peer")
          return {"score": tries[key]}
  - name: broken
    custom_function: |
      def evaluate(instance):
          raise ValueError("not transient")
""")
    code, out, err = run("run", "--json")
    assert code == 1, err
    for case in _cases(out).values():
        metrics = {m["name"]: m for m in case["metrics"]}
        assert metrics["flaky_judge"]["score"] == 3.0 and metrics["flaky_judge"]["details"]["retried"] == 2
        assert metrics["broken"]["status"] == "not_evaluated" and "not transient" in metrics["broken"]["reason"]
        assert "retried" not in (metrics["broken"]["details"] or {})
        assert (metrics["sdk_result"]["score"], metrics["sdk_result"]["details"]["explanation"]) == (0.5, "as the SDK's type")


JUDGE = """\
from google import genai


def evaluate(instance):
    asked = f"Rate 1-5. Prompt: {instance.get('prompt')} Answer: {instance.get('response')} "
    asked += f"Expected: {instance.get('reference')} Trace: {instance.get('agent_data')}"
    client = genai.Client()
    answer = client.models.generate_content(model="gemini-2.5-flash", contents=asked)
    return {"score": int(answer.text), "explanation": "judged"}
"""


def test_replay_grades_a_local_judge_with_the_answers_accept_recorded_and_calls_no_model(project, monkeypatch):
    from fake_gemini import Reply, fake_gemini

    (project / "tests/eval/eval_config.yaml").write_text(
        "metrics_to_run: [response_quality]\ncustom_metrics:\n  - name: response_quality\n"
        "    custom_function_file: judge.py\n    threshold: 3\n")
    (project / "tests/eval/judge.py").write_text(JUDGE)
    with fake_gemini(lambda call: Reply(text="4"), monkeypatch) as judge:
        def judged(*args: str) -> dict:
            code, out, err = run("run", "tokyo_time", "--json", *args)
            return _cases(out)["tokyo_time"]

        first = judged()
        assert first["status"] == "new" and len(judge.calls) == 1, [m.get("reason") for m in first["metrics"]]
        assert run("accept", "tokyo_time", "--yes")[0] == 0
        entry = json.loads((project / "tests/eval/baselines/basic-dataset.json").read_text())["eval_cases"][0]
        assert list(entry["agentdiff_judge_answers"]) == ["response_quality"]
        # the first accept set the case's reference, which this judge reads: the answer recorded was to another question
        replayed = judged("--mode", "replay")
        metric = {m["name"]: m for m in replayed["metrics"]}["response_quality"]
        assert metric["status"] == "not_evaluated" and "the baseline holds no answer to" in metric["reason"]
        assert len(judge.calls) == 1  # replay asked no model

        again = judged()  # run live once more (a new run with the same trace asks again: its times are no part of the key)
        assert again["status"] == "passed" and len(judge.calls) == 2
        assert run("accept", "tokyo_time", "--yes")[0] == 0  # the same run, with the answers replay needs
        replayed = judged("--mode", "replay")
        metric = {m["name"]: m for m in replayed["metrics"]}["response_quality"]
        assert replayed["status"] == "passed" and (metric["score"], metric["status"]) == (4.0, "passed")
        assert len(judge.calls) == 2
        assert judged()["status"] == "passed" and len(judge.calls) == 2  # live: the judge cache answers the same question

        (project / "tests/eval/judge.py").write_text(JUDGE.replace("Rate 1-5", "Grade 1-5"))
        metric = {m["name"]: m for m in judged("--mode", "replay")["metrics"]}["response_quality"]
        assert metric["status"] == "not_evaluated" and "judge.py:8: its judge was asked something" in metric["reason"]
        assert len(judge.calls) == 2
