"""Sequence alignment and word-level text diffs.

Both are built on Google's diff-match-patch (Myers' O(ND) algorithm with common prefix/suffix
trimming, half-match speed-ups and a time budget), run over sequences of tokens encoded one
character per distinct token. Long, mostly equal sequences therefore cost little, and a
pathological input degrades to a valid but less minimal diff instead of hanging.

Words are tokenised so that the tokens concatenate back to the text: runs of letters and digits,
runs of whitespace, single punctuation characters, and one token per character for scripts written
without spaces (Chinese, Japanese, Korean syllables, Thai, Lao, Khmer, Myanmar, with any combining
marks kept on their base character). A prompt edit then reads as the words that changed, in
English and in CJK alike.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Hashable, Literal, NamedTuple, Sequence

from diff_match_patch import diff_match_patch

#: Time budget of one diff; past it the diff stays correct but may be less minimal.
DIFF_TIMEOUT_SECONDS = 0.5

WordOpKind = Literal["equal", "delete", "insert"]
OpcodeTag = Literal["equal", "delete", "insert", "replace"]

_PER_CHARACTER = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff65-\uff9f"
    "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff"
)
_TOKEN = re.compile(rf"[{_PER_CHARACTER}]|[^\W{_PER_CHARACTER}]+|\s+|.", re.DOTALL)


class WordOp(NamedTuple):
    op: WordOpKind
    text: str


class Opcode(NamedTuple):
    tag: OpcodeTag
    i1: int
    i2: int
    j1: int
    j2: int


def _engine() -> diff_match_patch:
    engine = diff_match_patch()
    engine.Diff_Timeout = DIFF_TIMEOUT_SECONDS
    return engine


def tokenize_words(text: str) -> list[str]:
    """Split `text` into word, space and punctuation tokens; `"".join(tokens) == text`."""
    tokens: list[str] = []
    for token in _TOKEN.findall(text):
        if tokens and len(token) == 1 and unicodedata.category(token).startswith("M") and not tokens[-1].isspace():
            tokens[-1] += token  # a combining mark stays with the character it modifies
        else:
            tokens.append(token)
    return tokens


class _Encoder:
    """Maps hashable tokens to single characters so diff-match-patch can diff token sequences."""

    def __init__(self) -> None:
        self._codes: dict[Hashable, str] = {}
        self.tokens: list[Hashable] = []

    def encode(self, items: Sequence[Hashable]) -> str:
        out = []
        codes = self._codes
        for item in items:
            code = codes.get(item)
            if code is None:
                number = len(self.tokens) + 1
                if number >= 0xD800:  # skip the surrogate block
                    number += 0x800
                if number > 0x10FFFF:
                    raise ValueError("too many distinct tokens to diff")
                code = chr(number)
                codes[item] = code
                self.tokens.append(item)
            out.append(code)
        return "".join(out)


def word_diff(expected: str, actual: str) -> list[WordOp]:
    """A word-level diff from `expected` to `actual`, cleaned up to read naturally.

    The `equal` and `delete` ops concatenate to `expected`; `equal` and `insert` to `actual`.
    """
    if expected == actual:
        return [WordOp("equal", expected)] if expected else []
    return list(_word_diff(expected, actual))


@lru_cache(maxsize=512)
def _word_diff(expected: str, actual: str) -> tuple[WordOp, ...]:
    # Cached: a prompt edit makes the same pair of long texts differ in every request of a trace.
    encoder = _Encoder()
    a = encoder.encode(tokenize_words(expected))
    b = encoder.encode(tokenize_words(actual))
    engine = _engine()
    diffs = engine.diff_main(a, b, False)
    engine.diff_cleanupSemantic(diffs)
    ops: list[WordOp] = []
    names = {0: "equal", -1: "delete", 1: "insert"}
    for op, chars in diffs:
        text = "".join(encoder.tokens[_decode(c)] for c in chars)  # type: ignore[misc]
        if not text:
            continue
        kind = names[op]
        if ops and ops[-1].op == kind:
            ops[-1] = WordOp(kind, ops[-1].text + text)  # type: ignore[arg-type]
        else:
            ops.append(WordOp(kind, text))  # type: ignore[arg-type]
    return tuple(_deletes_first(ops))


def _decode(char: str) -> int:
    number = ord(char)
    if number >= 0xE000:  # was shifted past the surrogate block by the encoder
        number -= 0x800
    return number - 1


def _deletes_first(ops: list[WordOp]) -> list[WordOp]:
    """Within each run of changes, put deletions before insertions (a stable reading order)."""
    out: list[WordOp] = []
    run: list[WordOp] = []
    for op in ops + [WordOp("equal", "")]:
        if op.op == "equal":
            out.extend(sorted(run, key=lambda o: o.op != "delete"))
            run = []
            if op.text:
                out.append(op)
        else:
            run.append(op)
    return out


def align(expected: Sequence[Hashable], actual: Sequence[Hashable]) -> list[Opcode]:
    """Align two sequences of hashable keys; opcodes in the style of `difflib.get_opcodes`.

    Unlike difflib (which treats frequent items as junk past 200 elements and goes quadratic on
    repeated items), this stays close to O((N+M)·D) for D differences.
    """
    n, m = len(expected), len(actual)
    prefix = 0
    while prefix < n and prefix < m and expected[prefix] == actual[prefix]:
        prefix += 1
    suffix = 0
    while suffix < n - prefix and suffix < m - prefix and expected[n - 1 - suffix] == actual[m - 1 - suffix]:
        suffix += 1
    opcodes: list[Opcode] = []
    if prefix:
        opcodes.append(Opcode("equal", 0, prefix, 0, prefix))
    middle_a, middle_b = expected[prefix : n - suffix], actual[prefix : m - suffix]
    i, j = prefix, prefix
    if middle_a and middle_b and set(middle_a).isdisjoint(middle_b):
        _push(opcodes, "delete", i, n - suffix, j, j)  # nothing in common: one replaced block
        _push(opcodes, "insert", n - suffix, n - suffix, j, m - suffix)
    elif middle_a or middle_b:
        encoder = _Encoder()
        a, b = encoder.encode(middle_a), encoder.encode(middle_b)
        for op, chars in _engine().diff_main(a, b, False):
            size = len(chars)
            if op == 0:
                _push(opcodes, "equal", i, i + size, j, j + size)
                i, j = i + size, j + size
            elif op == -1:
                _push(opcodes, "delete", i, i + size, j, j)
                i += size
            else:
                _push(opcodes, "insert", i, i, j, j + size)
                j += size
    if suffix:
        _push(opcodes, "equal", n - suffix, n, m - suffix, m)
    return opcodes


def _push(opcodes: list[Opcode], tag: OpcodeTag, i1: int, i2: int, j1: int, j2: int) -> None:
    if opcodes:
        last = opcodes[-1]
        if last.tag == tag and last.i2 == i1 and last.j2 == j1:
            opcodes[-1] = Opcode(tag, last.i1, i2, last.j1, j2)
            return
        if {last.tag, tag} <= {"delete", "insert", "replace"} and last.tag != "equal" and tag != "equal":
            opcodes[-1] = Opcode("replace", last.i1, i2, last.j1, j2)
            return
    opcodes.append(Opcode(tag, i1, i2, j1, j2))
