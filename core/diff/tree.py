"""Path-level diffs of JSON trees, with word-level diffs for long strings.

Equality is Python `==`, as in ADK's comparisons (`1 == 1.0`, `{}` != `None`, key order is
irrelevant, list order matters). Lists are aligned, so one inserted element is one `added` change,
not a shifted cascade. Every change carries two paths: `path`, on the expected side (for an
`added` change: the expected-side parent plus the actual-side index or key), and `actual_path`.
`apply_changes(expected, diff_trees(expected, actual)) == actual` always holds.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, Callable, Literal, Optional, Sequence

from agentdiff.core.diff.sequence import WordOp, align, word_diff

Path = tuple[str | int, ...]
ChangeKind = Literal["changed", "added", "removed"]

#: Strings at least this long, or spanning lines, get a word-level diff.
WORD_DIFF_MIN_LENGTH = 40
_IDENTITY_KEYS = ("name", "role", "author", "agent_name", "id")
_PLAIN_KEY = re.compile(r"^[A-Za-z_$][\w$\-]*$")


@dataclass(frozen=True, slots=True)
class Change:
    kind: ChangeKind
    path: Path
    actual_path: Path
    expected: Any = None  # absent for `added`
    actual: Any = None  # absent for `removed`
    words: Optional[tuple[WordOp, ...]] = None  # for long strings


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def render_path(path: Sequence[str | int]) -> str:
    """`("args", "order_id")` → `args.order_id`; `("state", "a.b")` → `state["a.b"]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += '["' + part.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out


def freeze(value: Any) -> Any:
    """A hashable stand-in for a JSON value; `freeze(a) == freeze(b)` exactly when `a == b`."""
    if isinstance(value, dict):
        return ("{", frozenset((key, freeze(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return ("[", tuple(freeze(item) for item in value))
    return value


def wants_words(expected: Any, actual: Any) -> bool:
    return (
        isinstance(expected, str)
        and isinstance(actual, str)
        and (
            max(len(expected), len(actual)) >= WORD_DIFF_MIN_LENGTH
            or "\n" in expected
            or "\n" in actual
        )
    )


def changed(path: Path, actual_path: Path, expected: Any, actual: Any) -> Change:
    words = tuple(word_diff(expected, actual)) if wants_words(expected, actual) else None
    return Change("changed", path, actual_path, expected, actual, words)


def diff_trees(expected: Any, actual: Any, path: Path = (), actual_path: Optional[Path] = None) -> list[Change]:
    """Every difference between two JSON trees, by path, in document order."""
    changes: list[Change] = []
    _diff(expected, actual, path, path if actual_path is None else actual_path, changes)
    return changes


def _diff(expected: Any, actual: Any, path: Path, actual_path: Path, out: list[Change]) -> None:
    if expected == actual and json_type(expected) == json_type(actual):
        return
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            if key not in actual:
                out.append(Change("removed", path + (key,), actual_path + (key,), expected=value))
            else:
                _diff(value, actual[key], path + (key,), actual_path + (key,), out)
        for key, value in actual.items():
            if key not in expected:
                out.append(Change("added", path + (key,), actual_path + (key,), actual=value))
        return
    if isinstance(expected, list) and isinstance(actual, list):
        _diff_lists(expected, actual, path, actual_path, out)
        return
    if expected == actual and isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return  # `1 == 1.0 == True`: equal under Python `==`, as ADK compares
    out.append(changed(path, actual_path, expected, actual))


def _identity(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(value.get(key) for key in _IDENTITY_KEYS if key in value)
    return json_type(value)


def kind_key(value: Any) -> Any:
    """What makes two list elements "the same element, changed": same JSON type and, for objects,
    the same identifying fields (name, role, author, agent_name, id)."""
    return (json_type(value), freeze(_identity(value)))


def pair_block(expected: Sequence[Any], actual: Sequence[Any], key: Callable[[Any], Any] = kind_key) -> list[tuple[Optional[int], Optional[int]]]:
    """Pair the elements of one replaced block: in order, an expected element with the next actual
    element of the same key. Returns (i, j) pairs, None for an unpaired side, in reading order.
    O((n + m) log m), so a long block of unrelated elements stays cheap."""
    positions: dict[Any, list[int]] = {}
    for j, item in enumerate(actual):
        positions.setdefault(key(item), []).append(j)
    pairs: list[tuple[Optional[int], Optional[int]]] = []
    next_j = 0
    for i, item in enumerate(expected):
        candidates = positions.get(key(item))
        j = None
        if candidates:
            at = bisect_left(candidates, next_j)
            if at < len(candidates):
                j = candidates[at]
        if j is None:
            pairs.append((i, None))
            continue
        pairs.extend((None, k) for k in range(next_j, j))
        pairs.append((i, j))
        next_j = j + 1
    pairs.extend((None, k) for k in range(next_j, len(actual)))
    return pairs


def _diff_lists(expected: list, actual: list, path: Path, actual_path: Path, out: list[Change]) -> None:
    keys_a = [freeze(item) for item in expected]
    keys_b = [freeze(item) for item in actual]
    for tag, i1, i2, j1, j2 in align(keys_a, keys_b):
        if tag == "equal":
            continue
        for i, j in pair_block(expected[i1:i2], actual[j1:j2]):
            if i is not None and j is not None:
                _diff(expected[i1 + i], actual[j1 + j], path + (i1 + i,), actual_path + (j1 + j,), out)
            elif i is not None:
                out.append(Change("removed", path + (i1 + i,), actual_path + (j1,), expected=expected[i1 + i]))
            else:
                assert j is not None
                out.append(Change("added", path + (j1 + j,), actual_path + (j1 + j,), actual=actual[j1 + j]))


def apply_changes(expected: Any, changes: Sequence[Change], depth: int = 0) -> Any:
    """Apply `changes` (from `diff_trees(expected, actual)`) to `expected`; returns `actual`."""
    if not changes:
        return expected
    here = [c for c in changes if len(c.path) == depth]
    if here:
        (change,) = here
        return change.actual
    if isinstance(expected, dict):
        result = dict(expected)
        groups = _group(changes, depth)
        for key, group in groups.items():
            direct = [c for c in group if len(c.path) == depth + 1]
            if direct and direct[0].kind == "removed":
                result.pop(key, None)
            elif direct:
                result[key] = direct[0].actual
            else:
                result[key] = apply_changes(expected[key], group, depth + 1)
        return result
    if isinstance(expected, list):
        groups = _group(changes, depth)
        removed: set[int] = set()
        added: list[tuple[int, Any]] = []
        nested: dict[int, list[Change]] = {}
        for index, group in groups.items():
            for change in group:
                if len(change.path) == depth + 1 and change.kind == "removed":
                    removed.add(index)  # type: ignore[arg-type]
                elif len(change.path) == depth + 1 and change.kind == "added":
                    added.append((index, change.actual))  # type: ignore[arg-type]
                else:
                    nested.setdefault(index, []).append(change)  # type: ignore[arg-type]
        result = []
        for index, item in enumerate(expected):
            if index in removed:
                continue
            result.append(apply_changes(item, nested[index], depth + 1) if index in nested else item)
        for index, value in sorted(added, key=lambda pair: pair[0]):
            result.insert(index, value)
        return result
    raise ValueError(f"cannot apply nested changes to a {json_type(expected)}")


def _group(changes: Sequence[Change], depth: int) -> dict[str | int, list[Change]]:
    groups: dict[str | int, list[Change]] = {}
    for change in changes:
        groups.setdefault(change.path[depth], []).append(change)
    return groups
