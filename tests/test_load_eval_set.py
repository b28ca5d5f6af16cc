"""Loading EvalSet files: ADK's shapes, casing rules, and bad input as located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentdiff.core.formats.eval_set import IntermediateData, InvocationEvents
from agentdiff.core.formats.eval_set_files import load_eval_set
from agentdiff.core.formats.json_text import dumps_like

CASE = {
    "eval_id": "c1",
    "conversation": [
        {
            "invocation_id": "i1",
            "user_content": {"role": "user", "parts": [{"text": "hi"}]},
            "final_response": {"role": "model", "parts": [{"text": "hello"}]},
            "intermediate_data": {"tool_uses": [{"name": "f", "args": {"a": 1}}]},
        }
    ],
}


def write(tmp_path: Path, data, name="set.evalset.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def test_loads_a_minimal_eval_set(tmp_path):
    loaded, errors = load_eval_set(write(tmp_path, {"eval_set_id": "s", "eval_cases": [CASE]}))
    assert errors == []
    case = loaded.eval_set.eval_cases[0]
    assert case.eval_id == "c1"
    assert [c.name for c in case.conversation[0].tool_calls()] == ["f"]


def test_nested_keys_may_be_camel_case(tmp_path):
    camel = {
        "evalId": "c1",
        "conversation": [{"userContent": {"parts": [{"text": "hi"}]}, "intermediateData": {"toolUses": [{"name": "f"}]}}],
        "sessionInput": {"appName": "app", "userId": "u"},
    }
    loaded, errors = load_eval_set(write(tmp_path, {"eval_set_id": "s", "eval_cases": [camel]}))
    assert errors == []
    assert loaded.eval_set.eval_cases[0].session_input.app_name == "app"


def test_top_level_keys_are_snake_case_only(tmp_path):
    path = write(tmp_path, {"evalSetId": "s", "evalCases": [CASE]})
    loaded, errors = load_eval_set(path)
    assert loaded is None
    assert "snake_case only" in errors[0].message
    assert any("eval_set_id" in e.message for e in errors)


def test_unknown_top_level_keys_are_ignored_and_unknown_case_keys_kept(tmp_path):
    loaded, errors = load_eval_set(write(tmp_path, {"eval_set_id": "s", "eval_cases": [{**CASE, "team_note": "x"}], "extra": 1}))
    assert errors == []
    assert loaded.eval_set.eval_cases[0].model_extra == {"team_note": "x"}


def test_unknown_key_inside_a_part_is_an_error_with_its_line(tmp_path):
    case = json.loads(json.dumps(CASE))
    case["conversation"][0]["user_content"]["parts"][0]["colour"] = "red"
    path = write(tmp_path, {"eval_set_id": "s", "eval_cases": [case]})
    loaded, errors = load_eval_set(path)
    assert loaded is None
    [error] = errors
    assert error.path == "eval_cases[0].conversation[0].user_content.parts[0].colour"
    assert "unknown key 'colour'" in error.message
    assert path.read_text().splitlines()[error.line - 1].strip().startswith('"colour"')


def test_missing_required_key_points_at_its_parent(tmp_path):
    case = json.loads(json.dumps(CASE))
    del case["conversation"][0]["user_content"]
    path = write(tmp_path, {"eval_set_id": "s", "eval_cases": [case]})
    _, [error] = load_eval_set(path)
    assert error.message == "missing required key 'user_content'"
    assert error.path == "eval_cases[0].conversation[0]"
    assert error.line is not None


def test_mixed_intermediate_data_shapes_are_refused(tmp_path):
    case = json.loads(json.dumps(CASE))
    case["conversation"][0]["intermediate_data"] = {"tool_uses": [], "invocation_events": []}
    _, errors = load_eval_set(write(tmp_path, {"eval_set_id": "s", "eval_cases": [case]}))
    assert any("mixes the static form" in e.message for e in errors)


@pytest.mark.parametrize(
    "data, shape",
    [({}, IntermediateData), ({"tool_uses": []}, IntermediateData), ({"invocation_events": []}, InvocationEvents),
     ({"invocationEvents": []}, InvocationEvents)],
)
def test_intermediate_data_shape_is_told_by_its_keys(tmp_path, data, shape):
    case = json.loads(json.dumps(CASE))
    case["conversation"][0]["intermediate_data"] = data
    loaded, errors = load_eval_set(write(tmp_path, {"eval_set_id": "s", "eval_cases": [case]}))
    assert errors == []
    assert isinstance(loaded.eval_set.eval_cases[0].conversation[0].intermediate_data, shape)


def test_conversation_and_scenario_are_exclusive(tmp_path):
    case = {**CASE, "conversation_scenario": {"starting_prompt": "a", "conversation_plan": "b"}}
    _, errors = load_eval_set(write(tmp_path, {"eval_set_id": "s", "eval_cases": [case]}))
    assert any("exactly one of" in e.message for e in errors)


def test_malformed_json_reports_line_and_column(tmp_path):
    path = write(tmp_path, '{\n  "eval_set_id": "s",\n  "eval_cases": [\n    {"eval_id": }\n  ]\n}')
    loaded, [error] = load_eval_set(path)
    assert loaded is None
    assert (error.line, error.column) == (4, 17)
    assert error.message.startswith("invalid JSON")


def test_invalid_utf8_is_an_error(tmp_path):
    path = tmp_path / "bad.evalset.json"
    path.write_bytes(b'{"eval_set_id": "\xff"}')
    _, [error] = load_eval_set(path)
    assert "UTF-8" in error.message


def test_duplicate_eval_ids_are_refused(tmp_path):
    _, errors = load_eval_set(write(tmp_path, {"eval_set_id": "s", "eval_cases": [CASE, CASE]}))
    assert "duplicate eval_id 'c1'" in errors[0].message


def test_legacy_row_list_is_one_case_named_by_its_path(tmp_path):
    rows = [
        {"query": "turn on the light", "expected_tool_use": [{"tool_name": "set", "tool_input": {"on": True}, "mock_tool_output": "x"}],
         "reference": "done", "expected_intermediate_agent_responses": [{"author": "sub", "text": "working"}]},
        {"query": "thanks"},
    ]
    path = write(tmp_path, rows, "lights.test.json")
    loaded, errors = load_eval_set(path, "agents/lights.test.json")
    assert errors == []
    assert loaded.legacy == "rows"
    [case] = loaded.eval_set.eval_cases
    assert case.eval_id == "agents/lights.test.json"
    first, second = case.conversation
    assert first.tool_calls()[0].args == {"on": True}
    assert first.final_response.text() == "done"
    assert first.intermediate_data.intermediate_responses[0][0] == "sub"
    assert second.final_response.text() == ""  # reference defaults to ""


def test_legacy_named_case_list(tmp_path):
    data = [{"name": "n1", "data": [{"query": "q"}], "initial_session": {"state": {"k": 1}, "app_name": "app", "user_id": "u"}}]
    loaded, errors = load_eval_set(write(tmp_path, data, "named.test.json"))
    assert errors == []
    assert loaded.legacy == "named"
    case = loaded.eval_set.eval_cases[0]
    assert (case.eval_id, case.session_input.state) == ("n1", {"k": 1})


def test_legacy_row_without_query_is_an_error(tmp_path):
    _, [error] = load_eval_set(write(tmp_path, [{"reference": "x"}], "bad.test.json"))
    assert error.path == "[0]"
    assert "query" in error.message


@pytest.mark.parametrize("rows, path, message", [
    ([{"query": "q", "expected_tool_use": ["get_weather"]}], "[0].expected_tool_use[0]",
     "each `expected_tool_use` entry must be an object with `tool_name` and `tool_input` (ADK cannot read this row)"),
    ([{"query": "q", "expected_tool_use": [{"tool_name": "f"}]}], "[0].expected_tool_use[0]",
     "each `expected_tool_use` entry must be an object with `tool_name` and `tool_input` (ADK cannot read this row)"),
    ([{"query": "q", "expected_tool_use": "f"}], "[0].expected_tool_use", "`expected_tool_use` must be a list"),
    ([{"query": "q", "expected_intermediate_agent_responses": [{"text": "x"}]}], "[0].expected_intermediate_agent_responses[0]",
     "each `expected_intermediate_agent_responses` entry must be an object with `author` and `text` (ADK cannot read this row)"),
])
def test_a_legacy_row_adk_cannot_read_is_an_error_not_a_shorter_trajectory(tmp_path, rows, path, message):
    _, [error] = load_eval_set(write(tmp_path, rows, "bad.test.json"))
    assert (error.path, error.message) == (path, message)
    assert error.line is not None


@pytest.mark.adk
def test_files_written_by_adk_load_and_round_trip_byte_for_byte(tmp_path):
    pytest.importorskip("google.adk.evaluation.local_eval_sets_manager")
    from google.adk.evaluation.eval_case import EvalCase
    from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager

    manager = LocalEvalSetsManager(agents_dir=str(tmp_path))
    manager.create_eval_set("app", "set_one")
    manager.add_eval_case("app", "set_one", EvalCase.model_validate({**CASE, "session_input": {"app_name": "app", "user_id": "u", "state": {"n": 1.5}}}))
    path = tmp_path / "app" / "set_one.evalset.json"
    text = path.read_text(encoding="utf-8")
    loaded, errors = load_eval_set(path)
    assert errors == []
    assert loaded.eval_set.eval_cases[0].session_input.state == {"n": 1.5}
    assert dumps_like(loaded.raw, text) == text


@pytest.mark.adk
def test_adk_migrated_legacy_file_loads_to_the_same_case(tmp_path):
    pytest.importorskip("google.adk.evaluation.agent_evaluator")
    from google.adk.evaluation.agent_evaluator import AgentEvaluator

    rows = [{"query": "q1", "expected_tool_use": [{"tool_name": "f", "tool_input": {"a": 1}}], "reference": "r1"}]
    old = write(tmp_path, rows, "old.test.json")
    new = tmp_path / "new.evalset.json"
    AgentEvaluator.migrate_eval_data_to_new_schema(str(old), str(new))
    legacy, errors = load_eval_set(old, str(old))
    assert errors == []
    migrated, errors = load_eval_set(new)
    assert errors == []
    ours, theirs = legacy.eval_set.eval_cases[0], migrated.eval_set.eval_cases[0]
    assert ours.eval_id == theirs.eval_id == str(old)
    for a, b in zip(ours.conversation, theirs.conversation, strict=True):
        assert a.user_content == b.user_content
        assert a.final_response == b.final_response
        assert a.tool_calls() == b.tool_calls()
    assert dumps_like(migrated.raw, new.read_text()) == new.read_text()


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_an_empty_file_says_it_is_empty(tmp_path, text):
    path = tmp_path / "eval1.evalset.json"
    path.write_text(text)
    loaded, [error] = load_eval_set(path)
    assert loaded is None and (error.line, error.message) == (1, "the file is empty, where JSON was expected")
