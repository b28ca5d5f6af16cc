"""Judged metrics (all six of ADK 2.13's but the user-simulator one, which needs a simulated
conversation) score exactly as ADK 2.13 scores them: ADK's AgentEvaluator and `agentdiff run` run
the same real ADK agent (the Gemini model class, through google-genai's HTTP client) against the same
fake Gemini server, which also answers as the judge, deciding by content. Both must send the judge
the same prompts and end with the same scores and statuses; a second run is answered from the judge
cache."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from adk_reference import run_agent_evaluator
from fake_gemini import Call, FakeGemini, Reply

AGENT = '''from google.adk.agents import Agent


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"city": city, "forecast": "sunny"}


root_agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer questions about the weather.",
                   tools=[get_weather])
'''

RUBRICS = [
    {"rubric_id": "names_city", "rubric_content": {"text_property": "The response names the city."}},
    {"rubric_id": "short", "rubric_content": {"text_property": "The response is one sentence."}},
]


def _turn(question: str, answer: str, city: str | None = None) -> dict:
    turn = {"user_content": {"role": "user", "parts": [{"text": question}]},
            "final_response": {"role": "model", "parts": [{"text": answer}]}}
    if city:
        turn["intermediate_data"] = {"tool_uses": [{"name": "get_weather", "args": {"city": city}}]}
    return turn


EVAL_SET = {"eval_set_id": "weather_set", "eval_cases": [
    {"eval_id": "paris", "conversation": [_turn("Weather in Paris?", "It is sunny in Paris.", "Paris")]},
    {"eval_id": "rome", "conversation": [_turn("Weather in Rome?", "It is sunny in Rome.", "Rome"), _turn("And tomorrow?", "Sunny again in Rome.")],
     "rubrics": [{"rubric_id": "friendly", "rubric_content": {"text_property": "The response is friendly."}}]},
    {"eval_id": "chat", "conversation_scenario": {"starting_prompt": "Weather in Paris?",
                                                  "conversation_plan": "Ask about the weather in Paris, then about tomorrow, then finish."}},
]}


class Script:
    """The fake server's answers, decided by what each request says. A judge asked the same prompt
    several times (num_samples) answers in turn from a fixed cycle, so both tools see the same answers."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, call: Call) -> Reply:
        prompt = call.prompt
        if "You are a Simulated User designed to test an AI Agent" in prompt:  # ADK's user simulator
            said = prompt.count("It is sunny in") + prompt.count("Sunny again")  # the agent's answers so far
            return Reply(text="And tomorrow?" if said < 2 else "Thanks! </finished>")
        if '"is_valid"' in prompt:  # per_turn_user_simulator_quality_v1
            verdict = "invalid" if "</finished>" in prompt.rsplit("Generated User Response", 1)[-1] and "tomorrow" not in prompt else "valid"
            return Reply(text=f'{{"reasoning": "checked.", "is_valid": "{verdict}"}}')
        if '"is_the_agent_response_valid"' in prompt:
            with self.lock:
                self.asked[prompt] += 1
                sample = self.asked[prompt]
            valid = "tomorrow" not in prompt or sample % 2 == 0  # the second turn splits 1 valid : 2 invalid
            label = "valid" if valid else "invalid"
            return Reply(text=f'{{"reasoning": "sample {sample}: the response is {label}.", "is_the_agent_response_valid": "{label}"}}')
        if "please segment the response into sentences" in prompt:  # hallucinations_v1, step 1
            response = prompt.split("**Response Begin**", 1)[1].split("**Response End**", 1)[0].strip()
            return Reply(text="\n".join(f"<sentence>{s.strip()}</sentence>" for s in re.split(r"(?<=[.!?]) ", response) if s.strip()))
        if "**Sentences Begin**" in prompt:  # hallucinations_v1, step 2
            sentences = re.findall(r"<sentence>(.*?)</sentence>", prompt.split("**Sentences Begin**", 1)[1], re.DOTALL)
            return Reply(text="\n".join(
                f"sentence: {s}\nlabel: {'supported' if 'sunny in' in s.lower() else 'unsupported'}\nrationale: checked.\n"
                "supporting_excerpt: null\ncontradicting_excerpt: null" for s in sentences))
        if "Property:" in prompt and "[id: " in prompt:
            final = prompt.rsplit("<final_answer>", 1)[-1] if "<final_answer>" in prompt else prompt
            lines = []
            for rubric_id, text in re.findall(r"\[id: (\S+)\] (.*)", prompt):
                yes = {"names_city": "sunny in" in final.lower() or "Rome" in final, "short": True, "friendly": "!" in final}.get(rubric_id, True)
                lines += [f"Property: {text}", f"Rationale: checked {rubric_id}.", f"Verdict: {'yes' if yes else 'no'}", ""]
            return Reply(text="\n".join(lines))
        return _agent_reply(call)


def _agent_reply(call: Call) -> Reply:
    last = (call.body.get("contents") or [{}])[-1]
    for part in last.get("parts") or []:
        if "functionResponse" in part:
            city = part["functionResponse"]["response"].get("city", "")
            return Reply(text=f"It is sunny in {city}.")
    for city in ("Paris", "Rome"):
        if city in call.last_user_text:
            return Reply(function_calls=[{"name": "get_weather", "args": {"city": city}}])
    return Reply(text="Sunny again!")


def _criteria(samples: int) -> dict:
    judge = {"judge_model": "gemini-2.5-flash", "num_samples": samples}
    tool_rubrics = [{"rubric_id": "looks_up", "rubric_content": {"text_property": "The agent calls get_weather for the city asked about."}}]
    return {
        "final_response_match_v2": {"threshold": 0.6, "judge_model_options": judge},
        "rubric_based_final_response_quality_v1": {"threshold": 0.7, "judge_model_options": judge, "rubrics": RUBRICS},
        "rubric_based_tool_use_quality_v1": {"threshold": 0.5, "judge_model_options": judge, "rubrics": tool_rubrics},
        "rubric_based_multi_turn_trajectory_quality_v1": {"threshold": 0.5, "judge_model_options": judge, "rubrics": RUBRICS},
        "hallucinations_v1": {"threshold": 0.6, "judge_model_options": judge},
        "per_turn_user_simulator_quality_v1": {"threshold": 0.5, "judge_model_options": judge},
    }


def _judge_prompts(calls: list[Call]) -> list[str]:
    """The judge prompts sent, in a stable order, with the function-call ids ADK draws at random."""
    marks = ('"is_the_agent_response_valid"', "Property:", "segment the response into sentences", "**Sentences Begin**", '"is_valid"')
    prompts = [c.prompt for c in calls if any(mark in c.prompt for mark in marks)]
    return sorted(re.sub(r"adk-[0-9a-f-]{36}", "adk-<id>", prompt) for prompt in prompts)


_STATUS = {1: "passed", 2: "failed", 3: "not_evaluated", 4: "informational"}


@pytest.mark.parametrize("samples", [1, 3])
def test_judged_metrics_score_as_adk_scores_them(tmp_path, monkeypatch, samples):
    script = Script()
    server = FakeGemini(script).start()
    try:
        for key, value in server.env.items():
            monkeypatch.setenv(key, value)
        project = tmp_path / "project"
        (project / "weather").mkdir(parents=True)
        (project / "weather" / "__init__.py").write_text("from . import agent\n")
        (project / "weather" / "agent.py").write_text(AGENT)
        (project / "weather" / "weather.evalset.json").write_text(json.dumps(EVAL_SET, indent=1))
        (project / "weather" / "test_config.json").write_text(json.dumps({"criteria": _criteria(samples)}, indent=1))

        monkeypatch.syspath_prepend(str(project))
        adk_file = run_agent_evaluator("weather", EVAL_SET, _criteria(samples), project, "weather", num_runs=1)
        adk_prompts = _judge_prompts(server.calls)
        theirs = {case["eval_id"]: case for case in json.loads(adk_file.read_text())["eval_case_results"]}

        scored = subprocess.run([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", "score", str(adk_file), "--json"],
                                cwd=project, capture_output=True, text=True, timeout=120)
        for case in json.loads(scored.stdout)["cases"]:  # `score` keeps ADK's judged scores (the judge is not asked again)
            stored = {m["metric_name"]: (m["score"], _STATUS[m["eval_status"]]) for m in theirs[case["eval_id"]]["overall_eval_metric_results"]}
            assert {m["name"]: (m["score"], m["status"]) for m in case["metrics"] if m["name"] in _criteria(samples)} == \
                {name: value for name, value in stored.items() if name in _criteria(samples)}, case["eval_id"]

        script.asked.clear()
        server.calls.clear()
        ours = _agentdiff_run(project, "--no-judge-cache")  # every judge call made, as ADK makes them
        mine_prompts = _judge_prompts(server.calls)
        assert mine_prompts == adk_prompts, _first_difference(adk_prompts, mine_prompts)  # the same prompts, as many times
        assert len(adk_prompts) > (3 + 3) * samples  # FRM and each rubric metric: 3 turns × samples; and the others

        for eval_id, case in theirs.items():
            mine = {m["name"]: m for m in ours[eval_id]["metrics"]}
            for result in case["overall_eval_metric_results"]:
                name = result["metric_name"]
                if name not in _criteria(samples):
                    continue
                assert mine[name]["score"] == result["score"], (eval_id, name)
                assert mine[name]["status"] == _STATUS[result["eval_status"]], (eval_id, name)
            per_turn = [[m["score"] for m in turn["eval_metric_results"] if m["metric_name"] == "final_response_match_v2"][0]
                        for turn in case["eval_metric_result_per_invocation"]]
            assert mine["final_response_match_v2"]["per_invocation"] == per_turn, eval_id
        rome = {m["name"]: m for m in ours["rome"]["metrics"]}
        assert rome["final_response_match_v2"]["score"] == 0.5  # the split turn is invalid by majority
        judged = rome["final_response_match_v2"]["details"]
        assert [s["score"] for s in judged["per_invocation"][1]["samples"]].count(0.0) == (2 if samples == 3 else 1)
        rubric = rome["rubric_based_final_response_quality_v1"]
        rationales = {r["rubric_id"]: r["rationale"] for r in rubric["details"]["per_invocation"][0]["rubric_scores"]}
        assert rationales == {"names_city": "checked names_city.", "short": "checked short."}  # a case rubric without a type is dropped, as in ADK

        if samples == 1:  # the judge cache (how many samples a judge takes does not change how it caches), on one pool
            from agentdiff.core.worker.pool import WorkerPool

            pool = WorkerPool(jobs=4, timeout=60)
            run_again = _runs_on(pool, project)
            script.asked.clear()
            filled = run_again()  # fills the judge cache (cases that ask the judge the same share one answer)
            server.calls.clear()
            again = run_again()
            assert _judge_prompts(server.calls) == []  # the judge cache answered every judge call
            def judged_scores(run: dict) -> dict:
                return {k: [m["score"] for m in c["metrics"] if m["name"] in _criteria(samples)] for k, c in run.items()}

            assert judged_scores(again) == judged_scores(filled) == judged_scores(ours)
            # entries truncated, garbled, of another shape or empty are misses: asked again and replaced
            entries = sorted((project / ".agentdiff" / "judge-cache").glob("*/*.json"))
            for n, entry in enumerate(entries):
                entry.write_text(["", entry.read_text()[:40], "\x00garbage", "[]", '{"content": null}'][n % 5], encoding="utf-8")
            script.asked.clear()
            server.calls.clear()
            mended = run_again()
            assert judged_scores(mended) == judged_scores(ours) and _judge_prompts(server.calls)
            server.calls.clear()
            assert judged_scores(run_again()) == judged_scores(ours) and _judge_prompts(server.calls) == []
            pool.close()
        if samples == 3:  # `diff` shows the judge's verdicts and reasons turn by turn, samples split
            script.asked.clear()  # the judge's samples cycle as for the first run
            done = subprocess.run([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", "diff", "rome", "--run"],
                                  cwd=project, capture_output=True, text=True, timeout=120, env=os.environ.copy())
            assert "\njudge:\n" in done.stdout, (done.stdout, done.stderr)
            judge = done.stdout.split("\njudge:\n", 1)[1]
            assert "final_response_match_v2 turn 2: 0.0 (1/3 valid) · judge: sample " in judge, done.stdout
    finally:
        server.close()


def _first_difference(theirs: list[str], ours: list[str]) -> str:
    import difflib

    only_theirs = list((Counter(theirs) - Counter(ours)).elements())
    only_ours = list((Counter(ours) - Counter(theirs)).elements())
    said = f"ADK sent {len(theirs)} judge prompts, agentdiff {len(ours)}; {len(only_theirs)} only ADK's, {len(only_ours)} only agentdiff's\n"
    if only_theirs and only_ours:
        said += "".join(difflib.unified_diff(only_theirs[0].splitlines(True), only_ours[0].splitlines(True), "ADK", "agentdiff", n=1))
    else:
        said += (only_theirs or only_ours or [""])[0]
    return said[:4000]


def _runs_on(pool, project: Path):
    """Runs of every case on `pool` (warm: ADK's evaluators imported once), with the judge cache `run`
    uses, each giving the cases as `run --json` does."""
    import asyncio

    from agentdiff.core.project.discovery import discover
    from agentdiff.core.reports.json_report import render_json
    from agentdiff.core.run.options import RunOptions
    from agentdiff.core.run.runner import run_cases

    def run_again() -> dict:
        refs = discover([project], project).cases
        options = RunOptions(timeout=60, judge_cache=project / ".agentdiff" / "judge-cache")

        async def every() -> list:
            return [run.result async for run in run_cases(refs, pool, options, project)]

        return {case["eval_id"]: case for case in json.loads(render_json(asyncio.run(every())))["cases"]}

    return run_again


def _agentdiff_run(project: Path, *flags: str) -> dict:
    done = subprocess.run([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", "run", "--json", "--jobs", "4", "--timeout", "60", *flags],
                          cwd=project, capture_output=True, text=True, timeout=180, env=os.environ.copy())
    assert done.returncode in (0, 1), done.stderr
    return {case["eval_id"]: case for case in json.loads(done.stdout)["cases"]}
