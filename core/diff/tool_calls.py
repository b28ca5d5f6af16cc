"""The tool_calls layer: per turn, the call sequences aligned on (name, args), unmatched runs paired
by name, so one inserted call is one inserted row, a changed argument one changed row listing its
paths, and a call that moved one moved row; the rows that decide the verdict under the match type
(EXACT, IN_ORDER, ANY_ORDER, ignore_args) are marked, following ADK's own greedy matching."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from agentdiff.core.diff.model import (
    DiffCriteria,
    ToolCallRow,
)
from agentdiff.core.diff.sequence import align
from agentdiff.core.diff.tree import Change, diff_trees, freeze, pair_block
from agentdiff.core.formats.eval_config import (
    MatchType,
)
from agentdiff.core.formats.genai_types import FunctionCall
from agentdiff.core.scoring.trajectory import trajectory_matches
from agentdiff.core.traces.model import (
    ToolCall,
)


def _call_key(call: ToolCall) -> Any:
    return (call.name, freeze(call.args))


def _call_changes(expected: ToolCall, actual: ToolCall) -> list[Change]:
    changes: list[Change] = []
    if expected.name != actual.name:
        changes += diff_trees(expected.name, actual.name, ("name",))
    if expected.args != actual.args:  # `{}` against null is a difference: ADK compares with ==
        changes += diff_trees(expected.args, actual.args, ("args",))
    return changes


def _response_changes(expected: ToolCall, actual: ToolCall) -> list[Change]:
    if not (expected.has_response and actual.has_response) or expected.response == actual.response:
        return []
    return diff_trees(expected.response, actual.response, ("response",))


def align_tool_calls(expected: Sequence[ToolCall], actual: Sequence[ToolCall]) -> list[ToolCallRow]:
    """Rows in reading order: equal calls are `same`, an unmatched run is paired by name into
    `changed` rows, the rest are `deleted` / `inserted`; a deleted call that reappears elsewhere
    unchanged is one `moved` row."""
    rows: list[ToolCallRow] = []

    def pair(i: Optional[int], j: Optional[int]) -> None:
        e = expected[i] if i is not None else None
        a = actual[j] if j is not None else None
        if e is not None and a is not None:
            changes = tuple(_call_changes(e, a))
            rows.append(
                ToolCallRow(
                    "changed" if changes else "same", i, j, e, a, changes, tuple(_response_changes(e, a)),
                    seq=min(e.seq, a.seq),
                )
            )
        elif e is not None:
            rows.append(ToolCallRow("deleted", i, None, e, None, seq=e.seq))
        elif a is not None:
            rows.append(ToolCallRow("inserted", None, j, None, a, seq=a.seq))

    if len(expected) == len(actual) and all(e.name == a.name and e.args == a.args for e, a in zip(expected, actual)):
        for k in range(len(expected)):  # the common case on a re-run: nothing to align
            pair(k, k)
        return rows
    for tag, i1, i2, j1, j2 in align([_call_key(c) for c in expected], [_call_key(c) for c in actual]):
        if tag == "equal":
            for k in range(i2 - i1):
                pair(i1 + k, j1 + k)
            continue
        block_e, block_a = expected[i1:i2], actual[j1:j2]
        pairs = pair_block(block_e, block_a, key=lambda call: call.name)
        pairs = _pair_leftovers(pairs, block_e, block_a)
        for i, j in pairs:
            pair(None if i is None else i1 + i, None if j is None else j1 + j)
    return _find_moves(rows)


def _pair_leftovers(pairs: list, block_e: Sequence[ToolCall], block_a: Sequence[ToolCall]) -> list:
    """In a block with one unmatched call on each side, or unmatched calls with equal args (a
    renamed tool), read the two as one changed call."""
    dels = [i for i, j in pairs if j is None]
    ins = [j for i, j in pairs if i is None]
    if not dels or not ins:
        return pairs
    matches: dict[int, int] = {}
    if len(dels) == 1 and len(ins) == 1 and len(pairs) == 2:
        matches[dels[0]] = ins[0]
    else:
        free: dict[Any, list[int]] = {}
        for j in ins:
            free.setdefault(freeze(block_a[j].args), []).append(j)
        for i in dels:
            same_args = free.get(freeze(block_e[i].args))
            if same_args:
                matches[i] = same_args.pop(0)
    if not matches:
        return pairs
    paired_ins = set(matches.values())
    out = []
    for i, j in pairs:
        if i is not None and j is None and i in matches:
            out.append((i, matches[i]))
        elif i is None and j in paired_ins:
            continue
        else:
            out.append((i, j))
    return out


def _find_moves(rows: list[ToolCallRow]) -> list[ToolCallRow]:
    deleted: dict[Any, list[ToolCallRow]] = {}
    for row in rows:
        if row.kind == "deleted":
            deleted.setdefault(_call_key(row.expected), []).append(row)  # type: ignore[arg-type]
    if not deleted:
        return rows
    moved_from: dict[int, ToolCallRow] = {}
    used: set[int] = set()
    for row in rows:
        if row.kind != "inserted":
            continue
        candidates = deleted.get(_call_key(row.actual))  # type: ignore[arg-type]
        if candidates:
            source = candidates.pop(0)
            used.add(id(source))
            moved_from[id(row)] = source
    out = []
    for row in rows:
        if id(row) in used:
            continue
        source = moved_from.get(id(row))
        if source is None:
            out.append(row)
            continue
        e, a = source.expected, row.actual
        out.append(
            ToolCallRow(
                "moved", source.expected_index, row.actual_index, e, a, (),
                tuple(_response_changes(e, a)),  # type: ignore[arg-type]
                seq=min(e.seq, a.seq),  # type: ignore[union-attr]
            )
        )
    return out


def _as_call(call: ToolCall) -> FunctionCall:
    return FunctionCall(name=call.name, args=call.args)


def mark_counting_rows(rows: list[ToolCallRow], expected: Sequence[ToolCall], actual: Sequence[ToolCall], criteria: DiffCriteria) -> tuple[list[ToolCallRow], bool]:
    """Mark the rows that make the trajectory fail under the match type; returns (rows, matches)."""
    if all(row.kind == "same" for row in rows):
        return rows, True  # equal sequences match under every match type
    exp_calls, act_calls = [_as_call(c) for c in expected], [_as_call(c) for c in actual]
    matches = trajectory_matches(act_calls, exp_calls, criteria.match_type, criteria.ignore_args)
    if matches:
        return rows, True
    if criteria.match_type is MatchType.EXACT:
        def counts(row: ToolCallRow) -> bool:
            if row.kind == "same":
                return False
            if row.kind == "changed" and criteria.ignore_args:
                return row.expected.name != row.actual.name  # type: ignore[union-attr]
            return True
        marked = [_with_counts(row, counts(row)) for row in rows]
        if not any(row.counts for row in marked):  # e.g. ignore_args with only argument changes and extra calls
            marked = [_with_counts(row, row.kind in ("inserted", "deleted", "moved")) for row in rows]
        return marked, False
    unmatched = _unmatched_expected(exp_calls, act_calls, criteria)
    marked = [
        _with_counts(row, row.kind != "same" and row.expected_index is not None and row.expected_index in unmatched)
        for row in rows
    ]
    if not any(row.counts for row in marked):
        marked = [_with_counts(row, row.kind in ("changed", "deleted", "moved")) for row in rows]
    return marked, False


def _with_counts(row: ToolCallRow, counts: bool) -> ToolCallRow:
    if row.counts == counts:
        return row
    return ToolCallRow(row.kind, row.expected_index, row.actual_index, row.expected, row.actual, row.changes, row.response_changes, counts, row.seq)


def _unmatched_expected(expected: list[FunctionCall], actual: list[FunctionCall], criteria: DiffCriteria) -> set[int]:
    def same(a: FunctionCall, e: FunctionCall) -> bool:
        return a.name == e.name and (criteria.ignore_args or a.args == e.args)

    if criteria.match_type is MatchType.IN_ORDER:
        position = 0
        for call in actual:
            if position < len(expected) and same(call, expected[position]):
                position += 1
        return set(range(position, len(expected)))
    unused = list(actual)
    missing: set[int] = set()
    for index, wanted in enumerate(expected):
        for k, call in enumerate(unused):
            if same(call, wanted):
                del unused[k]
                break
        else:
            missing.add(index)
    return missing
