"""Word diffs, sequence alignment and path-level tree diffs."""

from __future__ import annotations

import pytest
from agentdiff.core.diff.sequence import Opcode, align, tokenize_words, word_diff
from agentdiff.core.diff.tree import apply_changes, diff_trees, render_path
from hypothesis import given, settings
from hypothesis import strategies as st


def sides(ops):
    expected = "".join(op.text for op in ops if op.op != "insert")
    actual = "".join(op.text for op in ops if op.op != "delete")
    return expected, actual


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("Hello, world!", ["Hello", ",", " ", "world", "!"]),
        ("我喜欢猫", ["我", "喜", "欢", "猫"]),
        ("abc中文 def", ["abc", "中", "文", " ", "def"]),
        ("line one\n\nline two", ["line", " ", "one", "\n\n", "line", " ", "two"]),
        ("order_id=A1", ["order_id", "=", "A1"]),
        ("café", ["café"]),
        ("", []),
    ],
)
def test_tokens_are_words_spaces_and_punctuation(text, tokens):
    assert tokenize_words(text) == tokens
    assert "".join(tokenize_words(text)) == text


def test_combining_marks_stay_on_their_character():
    thai = "สวัสดี"
    tokens = tokenize_words(thai)
    assert "".join(tokens) == thai
    assert all(not t[0] in "\u0e31\u0e34\u0e35\u0e36\u0e37\u0e38\u0e39\u0e47\u0e48\u0e49\u0e4a\u0e4b" for t in tokens)


def test_a_prompt_edit_reads_as_the_words_that_changed():
    ops = word_diff("Be polite and concise with the user.", "Be terse and concise with every user.")
    assert [(o.op, o.text) for o in ops if o.op != "equal"] == [
        ("delete", "polite"), ("insert", "terse"), ("delete", "the"), ("insert", "every"),
    ]


def test_cjk_differences_are_per_character():
    ops = word_diff("我喜欢猫", "我喜欢狗")
    assert [(o.op, o.text) for o in ops] == [("equal", "我喜欢"), ("delete", "猫"), ("insert", "狗")]


def test_nearby_changes_merge_into_one_readable_replacement():
    ops = word_diff("the quick brown fox", "a slow red fox")
    changed = [o for o in ops if o.op != "equal"]
    assert [o.op for o in changed] == ["delete", "insert"]
    assert sides(ops) == ("the quick brown fox", "a slow red fox")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.text(max_size=80))
def test_word_diff_reproduces_both_sides(a, b):
    assert sides(word_diff(a, b)) == (a, b)


def test_align_marks_one_insert_in_a_long_equal_run():
    a = list(range(1000))
    b = a[:500] + ["new"] + a[500:]
    assert align(a, b) == [Opcode("equal", 0, 500, 0, 500), Opcode("insert", 500, 500, 500, 501), Opcode("equal", 500, 1000, 501, 1001)]


def test_align_handles_repeated_items_without_treating_them_as_junk():
    a = ["noop"] * 300 + ["x"] + ["noop"] * 300
    b = ["noop"] * 300 + ["noop"] * 300
    ops = [op for op in align(a, b) if op.tag != "equal"]
    assert ops == [Opcode("delete", 300, 301, 300, 300)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=30), st.lists(st.integers(0, 5), max_size=30))
def test_align_opcodes_cover_both_sequences(a, b):
    rebuilt = []
    last_i = last_j = 0
    for tag, i1, i2, j1, j2 in align(a, b):
        assert (i1, j1) == (last_i, last_j)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        rebuilt += b[j1:j2]
        last_i, last_j = i2, j2
    assert (last_i, last_j) == (len(a), len(b))
    assert rebuilt == b


# --- tree diff --------------------------------------------------------------------------------


def rows(changes):
    return [(c.kind, render_path(c.path), c.expected, c.actual) for c in changes]


@pytest.mark.parametrize(
    "expected, actual, wanted",
    [
        ({"order_id": "A1"}, {"order_id": "a1"}, [("changed", "order_id", "A1", "a1")]),
        ({"order_id": "A1"}, {"orderId": "A1"}, [("removed", "order_id", "A1", None), ("added", "orderId", None, "A1")]),
        ({"n": 1}, {"n": "1"}, [("changed", "n", 1, "1")]),
        ({"n": 1}, {"n": 1.0}, []),
        ({"a": {}}, {"a": None}, [("changed", "a", {}, None)]),
        ({"xs": [1, 2]}, {"xs": [2, 1]}, [("removed", "xs[0]", 1, None), ("added", "xs[1]", None, 1)]),
        ({"xs": [1, 2, 3]}, {"xs": [1, 9, 2, 3]}, [("added", "xs[1]", None, 9)]),
        ({"state": {"a.b": 1}}, {"state": {"a.b": 2}}, [("changed", 'state["a.b"]', 1, 2)]),
    ],
)
def test_tree_diff_by_path(expected, actual, wanted):
    assert rows(diff_trees(expected, actual)) == wanted


def test_an_inserted_list_element_does_not_cascade():
    expected = {"contents": [{"role": "user", "text": "a"}, {"role": "model", "text": "b"}, {"role": "user", "text": "c"}]}
    actual = {"contents": [{"role": "user", "text": "a"}, {"role": "user", "text": "new"}, {"role": "model", "text": "b"}, {"role": "user", "text": "c"}]}
    assert rows(diff_trees(expected, actual)) == [("added", "contents[1]", None, {"role": "user", "text": "new"})]


def test_a_changed_element_is_diffed_inside_and_keeps_both_indices():
    expected = {"xs": [{"name": "a", "v": 1}, {"name": "b", "v": 1}]}
    actual = {"xs": [{"name": "z", "v": 0}, {"name": "a", "v": 1}, {"name": "b", "v": 2}]}
    changes = diff_trees(expected, actual)
    assert [(c.kind, c.path, c.actual_path) for c in changes] == [
        ("added", ("xs", 0), ("xs", 0)),
        ("changed", ("xs", 1, "v"), ("xs", 2, "v")),
    ]


def test_long_strings_carry_a_word_diff():
    (change,) = diff_trees({"s": "You are a helpful assistant for the store."}, {"s": "You are a terse assistant for the store."})
    assert [(o.op, o.text) for o in change.words if o.op != "equal"] == [("delete", "helpful"), ("insert", "terse")]
    (short_change,) = diff_trees({"s": "A1"}, {"s": "a1"})
    assert short_change.words is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["a", "b", "long text with several words in it"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "c", "d.e"]), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values, json_values)
def test_applying_the_changes_to_expected_yields_actual(expected, actual):
    changes = diff_trees(expected, actual)
    assert apply_changes(expected, changes) == actual


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_a_tree_against_itself_has_no_changes(value):
    assert diff_trees(value, value) == []
