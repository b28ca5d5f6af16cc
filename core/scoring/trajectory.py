"""Tool-trajectory matching exactly as ADK 2.13's `tool_trajectory_avg_score` decides it.

A call matches when the names are equal and (unless `ignore_args`) the args are equal under
Python `==`: key order is irrelevant, `1 == 1.0 == True`, `"1" != 1`, list order matters and
`{}` is not `None`. Call ids are ignored.

* EXACT: same length, pairwise match in order.
* IN_ORDER: the expected calls appear in order within the actual ones (extras allowed); an empty
  expected list always matches.
* ANY_ORDER: every expected call is matched by a distinct actual call (duplicates need as many
  copies; extras allowed); an empty expected list always matches.
"""

from __future__ import annotations

from typing import Sequence

from agentdiff.core.formats.eval_config import MatchType
from agentdiff.core.formats.genai_types import FunctionCall


def calls_match(actual: FunctionCall, expected: FunctionCall, ignore_args: bool) -> bool:
    return actual.name == expected.name and (ignore_args or actual.args == expected.args)


def trajectory_matches(
    actual: Sequence[FunctionCall],
    expected: Sequence[FunctionCall],
    match_type: MatchType = MatchType.EXACT,
    ignore_args: bool = False,
) -> bool:
    if match_type is MatchType.EXACT:
        return len(actual) == len(expected) and all(
            calls_match(a, e, ignore_args) for a, e in zip(actual, expected)
        )
    if match_type is MatchType.IN_ORDER:
        if not expected:
            return True
        position = 0
        for call in actual:
            if calls_match(call, expected[position], ignore_args):
                position += 1
                if position == len(expected):
                    return True
        return False
    if match_type is MatchType.ANY_ORDER:
        unused = list(actual)
        for wanted in expected:
            for index, call in enumerate(unused):
                if calls_match(call, wanted, ignore_args):
                    del unused[index]
                    break
            else:
                return False
        return True
    raise ValueError(f"Unsupported match type {match_type}")
