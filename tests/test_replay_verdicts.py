"""Replay verdicts agree with ADK's own replay (`adk conformance test`'s ReplayPlugin and validators),
on a case recorded by ADK's RecordingsPlugin, for agent variants that should and should not pass;
and what `agentdiff record` writes, ADK's replay accepts."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import uuid
from pathlib import Path

import pytest
import yaml
from agentdiff.core.baselines.record import record_case
from agentdiff.core.project.discovery import discover
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.runner import run_case
from agentdiff.core.scoring.results import CaseStatus

pytestmark = pytest.mark.adk

AGENT = '''
import json
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.tool_context import ToolContext
from google.genai import types


def get_weather(city: str, tool_context: ToolContext) -> str:
    """The weather in a city."""
    return "sunny"


def noop() -> str:
    """Do nothing."""
    return "ok"


class ScriptedModel(BaseLlm):
    model: str = "scripted-model"

    async def generate_content_async(self, llm_request, stream=False):
        text = next(c.parts[0].text for c in reversed(llm_request.contents) if c.role == "user" and c.parts and c.parts[0].text)
        answered = any(p.function_response for p in llm_request.contents[-1].parts or [])
        lines = [line.split(" ", 2) for line in text.splitlines()]
        calls = [types.Part(function_call=types.FunctionCall(name=l[1], args=json.loads(l[2]) if len(l) > 2 else {})) for l in lines if l[0] == "call"]
        if calls and not answered:
            yield LlmResponse(content=types.Content(role="model", parts=calls))
        else:
            said = " ".join(" ".join(l[1:]) for l in lines if l[0] == "say")
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=said)]))


root_agent = LlmAgent(name="ref_agent", model=ScriptedModel(), instruction="Follow the script.", tools=[get_weather, noop])
'''

SPEC = {
    "description": "weather, then a no-op",
    "agent": "ref_agent",
    "initial_state": {"units": "metric"},
    "user_messages": [
        {"text": 'call get_weather {"city": "Paris"}\nsay It is sunny in Paris.'},
        {"text": "call noop\nsay Nothing to do."},
    ],
}

VARIANTS = {
    "unchanged": [],
    "instruction edited": [('instruction="Follow the script."', 'instruction="Follow the script carefully."')],
    "model name changed": [('model: str = "scripted-model"', 'model: str = "scripted-model-2"')],
    "tool docstring changed": [('"""The weather in a city."""', '"""Today\'s weather in a city."""')],
    "tool docstring padded": [('"""The weather in a city."""', '"""   The weather in a city.   """')],
    "tool parameter added": [("def get_weather(city: str,", "def get_weather(city: str, units: str = 'metric', *,")],
    "tool returns something else": [('return "sunny"', 'return "rainy"')],
    "tool writes state": [('return "sunny"', 'tool_context.state["asked"] = city\n    return "sunny"')],
    "tool raises": [('return "sunny"', 'raise RuntimeError("weather service down")')],
    "tool removed": [("tools=[get_weather, noop]", "tools=[get_weather]")],
}


def write_agent(folder: Path, changes) -> Path:
    source = AGENT
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    (folder / "ref_agent").mkdir(parents=True)
    (folder / "ref_agent" / "agent.py").write_text(source)
    return folder


def load_agent(folder: Path):
    spec = importlib.util.spec_from_file_location(f"variant_{uuid.uuid4().hex}", folder / "ref_agent" / "agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.root_agent


@pytest.fixture(scope="module")
def recorded_case(tmp_path_factory) -> Path:
    from adk_conformance import record_with_adk

    root = tmp_path_factory.mktemp("replay")
    case = root / "cases" / "weather" / "two_turns"
    case.mkdir(parents=True)
    (case / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    base = write_agent(root / "base", [])
    logging.disable(logging.CRITICAL)
    try:
        record_with_adk(load_agent(base), case)
    finally:
        logging.disable(logging.NOTSET)
    return case


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_replay_verdict_agrees_with_adk(variant, recorded_case, tmp_path, worker_pool):
    from adk_conformance import replay_with_adk

    agents = write_agent(tmp_path / "agents", VARIANTS[variant])
    logging.disable(logging.CRITICAL)
    try:
        adk_passed, adk_message = replay_with_adk(load_agent(agents), recorded_case)
    finally:
        logging.disable(logging.NOTSET)
    root = recorded_case.parents[2]
    (ref,) = discover([recorded_case], root).cases
    run = asyncio.run(run_case(ref, worker_pool, RunOptions(agents_dirs=(agents,)), root))
    assert (run.result.status is CaseStatus.PASSED) == adk_passed, (variant, adk_message, run.result)
    if not adk_passed:
        assert run.diff.first_divergence is not None or run.result.error


def test_the_variants_cover_both_verdicts():
    assert {"unchanged", "tool returns something else", "tool docstring padded"} < set(VARIANTS)
    assert {"instruction edited", "tool writes state"} < set(VARIANTS)


def test_an_edited_instruction_is_shown_where_it_changed(recorded_case, tmp_path, worker_pool):
    agents = write_agent(tmp_path / "agents", VARIANTS["instruction edited"])
    root = recorded_case.parents[2]
    (ref,) = discover([recorded_case], root).cases
    run = asyncio.run(run_case(ref, worker_pool, RunOptions(agents_dirs=(agents,)), root))
    first = run.diff.first_divergence
    assert (first.layer, first.turn, first.path) == ("request", 0, "config.system_instruction")
    assert first.summary == 'turn 1 · request · ref_agent call 1 config.system_instruction line 1: + "carefully"'
    assert first.source.file.endswith("generated-recordings.yaml") and first.source.line
    # every model call of both turns shows it: the replay went on past the first difference
    assert {(d.turn, d.index) for d in run.diff.divergences if d.layer == "request"} == {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_state_written_by_a_tool_shows_in_the_session_layer(recorded_case, tmp_path, worker_pool):
    agents = write_agent(tmp_path / "agents", VARIANTS["tool writes state"])
    root = recorded_case.parents[2]
    (ref,) = discover([recorded_case], root).cases
    run = asyncio.run(run_case(ref, worker_pool, RunOptions(agents_dirs=(agents,)), root))
    assert run.result.status is CaseStatus.FAILED
    assert "session · state.asked extra \"Paris\"" in [d.summary for d in run.diff.divergences]


def test_run_tools_diffs_the_real_results_against_the_recorded_ones(recorded_case, tmp_path, worker_pool):
    agents = write_agent(tmp_path / "agents", VARIANTS["tool returns something else"])
    root = recorded_case.parents[2]
    (ref,) = discover([recorded_case], root).cases
    run = asyncio.run(run_case(ref, worker_pool, RunOptions(agents_dirs=(agents,), run_tools=True), root))
    assert run.result.status is CaseStatus.PASSED  # as ADK: the recorded result was served
    (divergence,) = [d for d in run.diff.divergences if d.layer == "tool_calls"]
    assert divergence.kind == "response" and not divergence.counts
    assert divergence.summary == 'turn 1 · tool_calls · get_weather response.result "sunny" → "rainy"'


@pytest.mark.parametrize("mode", ["none", "sse"])
def test_what_agentdiff_records_adk_replays(mode, tmp_path, worker_pool):
    from adk_conformance import replay_with_adk

    agents = write_agent(tmp_path / "agents", [])
    case = tmp_path / "cases" / "weather" / "two_turns"
    case.mkdir(parents=True)
    (case / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    spec_before = (case / "spec.yaml").read_bytes()
    (ref,) = discover([case], tmp_path).cases
    outcome = asyncio.run(record_case(ref, worker_pool, RunOptions(agents_dirs=(agents,), streaming=mode), tmp_path))
    assert outcome.error is None
    suffix = "-sse" if mode == "sse" else ""
    assert sorted(Path(p).name for p in outcome.written) == ["agentdiff-record.json", f"generated-recordings{suffix}.yaml", f"generated-session{suffix}.yaml"]
    assert (case / "spec.yaml").read_bytes() == spec_before
    logging.disable(logging.CRITICAL)
    try:
        assert replay_with_adk(load_agent(agents), case, mode) == (True, "")
    finally:
        logging.disable(logging.NOTSET)
    (ref,) = discover([case], tmp_path).cases
    run = asyncio.run(run_case(ref, worker_pool, RunOptions(agents_dirs=(agents,)), tmp_path))
    assert run.result.status is CaseStatus.PASSED and run.diff.same
