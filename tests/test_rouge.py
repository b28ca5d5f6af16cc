"""ROUGE-1 as ADK's response_match_score computes it: adk-formats.md §3.2, row by row."""

from __future__ import annotations

import pytest
from agentdiff.core.scoring.rouge import rouge1, tokenize
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("The weather is sunny.", ("the", "weather", "is", "sunni")),
        ("don't device_2 café ＡＢＣ 天气", ("don", "t", "devic", "2", "café", "abc", "天", "气")),
    ],
)
def test_tokens(text, tokens):
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    "actual, expected, score",
    [
        ("The weather is sunny.", "The weather is sunny.", 1.0),
        ("THE WEATHER, IS SUNNY!", "the weather is sunny", 1.0),
        ("sunny is weather the", "the weather is sunny", 1.0),
        ("He was running fast", "He runs fast", 0.857143),
        ("one two three four", "one two three four five six seven", 0.727273),
        ("sunny sunny sunny", "sunny day", 0.4),
        ("", "", 0.0),
        ("It is sunny", "It is sunny", 1.0),
        ("don't", "do not", 0.0),
        ("17 and 4", "17, 4", 0.8),
        ("device_2", "device 2", 1.0),
        ("café au lait", "cafe au lait", 0.666667),
        ("天气很好", "天气好", 0.857143),
        ("ＡＢＣ", "abc", 1.0),
        ("The weather is rainy.", "It is sunny in London.", 0.222222),
    ],
)
def test_reference_scores(actual, expected, score):
    assert rouge1(actual, expected).fmeasure == pytest.approx(score, abs=1e-6)


def test_precision_and_recall_of_the_reference_row():
    result = rouge1("The weather is rainy.", "It is sunny in London.")
    assert result.precision == pytest.approx(0.25)
    assert result.recall == pytest.approx(0.2)


def test_thai_splits_into_grapheme_clusters():
    # base consonants start clusters, combining vowel and tone marks stay attached
    assert tokenize("กิน") == ("กิ", "น")


_PIECES = list("abcdefghij ABC .,'-_!?0123") + [
    "running ", "runs ", "café ", "天", "气", "好", "ก", "ิ", "ＡＢ", "ß", "İ", "ﬁ", "\n", " the ", "was ", "use ", "using ",
]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=25).map("".join) | st.text(max_size=30)


@pytest.mark.adk
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actual=_TEXT, expected=_TEXT)
def test_same_as_adks_rouge_on_generated_text(actual, expected):
    final_response_match_v1 = pytest.importorskip("google.adk.evaluation.final_response_match_v1")
    theirs = final_response_match_v1._calculate_rouge_1_scores(actual, expected)
    ours = rouge1(actual, expected)
    assert ours.fmeasure == theirs.fmeasure
    assert (ours.precision, ours.recall) == (theirs.precision, theirs.recall)
