"""The fast indented JSON writer gives the standard library's bytes, whatever the value."""

from __future__ import annotations

import json
import random
from collections import OrderedDict

import pytest

from agentdiff.core.formats.json_text import dumps_indented

LEAVES = ["", "plain", "quote \" and \\ back", "tab\tnew\nline\r", "\x00\x1f\x7f", "café naïve 天气 🙂", "\u2028\u2029", "\ud800",
          0, 1, -7, 10**30, 0.0, -0.0, 1.5, 1e16, 1e-7, 123456789.125, 2.2250738585072014e-308, True, False, None]


def _value(rng: random.Random, depth: int):
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return rng.choice(LEAVES)
    if roll < 0.7:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if roll < 0.8:
        return tuple(_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    return {rng.choice([s for s in LEAVES if isinstance(s, str)]) + str(i): _value(rng, depth + 1) for i in range(rng.randrange(4))}


@pytest.mark.parametrize("indent", [1, 2, 4])
def test_random_values_are_written_as_json_dumps_writes_them(indent):
    rng = random.Random(indent)
    for _ in range(2000):
        value = _value(rng, 0)
        depth = rng.randrange(3)
        expected = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False).replace("\n", "\n" + " " * indent * depth)
        assert dumps_indented(value, indent, depth) == expected


class Text(str):
    pass


@pytest.mark.parametrize("value", [{1: "int key"}, {None: 1, True: 2, 1.5: 3}, {"a": Text("subclass")}, [OrderedDict(b=1, a=2)],
                                   {"enum-like": __import__("enum").IntEnum("E", "X").X}])
def test_what_the_fast_path_does_not_encode_is_written_by_json_dumps(value):
    assert dumps_indented(value, 2, 1) == json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n  ")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), [float("-inf")], {"x": {"y": float("nan")}}])
def test_nan_and_infinity_are_refused_as_json_dumps_refuses_them(bad):
    with pytest.raises(ValueError):
        json.dumps(bad, allow_nan=False)
    with pytest.raises(ValueError):
        dumps_indented(bad)


def test_an_object_json_cannot_encode_raises_as_there():
    with pytest.raises(TypeError):
        dumps_indented({"x": object()})
