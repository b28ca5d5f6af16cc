"""agents-cli itself as the oracle, on a project `agents-cli create` makes at test time, its Gemini
model reached through the fake Gemini server (the project's `.env` pointed there, as a user would):

* `agents-cli eval generate` (against ADK's API server, run on the project's interpreter) and
  `agentdiff run --report agents-cli` write the same traces: the same cases, agents, events (tool
  calls, arguments, responses) and responses, ids and times aside;
* `agents-cli eval grade` grades agentdiff's traces with the scaffold's own local judge metric
  (`response_quality.py`, through google-genai) and scores each case as agentdiff scored it. The fake
  judge's score is a digest of the judge prompt, which holds the whole `instance`: equal scores mean
  agentdiff gave the metric the very instance agents-cli gives it;
* a `prompt_template` metric and a built-in one, sent to a fake of Google's cloud eval service, get
  the same scores from agentdiff (through the eval SDK in its worker) and from agents-cli: both sent
  the same requests.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from fake_gemini import FakeGemini, Reply
from fake_vertex import FakeVertex
from test_cli import run

pytestmark = pytest.mark.adk

JUDGE = "expert QA evaluator"  # the scaffold's judge prompt (tests/eval/response_quality.py)
CLOUD_METRIC = """\
  - name: helpfulness
    prompt_template: "Score 1-5 how helpful {response} is as an answer to {prompt}."
"""
# agents-cli's eval client (agentplatform) takes no endpoint from the environment: this points the
# oracle's one at the fake eval service, as GOOGLE_VERTEX_BASE_URL points google-genai's.
ORACLE_ENDPOINT = """\
import os
from google.genai import client as _client

_made = _client.Client._get_api_client


def _get_api_client(**kwargs):
    if kwargs.get("vertexai"):
        options = kwargs.get("http_options") or _client.HttpOptions()
        options.base_url = options.base_url or os.environ["GOOGLE_VERTEX_BASE_URL"]
        kwargs["http_options"] = options
    return _made(**kwargs)


_client.Client._get_api_client = staticmethod(_get_api_client)
"""


def respond(call) -> Reply:
    if JUDGE in call.prompt:
        digest = hashlib.sha256(call.prompt.encode()).hexdigest()
        return Reply(text=json.dumps({"score": 1 + int(digest, 16) % 5, "explanation": f"prompt {digest[:12]}"}))
    if any("functionResponse" in part for content in call.body.get("contents", []) for part in content.get("parts", [])):
        return Reply(text="It's 60 degrees and foggy in San Francisco.")
    text = call.last_user_text.lower()
    if "weather" in text:
        return Reply(function_calls=[{"name": "get_weather", "args": {"query": "San Francisco"}}])
    if "capital" in text:
        return Reply(text="The capital of France is Paris.")
    return Reply(text="I can look up the weather and the time.")


@pytest.fixture
def created(agents_cli, tmp_path, monkeypatch):
    """A project made by `agents-cli create demo -y -d none`, its model pointed at the fake Gemini."""
    done = subprocess.run([str(agents_cli), "create", "demo", "-y", "-d", "none"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    project = tmp_path / "demo"
    config = project / "tests" / "eval" / "eval_config.yaml"  # both of the scaffold's local metrics: its judge file and its inline function
    config.write_text(config.read_text().replace("  - custom_response_quality\n", "  - custom_response_quality\n  - agent_turn_count\n"
                                                 "  - helpfulness\n  - final_response_quality\n", 1) + CLOUD_METRIC)
    server = FakeGemini(respond).start()
    vertex = FakeVertex().start()
    (tmp_path / "gcloud").mkdir()
    env = {**server.env, **vertex.env(tmp_path / "gcloud"), "GOOGLE_GENAI_USE_ENTERPRISE": "false"}
    (project / ".env").write_text("".join(f"{key}={value}\n" for key, value in env.items()))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.chdir(project)
    yield project, server, vertex
    server.close()
    vertex.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _api_server(project: Path) -> tuple[subprocess.Popen, str]:
    """ADK's API server on the project (what agents-cli starts with `adk api_server`), on agentdiff's
    interpreter, which is this project's here."""
    port = _free_port()
    adk = Path(sys.executable).parent / "adk"
    server = subprocess.Popen([str(adk), "api_server", "--host", "127.0.0.1", "--port", str(port), "."], cwd=project,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/list-apps", timeout=2)
            return server, url
        except OSError:
            assert server.poll() is None, "adk api_server exited"
            time.sleep(0.3)
    server.kill()
    pytest.fail("adk api_server did not start")


def _normal(case: dict) -> dict:
    text = json.dumps(case, sort_keys=True)
    text = re.sub(r'"event_time": "[^"]*"', '"event_time": "T"', text)
    return json.loads(re.sub(r"adk-[0-9a-f-]{36}", "adk-ID", text))


def test_agentdiff_writes_the_traces_agents_cli_writes_and_grades_them_as_it_does(created, agents_cli, tmp_path):
    project, fake, vertex = created
    code, out, err = run("run", "--json", "--report", "agents-cli=artifacts/traces")
    assert code == 1, err  # every case is new
    ours_file = next((project / "artifacts" / "traces").glob("traces_*.json"))
    ours = json.loads(ours_file.read_text())["eval_cases"]
    scores = {case["eval_id"]: {m["name"]: m for m in case["metrics"]} for case in json.loads(out)["cases"]}

    server, url = _api_server(project)
    try:
        done = subprocess.run([str(agents_cli), "eval", "generate", "--url", url, "--app-name", "app", "-o", str(tmp_path / "generated") + "/"],
                              cwd=project, capture_output=True, text=True, timeout=300)
    finally:
        server.terminate()
        server.wait(10)
    assert done.returncode == 0, done.stdout + done.stderr
    theirs = json.loads(next((tmp_path / "generated").glob("*.json")).read_text())["eval_cases"]
    assert [c["eval_case_id"] for c in ours] == [c["eval_case_id"] for c in theirs] == ["greeting", "weather_query", "capital_lookup"]
    for mine, agents_cli_case in zip(ours, theirs):
        assert list(mine) == list(agents_cli_case)  # the same keys, in the order agents-cli writes them
        assert _normal(mine) == _normal(agents_cli_case)
    calls = [p["function_call"] for e in ours[1]["agent_data"]["turns"][0]["events"] for p in e["content"]["parts"] if "function_call" in p]
    assert [(c["name"], c["args"]) for c in calls] == [("get_weather", {"query": "San Francisco"})]

    (tmp_path / "oracle_site").mkdir()
    (tmp_path / "oracle_site" / "sitecustomize.py").write_text(ORACLE_ENDPOINT)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "oracle_site")}
    ours_sent = len(vertex.calls)
    done = subprocess.run([str(agents_cli), "eval", "grade", "--traces", str(ours_file), "--output", str(tmp_path / "grades")],
                          cwd=project, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    graded = json.loads(next((tmp_path / "grades").glob("results_*.json")).read_text())
    for result in graded["eval_case_results"]:
        case_id = ours[result["eval_case_index"]]["eval_case_id"]
        for metric in ("custom_response_quality", "agent_turn_count", "helpfulness", "final_response_quality"):
            named = result["response_candidate_results"][0]["metric_results"]
            theirs_metric = named.get(metric) or named[f"{metric}_v1"]  # a built-in is keyed by its version
            mine = scores[case_id][metric]
            assert theirs_metric["error_message"] is None
            assert (mine["score"], (mine["details"] or {}).get("explanation")) == (theirs_metric["score"], theirs_metric["explanation"]), (case_id, metric)
    assert len(graded["eval_case_results"]) == 3
    assert ours_sent == 6 and len(vertex.calls) == 12  # the cloud metrics of three cases from each: the fake scored the same requests
    assert sorted(json.dumps(c["body"], sort_keys=True) for c in vertex.calls[:6]) == sorted(json.dumps(c["body"], sort_keys=True) for c in vertex.calls[6:])
    judged = [call for call in fake.calls if JUDGE in call.prompt]
    assert len(judged) == 6  # three from agentdiff, three from agents-cli: the judge cache is not in between here
