"""'Same' in the request and session layers agrees with ADK's replay verdict.

A case is recorded with ADK's own RecordingsPlugin; its requests and events are then perturbed,
and for every perturbation our verdict is compared with ADK's `_verify_llm_request_match` and
`_compare_event`: on the files as written, and on the canonical dumps agent runs produce.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from agentdiff.core.diff.request_normalize import requests_equal
from agentdiff.core.diff.session import normalize_event
from conftest import REF_AGENTS
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.adk

SPEC = {
    "description": "weather, then a lookup",
    "agent": "ref_agent",
    "initial_state": {"units": "metric"},
    "user_messages": [
        {"text": 'call get_weather {"city": "Paris"}\nsay The weather in Paris is sunny.'},
        {"text": 'call lookup {"key": "a", "count": 2}\ncall noop {}\nsay Done: found a.'},
    ],
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    from adk_conformance import record_with_adk

    sys.path.insert(0, str(REF_AGENTS))
    from ref_agent.agent import root_agent

    case = tmp_path_factory.mktemp("conformance") / "weather" / "two_turns"
    case.mkdir(parents=True)
    (case / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    record_with_adk(root_agent, case)
    return case


@pytest.fixture(scope="module")
def requests(recorded) -> list[dict]:
    data = yaml.safe_load((recorded / "generated-recordings.yaml").read_text())
    return [r["llm_recording"]["llm_request"] for r in data["recordings"] if r.get("llm_recording")]


@pytest.fixture(scope="module")
def events(recorded) -> list[dict]:
    return yaml.safe_load((recorded / "generated-session.yaml").read_text())["events"]


def adk_requests_match(recorded: dict, current: dict) -> bool:
    from google.adk.cli.conformance._conformance_test_google_llm import (
        ReplayVerificationError,
        _ConformanceTestGemini,
    )
    from google.adk.models.llm_request import LlmRequest

    stub = SimpleNamespace(_user_message_index=0, _agent_name="ref_agent")
    try:
        _ConformanceTestGemini._verify_llm_request_match(stub, LlmRequest.model_validate(recorded), LlmRequest.model_validate(current), 0)
    except ReplayVerificationError:
        return False
    return True


def canonical_request(data: dict) -> dict:
    from google.adk.models.llm_request import LlmRequest

    return LlmRequest.model_validate(data).model_dump(mode="json", exclude_none=True, exclude_defaults=True, exclude={"config": {"http_options"}})


def declarations(request: dict) -> list[dict]:
    return request["config"]["tools"][0]["function_declarations"]


def _set(path, value):
    def apply(request):
        node = request
        for part in path[:-1]:
            node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
        node[path[-1]] = value
    return apply


def _schema(request):
    decl = declarations(request)[0]
    return decl["parameters_json_schema"] if "parameters_json_schema" in decl else decl["parameters"]


def _rename_parameters(request):
    decl = declarations(request)[0]
    decl["parameters"] = decl.pop("parameters_json_schema")


def _nullable_recorded(request):
    _schema(request)["properties"]["city"] = {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "City"}


def _nullable_current(request):
    _schema(request)["properties"]["city"] = {"type": "string", "nullable": True}


def _defs_recorded(request):
    schema = _schema(request)
    schema["$defs"] = {"City": {"type": "string", "title": "City"}}
    schema["properties"]["city"] = {"$ref": "#/$defs/City"}


def _defs_current(request):
    _schema(request)["properties"]["city"] = {"type": "string"}


def _transfer(description):
    def apply(request):
        declarations(request).append(
            {"name": "transfer_to_agent", "description": description, "parameters_json_schema": {"type": "object", "properties": {"agent_name": {"type": "string"}}}}
        )
    return apply


def _relayed(framed: bool):
    begin, end = "<<<BEGIN_QUOTED_AGENT_CONTENT>>>", "<<<END_QUOTED_AGENT_CONTENT>>>"
    preamble = "For context:"
    body = f"[planner] said:\n{begin}\nBook the flight.\n{end}" if framed else "[planner] said: Book the flight."

    def apply(request):
        request["contents"].insert(0, {"role": "user", "parts": [{"text": preamble}, {"text": body}]})
    return apply


def _user_text(text):
    def apply(request):
        request["contents"][0]["parts"][0]["text"] = text
    return apply


# (name, change to the recorded side, change to the current side)
PERTURBATIONS = [
    ("instruction word", None, lambda r: r["config"].update(system_instruction=r["config"]["system_instruction"].replace("script", "plan"))),
    ("instruction trailing space", None, lambda r: r["config"].update(system_instruction=r["config"]["system_instruction"] + " ")),
    ("tool description padding", None, lambda r: declarations(r)[0].update(description="  " + declarations(r)[0]["description"] + "\n")),
    ("tool description text", None, lambda r: declarations(r)[0].update(description="The weather somewhere.")),
    ("schema title", None, lambda r: _schema(r).update(title="Other")),
    ("schema property description", None, lambda r: _schema(r)["properties"]["city"].update(description="A city name")),
    ("schema default", None, lambda r: _schema(r)["properties"]["city"].update(default="Paris")),
    ("schema type case", None, lambda r: _schema(r)["properties"]["city"].update(type="STRING")),
    ("schema type change", None, lambda r: _schema(r)["properties"]["city"].update(type="integer")),
    ("schema required", None, lambda r: _schema(r).update(required=[])),
    ("parameters spelling", None, _rename_parameters),
    ("nullable anyOf", _nullable_recorded, _nullable_current),
    ("$defs inlined", _defs_recorded, _defs_current),
    ("transfer description", _transfer("Transfer to a sub agent."), _transfer("Hand the question over.")),
    ("relayed framing", _relayed(True), _relayed(False)),
    ("labels", None, _set(("config", "labels", "adk_agent_name"), "other")),
    ("http options", None, _set(("config", "http_options"), {"timeout": 5})),
    ("live connect config", None, lambda r: r.pop("live_connect_config", None)),
    ("model name", None, _set(("model",), "gemini-2.5-pro")),
    ("temperature", None, _set(("config", "temperature"), 0.2)),
    ("user text", None, _user_text("call noop {}")),
    ("user role", None, lambda r: r["contents"][0].update(role="model")),
    ("extra content", None, lambda r: r["contents"].append({"role": "user", "parts": [{"text": "more"}]})),
]


@pytest.mark.parametrize("name, on_recorded, on_current", PERTURBATIONS, ids=[p[0] for p in PERTURBATIONS])
def test_request_verdict_agrees_with_adk_replay(requests, name, on_recorded, on_current):
    recorded, current = copy.deepcopy(requests[0]), copy.deepcopy(requests[0])
    if on_recorded:
        on_recorded(recorded)
    on_current(current)
    adk = adk_requests_match(recorded, current)
    assert requests_equal(recorded, current) == adk, name
    assert requests_equal(canonical_request(recorded), canonical_request(current)) == adk, name


def test_the_perturbations_cover_both_verdicts(requests):
    verdicts = set()
    for _, on_recorded, on_current in PERTURBATIONS:
        recorded, current = copy.deepcopy(requests[0]), copy.deepcopy(requests[0])
        if on_recorded:
            on_recorded(recorded)
        on_current(current)
        verdicts.add(adk_requests_match(recorded, current))
    assert verdicts == {True, False}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(range(len(PERTURBATIONS))), min_size=1, max_size=4, unique=True), st.integers(0, 10))
def test_combined_perturbations_agree_with_adk_replay(requests, chosen, which):
    base = requests[which % len(requests)]
    recorded, current = copy.deepcopy(base), copy.deepcopy(base)
    if "function_declarations" not in json.dumps(base):
        return
    for index in chosen:
        _, on_recorded, on_current = PERTURBATIONS[index]
        if on_recorded:
            on_recorded(recorded)
        on_current(current)
    assert requests_equal(recorded, current) == adk_requests_match(recorded, current)


def test_every_recorded_request_equals_itself_after_a_canonical_round_trip(requests):
    for request in requests:
        assert requests_equal(request, canonical_request(request))
        assert adk_requests_match(request, canonical_request(request))


# --- events -------------------------------------------------------------------------------------


def adk_events_match(recorded: dict, current: dict) -> bool:
    from google.adk.cli.conformance._replay_validators import _compare_event
    from google.adk.events.event import Event

    return _compare_event(Event.model_validate(current), Event.model_validate(recorded), 0).success


def canonical_event(data: dict) -> dict:
    from google.adk.events.event import Event

    return Event.model_validate(data).model_dump(mode="json", exclude_none=True, exclude_defaults=True)


def _first_call(event):
    return next(p["function_call"] for p in event["content"]["parts"] if "function_call" in p)


EVENT_PERTURBATIONS = [
    ("id", lambda e: e.update(id="other")),
    ("timestamp", lambda e: e.update(timestamp=1.5)),
    ("invocation id", lambda e: e.update(invocation_id="e-other")),
    ("node info", lambda e: e.update(node_info={"path": "x/y"})),
    ("function call id", lambda e: _first_call(e).update(id="adk-other")),
    ("function call args", lambda e: _first_call(e)["args"].update(city="Rome")),
    ("replay bookkeeping in state delta", lambda e: e.setdefault("actions", {}).setdefault("state_delta", {}).update(_adk_replay_config={"dir": "x"})),
    ("state delta", lambda e: e.setdefault("actions", {}).setdefault("state_delta", {}).update(visited=True)),
    ("author", lambda e: e.update(author="someone")),
    ("custom metadata", lambda e: e.update(custom_metadata={"k": 1})),
    ("long running ids", lambda e: e.update(long_running_tool_ids=["a"])),
    ("usage", lambda e: e.update(usage_metadata={"prompt_token_count": 1})),
]


@pytest.mark.parametrize("name, change", EVENT_PERTURBATIONS, ids=[p[0] for p in EVENT_PERTURBATIONS])
def test_event_verdict_agrees_with_adk_replay(events, name, change):
    recorded = next(e for e in events if any("function_call" in p for p in (e.get("content") or {}).get("parts", [])))
    current = copy.deepcopy(recorded)
    change(current)
    adk = adk_events_match(recorded, current)
    assert (normalize_event(recorded) == normalize_event(current)) == adk, name
    assert (normalize_event(canonical_event(recorded)) == normalize_event(canonical_event(current))) == adk, name
