"""Every divergence knows the file and line of its expected value, in JSON and YAML alike."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from agentdiff.core.diff.case import diff_case
from agentdiff.core.project.discovery import discover
from agentdiff.core.run.expected import load_baseline
from agentdiff.core.traces.model import ToolCall


def line_of(path: Path, needle: str, occurrence: int = 0) -> int:
    return [i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line][occurrence]


EVAL_SET = """\
{
  "eval_set_id": "orders",
  "eval_cases": [
    {
      "eval_id": "status",
      "conversation": [
        {
          "userContent": {"role": "user", "parts": [{"text": "Where is A1?"}]},
          "finalResponse": {"role": "model", "parts": [{"text": "Order A1 has shipped."}]},
          "intermediateData": {
            "toolUses": [
              {"name": "get_order_status",
               "args": {"order_id": "A1"}}
            ]
          }
        }
      ]
    }
  ]
}
"""


def only_case(tmp_path: Path):
    (ref,) = discover([tmp_path], tmp_path).cases
    baseline = load_baseline(ref)
    return ref, baseline, baseline.trace.turns[0]


def test_json_locations_follow_the_spelling_in_the_file(tmp_path):
    path = tmp_path / "orders.evalset.json"
    path.write_text(EVAL_SET)
    ref, baseline, turn = only_case(tmp_path)
    changed_call = turn.tool_calls[0].model_copy(update={"args": {"order_id": "a1"}})
    actual = baseline.trace.model_copy(
        update={"turns": (turn.model_copy(update={"tool_calls": (changed_call,), "final_response": "Order a1 shipped."}),)}
    )
    diff = diff_case(baseline.trace, actual, baseline.criteria, ref.id, baseline.sources)
    tool, response = diff.divergences
    assert (tool.source.file, tool.source.line) == ("orders.evalset.json", line_of(path, '"order_id": "A1"'))
    assert tool.source.path == "eval_cases[0].conversation[0].intermediateData.toolUses[0].args.order_id"
    assert (response.source.line, response.source.path) == (line_of(path, '"finalResponse"'), "eval_cases[0].conversation[0].finalResponse")


def test_an_extra_call_points_at_the_call_before_it(tmp_path):
    path = tmp_path / "orders.evalset.json"
    path.write_text(EVAL_SET)
    ref, baseline, turn = only_case(tmp_path)
    extra = ToolCall(name="refund", args={"order_id": "A1"}, seq=9)
    actual = baseline.trace.model_copy(update={"turns": (turn.model_copy(update={"tool_calls": turn.tool_calls + (extra,)}),)})
    (divergence,) = diff_case(baseline.trace, actual, baseline.criteria, ref.id, baseline.sources).divergences
    assert divergence.kind == "inserted"
    assert divergence.source.line == line_of(path, '{"name": "get_order_status"')


def test_legacy_rows_are_located_in_their_own_shape(tmp_path):
    path = tmp_path / "old.test.json"
    path.write_text(json.dumps([{"query": "hi", "expected_tool_use": [{"tool_name": "f", "tool_input": {"x": 1}}], "reference": "hello"}], indent=2))
    ref, baseline, turn = only_case(tmp_path)
    actual = baseline.trace.model_copy(update={"turns": (turn.model_copy(update={"tool_calls": (turn.tool_calls[0].model_copy(update={"args": {"x": 2}}),)}),)})
    (divergence,) = diff_case(baseline.trace, actual, baseline.criteria, ref.id, baseline.sources).divergences
    assert divergence.source.path == "[0].expected_tool_use[0].tool_input.x"
    assert divergence.source.line == line_of(path, '"x": 1')


def write_conformance_case(root: Path) -> Path:
    case = root / "orders" / "status"
    case.mkdir(parents=True)
    (case / "spec.yaml").write_text("description: status\nagent: support\nuser_messages:\n  - text: Where is A1?\n")
    (case / "generated-recordings.yaml").write_text(
        textwrap.dedent(
            """\
            recordings:
              - user_message_index: 0
                agent_name: support
                llm_recording:
                  llm_request:
                    model: gemini-2.5-flash
                    contents:
                      - role: user
                        parts:
                          - text: Where is A1?
                    config:
                      system_instruction: |-
                        You help customers with their orders.
                        Be polite and precise.
                  llm_responses:
                    - content:
                        role: model
                        parts:
                          - function_call:
                              name: get_order_status
                              args:
                                order_id: A1
              - user_message_index: 0
                agent_name: support
                tool_recording:
                  tool_call:
                    name: get_order_status
                    args:
                      order_id: A1
                  tool_response:
                    name: get_order_status
                    response:
                      status: shipped
            """
        )
    )
    (case / "generated-session.yaml").write_text(
        textwrap.dedent(
            """\
            id: s1
            app_name: support
            user_id: u
            state:
              last_order: A1
            events:
              - author: user
                content:
                  role: user
                  parts:
                    - text: Where is A1?
              - author: support
                content:
                  role: model
                  parts:
                    - text: Order A1 has shipped.
            """
        )
    )
    return case


def test_yaml_recordings_and_sessions_are_located(tmp_path):
    case = write_conformance_case(tmp_path)
    ref, baseline, turn = only_case(tmp_path)
    assert turn.final_response == "Order A1 has shipped."
    exchange = turn.llm[0]
    request = json.loads(json.dumps(exchange.request))
    request["config"]["system_instruction"] = "You help customers with their orders.\nBe brief and precise."
    call = turn.tool_calls[0].model_copy(update={"args": {"order_id": "a1"}})
    actual = baseline.trace.model_copy(
        update={
            "turns": (turn.model_copy(update={"llm": (exchange.model_copy(update={"request": request}),), "tool_calls": (call,)}),),
            "session": baseline.trace.session.model_copy(update={"state": {"last_order": "a1"}}),
        }
    )
    diff = diff_case(baseline.trace, actual, baseline.criteria, ref.id, baseline.sources)
    request_d, tool_d, state_d = diff.divergences
    recordings = case / "generated-recordings.yaml"
    assert request_d.source.file == "orders/status/generated-recordings.yaml"
    assert request_d.source.line == line_of(recordings, "system_instruction:")
    assert tool_d.source.line == line_of(recordings, "order_id: A1", occurrence=-1)  # the tool recording's args
    assert state_d.source.file == "orders/status/generated-session.yaml"
    assert state_d.source.line == line_of(case / "generated-session.yaml", "last_order")
    assert diff.first_divergence is request_d
