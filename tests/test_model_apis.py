"""Live runs through a real model API (google-genai's HTTP client, to the fake Gemini server):
rate limits and transient errors are retried, honouring Retry-After; concurrency adapts to a quota;
a call that fails for good, or never answers, is named."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

from agentdiff.core.worker.model_calls import Limiter, backoff, retry_after, transient

from fake_gemini import Call, FakeGemini, Reply
from test_judged_metrics import AGENT, _agent_reply


def _project(root: Path, cases: int) -> Path:
    (root / "weather").mkdir(parents=True)
    (root / "weather" / "__init__.py").write_text("from . import agent\n")
    (root / "weather" / "agent.py").write_text(AGENT)
    turn = {"user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            "final_response": {"role": "model", "parts": [{"text": "It is sunny in Paris."}]},
            "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]}}
    eval_set = {"eval_set_id": "weather", "eval_cases": [{"eval_id": f"c{i}", "conversation": [turn]} for i in range(cases)]}
    (root / "weather" / "weather.evalset.json").write_text(json.dumps(eval_set))
    return root


def _run(project: Path, server: FakeGemini, *flags: str) -> tuple[int, dict, str]:
    done = subprocess.run([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", "run", "--json", *flags],
                          cwd=project, capture_output=True, text=True, timeout=300, env={**os.environ, **server.env})
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


def test_rate_limits_and_transient_errors_are_retried_after_the_servers_retry_after(tmp_path):
    lock, seen = threading.Lock(), []

    def respond(call: Call) -> Reply:
        with lock:
            seen.append(call)
            count = len(seen)
        if count <= 2:
            return Reply(status=429, retry_after=0.2)
        if count == 3:
            return Reply(status=503, retry_after=0.1)
        return _agent_reply(call)

    server = FakeGemini(respond).start()
    try:
        code, report, err = _run(_project(tmp_path, 1), server)
        assert code == 0, err
        assert report["cases"][0]["status"] == "passed"
        assert len(seen) == 3 + 2  # three refusals, then the tool call and the answer
        assert seen[1].started - seen[0].started >= 0.2 and seen[2].started - seen[1].started >= 0.2  # Retry-After honoured
    finally:
        server.close()


def test_a_quota_on_concurrent_calls_finds_its_level_and_every_case_finishes(tmp_path):
    limit, state = 4, {"in_flight": 0, "refused": 0}
    lock = threading.Lock()

    def respond(call: Call) -> Reply:
        with lock:
            if server.in_flight > limit:
                state["refused"] += 1
                return Reply(status=429, retry_after=0.05)
        return Reply(**{**_agent_reply(call).__dict__, "delay": 0.05})

    server = FakeGemini(respond).start()
    try:
        code, report, err = _run(_project(tmp_path, 40), server, "--jobs", "64")
        statuses = [case["status"] for case in report.get("cases", [])]
        assert code == 0 and statuses == ["passed"] * 40, err
        assert state["refused"] > 0  # the quota was hit, and absorbed
    finally:
        server.close()


def test_a_call_that_keeps_failing_or_never_answers_is_named(tmp_path):
    server = FakeGemini(lambda call: Reply(status=503, retry_after=0.01)).start()
    try:
        code, report, _ = _run(_project(tmp_path / "a", 1), server)
        (case,) = report["cases"]
        assert code == 1 and case["status"] == "error"
        assert "model call 1 of turn 1 (weather, gemini-2.5-flash) failed after 6 attempts; the last: 503 UNAVAILABLE" in case["error"]
    finally:
        server.close()
    server = FakeGemini(lambda call: Reply(text="late", delay=30)).start()
    try:
        code, report, _ = _run(_project(tmp_path / "b", 1), server, "--timeout", "2")
        (case,) = report["cases"]
        assert case["status"] == "error" and case["error"] == (
            "timed out after 2 s (the run was stopped, waiting for model call 1 of turn 1 (weather, gemini-2.5-flash))")
    finally:
        server.close()
    server = FakeGemini(lambda call: Reply(status=503, retry_after=1.0)).start()  # retried until the run's time is up
    try:
        code, report, _ = _run(_project(tmp_path / "c", 1), server, "--timeout", "3")
        (case,) = report["cases"]
        assert case["status"] == "error" and ", attempt " in case["error"], case["error"]
        assert "); the attempts before failed: 503 UNAVAILABLE" in case["error"], case["error"]  # why it is still waiting
    finally:
        server.close()


def test_what_counts_as_transient_and_how_long_to_wait():
    refused = SimpleNamespace(code=429, status="RESOURCE_EXHAUSTED", response=SimpleNamespace(headers={"retry-after": "7"}), details=None)
    assert transient(refused) == "429 RESOURCE_EXHAUSTED" and retry_after(refused) == 7.0
    info = SimpleNamespace(code=429, status="", response=None, details={"error": {"details": [{"retryDelay": "2.5s"}]}})
    assert retry_after(info) == 2.5
    assert transient(SimpleNamespace(code=400, status="INVALID_ARGUMENT")) is None
    assert transient(ConnectionResetError()) == "ConnectionResetError"
    ClientOSError = type("ClientOSError", (Exception,), {})
    assert transient(type("ClientConnectorError", (ClientOSError,), {})()) == "ClientConnectorError"  # aiohttp's, by its base
    assert 7.0 <= backoff(1, 7.0) <= 10.5 and 0 <= backoff(3, None) <= 4


def test_the_limit_halves_on_a_429_once_per_burst_and_grows_back():
    async def go() -> None:
        limiter = Limiter()
        limiter.in_flight = 16
        limiter.throttled()
        limiter.throttled()  # the same burst
        assert limiter.limit == 8
        for _ in range(8):
            limiter.succeeded()
        assert 8.9 < limiter.limit < 9.1

    asyncio.run(go())


def test_a_judge_that_never_answers_is_named_in_the_metrics_reason(tmp_path):
    def respond(call: Call) -> Reply:
        if '"is_the_agent_response_valid"' in call.prompt:
            return Reply(text="late", delay=30)
        return _agent_reply(call)

    project = _project(tmp_path, 1)
    (project / "weather" / "test_config.json").write_text(json.dumps({"criteria": {"final_response_match_v2": 0.5}}))
    server = FakeGemini(respond).start()
    try:
        _, report, err = _run(project, server, "--timeout", "3")
        (metric,) = [m for m in report["cases"][0]["metrics"] if m["name"] == "final_response_match_v2"]
        assert metric["status"] == "not_evaluated", err
        assert metric["reason"] == ("the judge could not run: timed out after 3 s (the run was stopped, "
                                    "waiting for the judge (gemini-2.5-flash; 0 judge calls answered))")
    finally:
        server.close()
