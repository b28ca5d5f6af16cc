"""`case_check` accepts and refuses what `EvalCase` does: every field of rich cases, each replaced,
removed, doubled under its camelCase key, or joined by an unknown key, is judged by both."""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

import pytest
from agentdiff.core.formats.case_check import case_facts, check_case
from agentdiff.core.formats.eval_cases import read_compact
from agentdiff.core.formats.eval_set import EvalCase
from pydantic import ValidationError

PART = {"text": "hello", "thought": False}
CALL = {"id": "c1", "name": "lookup", "args": {"q": "x"}}
RESPONSE = {"id": "c1", "name": "lookup", "response": {"ok": True}}
USAGE = {"prompt_token_count": 3, "candidatesTokenCount": 4, "custom_count": 1}

BASES: list[dict[str, Any]] = [
    {  # the static form, every field of a turn
        "eval_id": "static", "creation_timestamp": 1.5, "rubrics": [{"rubric_id": "r", "rubric_content": {"text_property": "t"}}],
        "session_input": {"app_name": "app", "user_id": "u", "state": {"k": 1}, "extra_key": "kept"},
        "final_session_state": {"k": 2}, "unknown_case_key": [1, 2],
        "conversation": [{
            "invocation_id": "i1", "user_content": {"role": "user", "parts": [PART]},
            "final_response": {"role": "model", "parts": [{"text": "done"}, {"function_call": CALL}]},
            "intermediate_data": {"tool_uses": [CALL], "tool_responses": [RESPONSE], "intermediate_responses": [["sub", [PART]]]},
            "creation_timestamp": 2, "duration": 0.5, "rubrics": None, "app_details": {"a": 1},
        }],
    },
    {  # the event form, camelCase keys
        "evalId": "events", "sessionInput": {"appName": "app", "userId": "u"},
        "conversation": [{
            "userContent": {"parts": [{"text": "hi"}]},
            "intermediateData": {"invocationEvents": [{"author": "agent", "content": {"parts": [{"functionResponse": RESPONSE}]},
                                                      "usageMetadata": USAGE, "modelVersion": "m", "dropped": 1}]},
        }],
    },
    {  # a scenario
        "eval_id": "scenario", "conversation_scenario": {"starting_prompt": "hi", "conversation_plan": "ask", "user_persona": {"p": 1}},
    },
]

PALETTE: list[Any] = [None, "", "x", "1.5", "true", "yes", 0, 1, 2, 1.0, 1.5, -1, 10**30, True, False, [], {}, [{}], [None],
                      {"text": "a"}, ["a", []], [["a", []]], [{"text": "a"}], {"parts": []}]


def _paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, path + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, path + (index,))


def _at(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def _variants(base: dict[str, Any]) -> Iterator[Any]:
    for path in list(_paths(base)):
        if not path:
            continue
        parent, last = path[:-1], path[-1]
        for replacement in PALETTE:
            variant = copy.deepcopy(base)
            _at(variant, parent)[last] = copy.deepcopy(replacement)
            yield variant
        variant = copy.deepcopy(base)
        holder = _at(variant, parent)
        if isinstance(holder, dict):
            del holder[last]
            yield variant
            camel = "".join(w.capitalize() if i else w for i, w in enumerate(str(last).split("_")))
            if camel != last:  # the same field under both of its keys, the two values differing
                doubled = copy.deepcopy(base)
                _at(doubled, parent)[camel] = "other" if isinstance(_at(doubled, path), str) else None
                yield doubled
    for path in list(_paths(base)):
        holder = _at(base, path)
        if isinstance(holder, dict):
            variant = copy.deepcopy(base)
            _at(variant, path)["bogus_key"] = "x"
            yield variant


def _model(value: Any) -> Any:
    try:
        return EvalCase.model_validate(value)
    except (ValidationError, ValueError):
        return None


def _checked(value: Any) -> Any:
    try:
        return check_case(value)
    except (ValidationError, ValueError):
        return None


@pytest.mark.parametrize("base", BASES, ids=[b.get("eval_id") or b.get("evalId") for b in BASES])
def test_the_check_judges_every_variant_as_the_model_does(base):
    judged = accepted = 0
    for variant in _variants(base):
        model, checked = _model(variant), _checked(variant)
        assert (model is None) == (checked is None), json.dumps(variant)
        if model is not None:
            accepted += 1
            turns = len(model.conversation) if model.conversation is not None else None
            app = model.session_input.app_name if model.session_input is not None else None
            assert case_facts(checked) == (model.eval_id, turns, app), json.dumps(variant)
        judged += 1
    assert judged > 100 and 0 < accepted < judged  # both kinds were met


def test_a_file_reads_compactly_only_when_every_case_validates():
    good = BASES[0]
    bad = copy.deepcopy(good) | {"eval_id": "bad"}
    bad["conversation"][0]["user_content"]["parts"][0]["thought"] = "maybe"  # no boolean
    assert read_compact(json.dumps({"eval_set_id": "s", "eval_cases": [good, BASES[1]]})) is not None
    assert read_compact(json.dumps({"eval_set_id": "s", "eval_cases": [good, bad]})) is None
    fields, cases = read_compact(json.dumps({"eval_set_id": "s", "eval_cases": [good, BASES[1], BASES[2]]}))
    assert cases.eval_ids == ("static", "events", "scenario")
    assert cases.turns == (1, 1, None) and cases.app_names == ("app", "app", None)
    assert cases[1] == EvalCase.model_validate(BASES[1])  # the model built later is the one the file holds


def test_a_model_the_twin_does_not_mirror_is_validated_by_the_model(monkeypatch):
    from agentdiff.core.formats import case_check
    from pydantic import BaseModel, ConfigDict

    class Strict(BaseModel):
        model_config = ConfigDict(strict=True)
        x: int

    with pytest.raises(TypeError, match="strict"):
        case_check._twin(Strict)
    monkeypatch.setattr(case_check, "_adapter", lambda: None)  # as when EvalCase has no twin
    for base in BASES:
        model = EvalCase.model_validate(base)
        turns = len(model.conversation) if model.conversation is not None else None
        assert case_facts(check_case(base)) == (model.eval_id, turns, model.session_input.app_name if model.session_input else None)
    with pytest.raises(ValidationError):
        check_case({"eval_id": "x"})
