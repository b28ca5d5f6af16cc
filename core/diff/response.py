"""The response layer: per turn, a word diff of the final response with its ROUGE-1 score and threshold."""

from __future__ import annotations

from typing import Optional

from agentdiff.core.diff.model import (
    DiffCriteria,
    ResponseDiff,
)
from agentdiff.core.diff.sequence import word_diff
from agentdiff.core.traces.model import (
    Turn,
)


def diff_response(expected: Turn, actual: Turn, criteria: DiffCriteria) -> Optional[ResponseDiff]:
    if expected.final_response is None and actual.final_response is None and not (
        expected.intermediate_responses or actual.intermediate_responses or expected.has_workflow_output or actual.has_workflow_output
    ):
        return None
    score = None
    if expected.final_response is not None and actual.final_response is not None:
        score = response_score(actual.final_response, expected.final_response)
    words = tuple(word_diff(expected.final_response or "", actual.final_response or ""))
    return ResponseDiff(
        expected.final_response,
        actual.final_response,
        words,
        score,
        criteria.response_threshold,
        expected.intermediate_responses,
        actual.intermediate_responses,
        expected.workflow_output,
        actual.workflow_output,
        (expected.has_workflow_output, actual.has_workflow_output),
    )


def response_score(actual: str, expected: str) -> float:
    """ROUGE-1 F-measure as ADK's response_match_score computes it."""
    from agentdiff.core.scoring.rouge import rouge1, tokenize

    if actual == expected:  # identical texts: 1.0 unless there is no token at all (ADK: 0.0)
        if actual.isascii():
            return 1.0 if any(char.isalnum() for char in actual) else 0.0
        return 1.0 if tokenize(actual) else 0.0
    return rouge1(actual, expected).fmeasure
