"""The per-layer diff engine, scenario by scenario, plus properties over generated traces."""

from __future__ import annotations

import json

import pytest
from agentdiff.core.diff.case import diff_case
from agentdiff.core.diff.model import DiffCriteria
from agentdiff.core.diff.tool_calls import align_tool_calls
from agentdiff.core.diff.tree import apply_changes
from agentdiff.core.formats.eval_config import MatchType
from agentdiff.core.traces.model import (
    LlmExchange,
    SessionSnapshot,
    ToolCall,
    Trace,
    Turn,
)
from hypothesis import given, settings
from hypothesis import strategies as st

EXACT = DiffCriteria(MatchType.EXACT, response_threshold=0.8)
IN_ORDER = DiffCriteria(MatchType.IN_ORDER, response_threshold=0.8)
ANY_ORDER = DiffCriteria(MatchType.ANY_ORDER, response_threshold=0.8)


def call(name: str, seq: int = 0, response=None, **args) -> ToolCall:
    return ToolCall(name=name, args=args, seq=seq, response=response, has_response=response is not None)


def calls(*specs) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(name=name, args=args, seq=2 * i + 1) for i, (name, args) in enumerate(specs))


def request(instruction: str = "You help customers with their orders. Be polite.", *contents: str) -> dict:
    return {
        "model": "gemini-2.5-flash",
        "contents": [{"role": "user", "parts": [{"text": text}]} for text in contents or ("Where is my order A1?",)],
        "config": {"system_instruction": instruction, "labels": {"adk_agent_name": "support"}},
    }


def trace(*turns: Turn, state=None) -> Trace:
    session = SessionSnapshot(app_name="app", user_id="u", state=state) if state is not None else None
    return Trace(turns=turns, session=session)


def turn(index=0, tool_calls=(), final="Your order A1 has shipped.", llm=()) -> Turn:
    return Turn(index=index, user_text="Where is my order A1?", tool_calls=tuple(tool_calls), final_response=final, llm=tuple(llm))


def changed_layers(diff) -> set[str]:
    return {status.layer for status in diff.layers if status.status == "changed"}


# --- the classic scenarios ----------------------------------------------------------------------


def test_a_bumped_prompt_template_changes_the_request_layer_only():
    order = calls(("get_order_status", {"order_id": "A1"}))
    expected = trace(turn(tool_calls=order, llm=[LlmExchange(agent="support", index=0, seq=0, request=request())]))
    actual = trace(
        turn(tool_calls=order, llm=[LlmExchange(agent="support", index=0, seq=0, request=request("You help customers with their orders. Be brief."))])
    )
    diff = diff_case(expected, actual, EXACT)
    assert changed_layers(diff) == {"request"}
    (divergence,) = diff.divergences
    assert divergence.path == "config.system_instruction"
    change = diff.turns[0].requests[0].changes[0]
    assert [(o.op, o.text) for o in change.words if o.op != "equal"] == [("delete", "polite"), ("insert", "brief")]
    assert divergence.summary == 'turn 1 · request · support call 1 config.system_instruction "polite" → "brief"'


def test_labels_and_tool_schema_titles_do_not_count_as_request_changes():
    base = request()
    base["config"]["tools"] = [{"function_declarations": [{"name": "lookup", "description": "Look up.", "parameters": {"type": "OBJECT", "properties": {"id": {"type": "STRING", "title": "Id"}}}}]}]
    other = json.loads(json.dumps(base))
    other["config"]["labels"] = {"adk_agent_name": "renamed"}
    other["config"]["tools"][0]["function_declarations"][0] = {
        "name": "lookup", "description": "  Look up.\n", "parameters_json_schema": {"type": "object", "title": "P", "properties": {"id": {"type": "string"}}}
    }
    expected = trace(turn(llm=[LlmExchange(agent="a", index=0, seq=0, request=base)]))
    actual = trace(turn(llm=[LlmExchange(agent="a", index=0, seq=0, request=other)]))
    diff = diff_case(expected, actual, EXACT)
    assert diff.same
    row = diff.turns[0].requests[0]
    assert row.kind == "same"
    assert "config.labels: excluded" in row.notes
    assert any("tool declaration normalised" in note for note in row.notes)


def test_two_swapped_calls_are_one_moved_row():
    expected = trace(turn(tool_calls=calls(("get_weather", {"city": "Paris"}), ("lookup", {"key": "a"}))))
    actual = trace(turn(tool_calls=calls(("lookup", {"key": "a"}), ("get_weather", {"city": "Paris"}))))
    diff = diff_case(expected, actual, EXACT)
    rows = diff.turns[0].tool_calls
    assert [row.kind for row in rows] == ["same", "moved"]
    (divergence,) = diff.divergences
    assert divergence.summary == "turn 1 · tool_calls · get_weather moved from call 1 to 2"
    assert divergence.counts
    assert diff.turns[0].trajectory_matches is False
    any_order = diff_case(expected, actual, ANY_ORDER)
    assert any_order.turns[0].trajectory_matches is True
    assert not any_order.divergences[0].counts


def test_a_renamed_argument_is_one_changed_row_listing_both_paths():
    expected = trace(turn(tool_calls=calls(("get_order_status", {"order_id": "A1"}))))
    actual = trace(turn(tool_calls=calls(("get_order_status", {"orderId": "A1"}))))
    diff = diff_case(expected, actual, EXACT)
    (row,) = diff.turns[0].tool_calls
    assert row.kind == "changed"
    assert [(c.kind, c.path) for c in row.changes] == [("removed", ("args", "order_id")), ("added", ("args", "orderId"))]
    (divergence,) = diff.divergences
    assert divergence.summary == 'turn 1 · tool_calls · get_order_status args.order_id missing (expected "A1") (+1 more)'


def test_a_changed_argument_value_reads_as_the_issue_example():
    expected = trace(turn(), turn(1, calls(("get_order_status", {"order_id": "A1"}))))
    actual = trace(turn(), turn(1, calls(("get_order_status", {"order_id": "a1"}))))
    diff = diff_case(expected, actual, EXACT)
    assert diff.first_divergence.summary == 'turn 2 · tool_calls · get_order_status args.order_id "A1" → "a1"'
    assert diff.layer("tool_calls").summary == diff.first_divergence.summary


@pytest.mark.parametrize(
    "expected_args, actual_args, path",
    [({"n": 1}, {"n": "1"}, "args.n"), ({"o": {}}, {"o": None}, "args.o"), ({"xs": [1, 2]}, {"xs": [2, 1]}, "args.xs[0]")],
)
def test_argument_type_and_shape_differences_are_changes(expected_args, actual_args, path):
    diff = diff_case(trace(turn(tool_calls=calls(("f", expected_args)))), trace(turn(tool_calls=calls(("f", actual_args)))), EXACT)
    assert diff.first_divergence.path == path
    assert diff.first_divergence.counts


def test_int_and_float_are_equal_as_adk_compares_them():
    diff = diff_case(trace(turn(tool_calls=calls(("f", {"n": 1})))), trace(turn(tool_calls=calls(("f", {"n": 1.0})))), EXACT)
    assert diff.same


def test_a_paraphrased_answer_changes_the_response_layer_only_with_its_score():
    expected = trace(turn(final="Your order A1 has shipped and will arrive on Monday."))
    actual = trace(turn(final="Order A1 shipped; it arrives Monday."))
    diff = diff_case(expected, actual, EXACT)
    assert changed_layers(diff) == {"response"}
    response = diff.turns[0].response
    assert 0 < response.score < 0.8 and response.threshold == 0.8 and response.passed is False
    (divergence,) = diff.divergences
    assert divergence.summary.startswith(f"turn 1 · response · ROUGE-1 {response.score:.2f} < 0.8 · ")
    assert divergence.counts


def test_one_extra_middle_step_is_exactly_one_inserted_row():
    expected = trace(turn(tool_calls=calls(("a", {}), ("b", {}), ("c", {}))))
    actual = trace(turn(tool_calls=calls(("a", {}), ("check_policy", {"order_id": "A1"}), ("b", {}), ("c", {}))))
    diff = diff_case(expected, actual, EXACT)
    assert [row.kind for row in diff.turns[0].tool_calls] == ["same", "inserted", "same", "same"]
    (divergence,) = diff.divergences
    assert divergence.summary == 'turn 1 · tool_calls · extra call check_policy({"order_id": "A1"})'
    assert divergence.counts
    in_order = diff_case(expected, actual, IN_ORDER)
    assert in_order.turns[0].trajectory_matches and not in_order.divergences[0].counts


def test_a_missing_call_counts_under_every_match_type():
    expected = trace(turn(tool_calls=calls(("lookup", {"id": 1}), ("refund", {"id": 1}))))
    actual = trace(turn(tool_calls=calls(("lookup", {"id": 1}))))
    for criteria in (EXACT, IN_ORDER, ANY_ORDER):
        (divergence,) = diff_case(expected, actual, criteria).divergences
        assert divergence.kind == "deleted" and divergence.counts
        assert divergence.summary == 'turn 1 · tool_calls · missing call refund({"id": 1})'


def test_ignore_args_keeps_argument_rows_but_they_do_not_count():
    expected = trace(turn(tool_calls=calls(("f", {"x": 1}))))
    actual = trace(turn(tool_calls=calls(("f", {"x": 2}))))
    diff = diff_case(expected, actual, DiffCriteria(MatchType.EXACT, ignore_args=True))
    (divergence,) = diff.divergences
    assert divergence.kind == "changed" and not divergence.counts


def test_a_changed_state_key_changes_the_session_layer_only():
    expected = trace(turn(), state={"lights": "on", "temp": 20, "_adk_recordings_config": {"dir": "x"}})
    actual = trace(turn(), state={"lights": "off", "temp": 20})
    diff = diff_case(expected, actual, EXACT)
    assert changed_layers(diff) == {"session"}
    (divergence,) = diff.divergences
    assert divergence.summary == 'session · state.lights "on" → "off"'


def test_events_are_aligned_after_adks_exclusions():
    def event(author, text, **extra):
        return {"author": author, "content": {"role": "model", "parts": [{"text": text}]}, **extra}

    recorded = [
        {"author": "user", "id": "1", "timestamp": 1.0, "content": {"role": "user", "parts": [{"text": "hi"}]}},
        event("agent", "hello", id="2", timestamp=2.0, invocation_id="i1"),
        event("agent", "bye", id="3"),
    ]
    current = [
        {"author": "user", "id": "x", "timestamp": 9.0, "content": {"role": "user", "parts": [{"text": "hi"}]}},
        event("agent", "hello", id="y", timestamp=8.0, invocation_id="i2"),
        event("agent", "extra"),
        event("agent", "bye"),
    ]
    expected = Trace(turns=(turn(),), session=SessionSnapshot(events=tuple(recorded)))
    actual = Trace(turns=(turn(),), session=SessionSnapshot(events=tuple(current)))
    diff = diff_case(expected, actual, EXACT)
    assert [row.kind for row in diff.session.events] == ["same", "same", "inserted", "same"]
    (divergence,) = diff.divergences
    assert divergence.summary == "turn 1 · session · event 3 (agent) extra"


def test_requests_past_the_recording_and_recorded_but_never_made():
    exchange = lambda i, seq: LlmExchange(agent="root", index=i, seq=seq, request=request())  # noqa: E731
    longer = diff_case(trace(turn(llm=[exchange(0, 0)])), trace(turn(llm=[exchange(0, 0), exchange(1, 1)])), EXACT)
    assert [d.summary for d in longer.divergences] == ["turn 1 · request · root call 2 ran past the recording"]
    shorter = diff_case(trace(turn(llm=[exchange(0, 0), exchange(1, 1)])), trace(turn(llm=[exchange(0, 0)])), EXACT)
    assert [d.summary for d in shorter.divergences] == ["turn 1 · request · root call 2 was recorded but never made"]


def test_the_first_divergence_is_the_earliest_in_time():
    """A changed tool argument (seq 1) makes the next request differ (seq 2): the argument is first."""
    expected_calls = (ToolCall(name="lookup", args={"id": "A1"}, seq=1),)
    actual_calls = (ToolCall(name="lookup", args={"id": "a1"}, seq=1),)
    llm_e = [LlmExchange(agent="r", index=0, seq=0, request=request()), LlmExchange(agent="r", index=1, seq=2, request=request("x", "q", "A1"))]
    llm_a = [LlmExchange(agent="r", index=0, seq=0, request=request()), LlmExchange(agent="r", index=1, seq=2, request=request("x", "q", "a1"))]
    expected = trace(turn(), turn(1, expected_calls, final="Found A1.", llm=llm_e))
    actual = trace(turn(), turn(1, actual_calls, final="Found a1.", llm=llm_a))
    diff = diff_case(expected, actual, EXACT)
    assert [(d.turn, d.layer) for d in diff.divergences] == [(1, "tool_calls"), (1, "request"), (1, "response")]


def test_one_edit_in_a_long_trace_is_one_row():
    specs = [("step", {"i": i}) for i in range(40)]
    expected = calls(*specs)
    edited = list(specs)
    edited[17] = ("step", {"i": 17, "retry": True})
    rows = align_tool_calls(expected, calls(*edited))
    assert [row.kind for row in rows].count("changed") == 1
    assert sum(row.kind != "same" for row in rows) == 1
    rows = align_tool_calls(expected, calls(*(specs[:17] + specs[18:])))
    assert [(row.kind, row.expected_index) for row in rows if row.kind != "same"] == [("deleted", 17)]


def test_a_turn_missing_on_one_side_is_marked():
    diff = diff_case(trace(turn(), turn(1)), trace(turn()), EXACT)
    assert diff.turns[1].missing == "actual"
    assert diff.divergences[0].summary.startswith("turn 2 · response · ")


# --- properties -------------------------------------------------------------------------------

names = st.sampled_from(["lookup", "refund", "get_weather", "noop"])
args = st.dictionaries(st.sampled_from(["id", "city", "n"]), st.one_of(st.integers(0, 3), st.sampled_from(["A1", "a1", "Paris"])), max_size=3)
tool_calls = st.lists(st.tuples(names, args), max_size=8)
texts = st.sampled_from(["", "Done.", "Your order A1 has shipped.", "The weather in Paris is sunny today.", "天气很好"])


@st.composite
def traces(draw):
    turns = []
    for index in range(draw(st.integers(1, 3))):
        specs = draw(tool_calls)
        llm = [
            LlmExchange(agent="root", index=k, seq=2 * k, request=request(draw(st.sampled_from(["Be polite.", "Be brief and polite."])), *draw(st.lists(texts, min_size=1, max_size=2))))
            for k in range(draw(st.integers(0, 2)))
        ]
        turns.append(Turn(index=index, tool_calls=calls(*specs), final_response=draw(texts), llm=tuple(llm)))
    state = draw(st.none() | st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 2), max_size=2))
    return trace(*turns, state=state)


@settings(max_examples=150, deadline=None)
@given(traces())
def test_a_trace_against_itself_is_the_same(value):
    for criteria in (EXACT, IN_ORDER, ANY_ORDER):
        diff = diff_case(value, value, criteria)
        assert diff.same and diff.divergences == ()
        assert all(status.status in ("same", "absent") for status in diff.layers)


@settings(max_examples=150, deadline=None)
@given(traces(), traces())
def test_the_reported_edits_turn_expected_into_actual(expected, actual):
    diff = diff_case(expected, actual, IN_ORDER)
    for t, turn_diff in enumerate(diff.turns):
        e_calls = expected.turns[t].tool_calls if t < len(expected.turns) else ()
        a_calls = actual.turns[t].tool_calls if t < len(actual.turns) else ()
        # every call appears once on its side, in order, and the rows' changes rebuild the actual call
        by_actual = sorted((r for r in turn_diff.tool_calls if r.actual_index is not None), key=lambda r: r.actual_index)
        by_expected = sorted((r for r in turn_diff.tool_calls if r.expected_index is not None), key=lambda r: r.expected_index)
        assert [r.actual for r in by_actual] == list(a_calls)
        assert [r.expected for r in by_expected] == list(e_calls)
        for row in turn_diff.tool_calls:
            if row.kind == "changed":
                before = {"name": row.expected.name, "args": row.expected.args}
                assert apply_changes(before, row.changes) == {"name": row.actual.name, "args": row.actual.args}
        for row in turn_diff.requests:
            if row.kind in ("same", "changed"):
                assert apply_changes(row.expected_request, row.changes) == row.actual_request
        if turn_diff.response is not None:
            ops = turn_diff.response.words
            assert "".join(o.text for o in ops if o.op != "delete") == (turn_diff.response.actual or "")
    if diff.session is not None:
        before = {"app_name": "app", "user_id": "u", "state": expected.session.state}
        assert apply_changes(before, diff.session.changes) == {"app_name": "app", "user_id": "u", "state": actual.session.state}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_the_score_of_an_unchanged_answer_is_adks(text):
    from agentdiff.core.diff.response import response_score
    from agentdiff.core.scoring.rouge import rouge1

    assert response_score(text, text) == rouge1(text, text).fmeasure
