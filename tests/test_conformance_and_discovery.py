"""Conformance case folders and discovery: pairing rules, not-recorded cases, errors beside good files."""

from __future__ import annotations

import json
from pathlib import Path

from agentdiff.core.formats.conformance import load_conformance_case
from agentdiff.core.project.discovery import ConformanceCaseRef, EvalCaseRef, discover

SPEC = "description: Turns on a light\nagent: home\ninitial_state:\n  mode: eco\nuser_messages:\n  - text: turn on the light\n"
RECORDINGS = """recordings:
- user_message_index: 0
  agent_name: home
  llm_recording:
    llm_request:
      model: demo
      contents:
      - role: user
        parts:
        - text: turn on the light
    llm_responses:
    - content:
        role: model
        parts:
        - function_call:
            name: set_light
            args:
              enabled: true
- user_message_index: 0
  agent_name: home
  tool_recording:
    tool_call:
      name: set_light
      args:
        enabled: true
    tool_response:
      name: set_light
      response:
        result: ok
"""
SESSION = "id: s1\napp_name: home\nuser_id: adk_conformance_test_user\nstate:\n  mode: eco\nevents: []\n"


def make_case(root: Path, category="lights", name="turn_on", files=None) -> Path:
    folder = root / category / name
    folder.mkdir(parents=True)
    files = {"spec.yaml": SPEC, "generated-recordings.yaml": RECORDINGS, "generated-session.yaml": SESSION} if files is None else files
    for file, text in files.items():
        (folder / file).write_text(text)
    return folder


def test_a_recorded_case_loads_with_its_mode(tmp_path):
    folder = make_case(tmp_path)
    case, errors = load_conformance_case(folder, "lights/turn_on")
    assert errors == []
    assert (case.category, case.name, case.spec.agent) == ("lights", "turn_on", "home")
    assert sorted(case.baselines) == ["none"]
    recordings = case.baselines["none"].recordings.recordings
    assert recordings[1].tool_recording.tool_call.args == {"enabled": True}
    assert case.baselines["none"].session.state == {"mode": "eco"}


def test_a_spec_without_recordings_is_not_recorded_not_an_error(tmp_path):
    case, errors = load_conformance_case(make_case(tmp_path, files={"spec.yaml": SPEC}), "x")
    assert errors == [] and not case.recorded


def test_recordings_without_their_session_file_is_an_error(tmp_path):
    folder = make_case(tmp_path, files={"spec.yaml": SPEC, "generated-recordings-sse.yaml": RECORDINGS})
    case, [error] = load_conformance_case(folder, "lights/turn_on")
    assert error.file == "lights/turn_on/generated-recordings-sse.yaml"
    assert "generated-session-sse.yaml is missing" in error.message
    assert case is not None and not case.recorded


def test_unknown_spec_key_is_a_located_error(tmp_path):
    folder = make_case(tmp_path, files={"spec.yaml": SPEC + "timeout: 3\n"})
    case, [error] = load_conformance_case(folder, "c/n")
    assert case is None
    assert (error.path, error.line) == ("timeout", 7)


def test_bad_yaml_reports_its_line(tmp_path):
    folder = make_case(tmp_path, files={"spec.yaml": "description: x\nagent: [unclosed\n"})
    _, [error] = load_conformance_case(folder, "c/n")
    assert error.message.startswith("invalid YAML") and error.line == 3


def test_yaml_that_would_build_python_objects_is_refused(tmp_path):
    folder = make_case(tmp_path, files={"spec.yaml": "description: !!python/object/apply:os.system ['true']\nagent: a\n"})
    case, [error] = load_conformance_case(folder, "c/n")
    assert case is None and "invalid YAML" in error.message


def test_unknown_key_in_a_recording_is_refused(tmp_path):
    folder = make_case(tmp_path, files={"spec.yaml": SPEC, "generated-recordings.yaml": RECORDINGS.replace("  agent_name: home\n  tool", "  agent_name: home\n  note: x\n  tool"), "generated-session.yaml": SESSION})
    _, errors = load_conformance_case(folder, "c/n")
    assert any(e.path == "recordings[1].note" for e in errors)


def test_discovery_finds_every_kind_and_one_bad_file_hides_nothing(tmp_path):
    make_case(tmp_path / "conformance")
    make_case(tmp_path / "conformance", name="not_yet", files={"spec.yaml": SPEC})
    evals = tmp_path / "agent" / "eval"
    evals.mkdir(parents=True)
    good = {"eval_set_id": "s", "eval_cases": [{"eval_id": "b", "conversation": []}, {"eval_id": "a", "conversation": []}]}
    (evals / "good.evalset.json").write_text(json.dumps(good))
    (evals / "broken.test.json").write_text("{")
    (evals / "test_config.json").write_text('{"criteria": {"response_match_score": 0.5}}')
    (tmp_path / ".adk").mkdir()
    (tmp_path / ".adk" / "hidden.evalset.json").write_text("{")
    found = discover([tmp_path], root=tmp_path)
    assert [ref.id for ref in found.cases] == [
        "agent/eval/good.evalset.json::b", "agent/eval/good.evalset.json::a",
        "conformance/lights/not_yet", "conformance/lights/turn_on",
    ]
    assert [e.file for e in found.errors] == ["agent/eval/broken.test.json"]
    eval_ref = found.cases[0]
    assert isinstance(eval_ref, EvalCaseRef) and eval_ref.config.config.criteria == {"response_match_score": 0.5}
    assert isinstance(found.find("conformance/lights/turn_on"), ConformanceCaseRef)


def test_a_missing_path_is_an_error(tmp_path):
    found = discover([tmp_path / "nope"], root=tmp_path)
    assert found.errors[0].message == "no such file or folder"
