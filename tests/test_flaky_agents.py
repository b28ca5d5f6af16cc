"""A real ADK agent whose model is right 70% of the time (the fake Gemini server, seeded), run headless:
`run` says `inconclusive … run k more` and exits 3, the reports carry it, and `--until-confident` spends
model calls only on the case that needs them. Every expected verdict is computed here with scipy."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from scipy import stats

from fake_gemini import Call, FakeGemini, Reply
from test_judged_metrics import AGENT

CHANCES = {"Paris": 1.0, "Rome": 0.7, "Oslo": 0.0}


def seed_with(passes: int, runs: int, chance: float) -> int:
    """A seed whose first `runs` draws hold exactly `passes` below `chance`: a run whose counts are known."""
    def passes_of(seed: int) -> int:
        rng = random.Random(seed)
        return sum(rng.random() < chance for _ in range(runs))

    return next(seed for seed in range(1000) if passes_of(seed) == passes)


class Weather:
    """The fake model: the right city's forecast with each city's chance, else Milan's; calls counted per city."""

    def __init__(self, seed: int) -> None:
        self.lock = threading.Lock()
        self.rng = {city: random.Random(seed if city == "Rome" else 0) for city in CHANCES}
        self.calls = {city: 0 for city in CHANCES}

    def __call__(self, call: Call) -> Reply:
        asked = next((city for city in CHANCES if city in call.prompt), "Paris")
        with self.lock:
            self.calls[asked] += 1
        last = (call.body.get("contents") or [{}])[-1]
        for part in last.get("parts") or []:
            if "functionResponse" in part:
                return Reply(text=f"It is sunny in {part['functionResponse']['response'].get('city', '')}.")
        with self.lock:
            right = self.rng[asked].random() < CHANCES[asked]
        return Reply(function_calls=[{"name": "get_weather", "args": {"city": asked if right else "Milan"}}])


def project(root: Path, minimum: float) -> Path:
    (root / "weather").mkdir(parents=True)
    (root / "weather" / "__init__.py").write_text("from . import agent\n")
    (root / "weather" / "agent.py").write_text(AGENT)
    cases = [{"eval_id": city.lower(), "conversation": [{
        "user_content": {"role": "user", "parts": [{"text": f"Weather in {city}?"}]},
        "final_response": {"role": "model", "parts": [{"text": f"It is sunny in {city}."}]},
        "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": city}}]}}]} for city in CHANCES]
    (root / "weather" / "weather.evalset.json").write_text(json.dumps({"eval_set_id": "weather", "eval_cases": cases}))
    (root / "pyproject.toml").write_text('[project]\nname = "w"\nversion = "0"\n\n[tool.agentdiff]\nnum_runs = 10\n')
    config = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}, "min_pass_rate": minimum}  # ADK ignores the key
    (root / "weather" / "test_config.json").write_text(json.dumps(config))
    return root


def agentdiff(root: Path, server: FakeGemini, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", *args], cwd=root, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **server.env, "AGENTDIFF_NO_COLOR": "1"})


def verdict(passes: int, runs: int, minimum: float, confidence: float) -> str:
    ci = stats.binomtest(passes, runs).proportion_ci(confidence_level=confidence, method="wilson")
    return "passed" if ci.low >= minimum else "failed" if ci.high < minimum else "inconclusive"


@pytest.fixture
def weather(tmp_path):
    model = Weather(seed_with(7, 10, 0.7))
    server = FakeGemini(model).start()
    try:
        yield project(tmp_path, 0.5), server, model
    finally:
        server.close()


def test_a_seventy_percent_agent_is_inconclusive_not_a_coin_flip_and_the_reports_say_so(weather):
    root, server, model = weather
    done = agentdiff(root, server, "run", "weather/weather.evalset.json::rome", "--json", "--report", "junit=out/junit.xml",
                     "--report", "markdown=out/summary.md")
    assert done.returncode == 3, done.stderr  # nothing failed; the one case is not settled
    report = json.loads(done.stdout)
    case = report["cases"][0]
    assert case["status"] == "inconclusive" and report["summary"]["inconclusive"] == 1
    rate = case["pass_rate"]
    assert (rate["passes"], rate["runs"], rate["min_pass_rate"]) == (7, 10, 0.5)
    ci = stats.binomtest(7, 10).proportion_ci(confidence_level=0.95, method="wilson")
    assert rate["interval"] == pytest.approx([ci.low, ci.high], abs=1e-6)
    assert f"run {rate['more_runs']} more to settle it" in case["error"] and rate["more_runs"] > 0
    assert model.calls["Rome"] == 20  # ten runs, two model calls each
    junit = (root / "out" / "junit.xml").read_text()
    assert 'type="inconclusive"' in junit and "7/10 runs passed" in junit
    assert "INCONCLUSIVE" in (root / "out" / "summary.md").read_text()

    table = agentdiff(root, server, "run", "weather/weather.evalset.json::rome")
    assert "≈ inconclusive  weather/weather.evalset.json::rome" in table.stdout
    assert "1 case: 0 passed, 0 failed, 0 error, 0 not evaluated, 0 flaky, 1 inconclusive" in table.stdout


def test_until_confident_spends_model_calls_only_on_the_case_that_needs_them(weather):
    root, server, model = weather
    done = agentdiff(root, server, "run", "--json", "--until-confident", "--max-runs", "20")
    report = json.loads(done.stdout)
    cases = {case["eval_id"]: case for case in report["cases"]}
    assert "until confident: 1 inconclusive case(s): at most 10 more runs" in done.stderr, done.stderr
    assert "none is set here" not in done.stderr  # its test_config.json sets the minimum
    assert cases["paris"]["status"] == "passed" and cases["oslo"]["status"] == "failed"
    assert model.calls["Paris"] == 20 and model.calls["Oslo"] == 20  # settled at the first look: ten runs each
    rome = cases["rome"]["pass_rate"]
    assert rome["runs"] == 20 and model.calls["Rome"] == 2 * rome["runs"]
    assert rome["confidence"] == pytest.approx(1 - 0.05 / 2)  # two looks (10 and 20 runs), each held stricter
    assert cases["rome"]["status"] == verdict(rome["passes"], rome["runs"], 0.5, rome["confidence"])
    assert done.returncode == 1  # Oslo fails whatever Rome settles to
