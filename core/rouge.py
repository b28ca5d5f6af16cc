"""ROUGE-1 F-measure exactly as ADK 2.13's `response_match_score` computes it.

Tokenisation (in this order): NFKC and lowercase; each CJK character is a token; Thai, Lao, Khmer
and Myanmar split into grapheme clusters (base + combining marks); other characters are kept when
alphanumeric or a combining mark, else they separate words. ASCII words go through rouge-score's
rules (Porter stemming from NLTK, only for tokens longer than 3 characters); non-ASCII words are
kept unstemmed. Score: F = 2PR/(P+R) over clipped unigram counts, 0.0 when P+R is 0 (so empty vs
empty is 0.0).

Stems and whole-text tokenisations are cached: scoring the same reference against many runs, or
the same common words across a suite, pays for each once. NLTK is imported on first use.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Callable, NamedTuple

_ASCII_WORD = re.compile(r"[a-z0-9]+")
_stem: Callable[[str], str] | None = None


class RougeScore(NamedTuple):
    precision: float
    recall: float
    fmeasure: float


def _stemmer() -> Callable[[str], str]:
    global _stem
    if _stem is None:
        from nltk.stem import porter  # deferred: NLTK costs a second or two to import

        stem = porter.PorterStemmer().stem
        _stem = lru_cache(maxsize=65536)(stem)
    return _stem


def _is_cjk(code: int) -> bool:
    return 0x4E00 <= code <= 0x9FFF or 0x3040 <= code <= 0x309F or 0x30A0 <= code <= 0x30FF or 0xAC00 <= code <= 0xD7AF


def _is_non_spaced(code: int) -> bool:
    return 0x0E00 <= code <= 0x0E7F or 0x0E80 <= code <= 0x0EFF or 0x1780 <= code <= 0x17FF or 0x1000 <= code <= 0x109F


def _split_unicode(text: str) -> list[str]:
    pieces: list[str] = []
    for char in text:
        code = ord(char)
        if _is_cjk(code):
            pieces += (" ", char, " ")
        elif _is_non_spaced(code):
            if unicodedata.category(char).startswith("M"):
                pieces.append(char)
            else:
                pieces += (" ", char)
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            pieces.append(char)
        else:
            pieces.append(" ")
    return "".join(pieces).split()


@lru_cache(maxsize=65536)
def _chunk_tokens(chunk: str) -> tuple[str, ...]:
    """Tokens of one whitespace-free chunk (already NFKC-normalised and lowercased)."""
    stem = _stemmer()
    if chunk.isascii():
        # For ASCII the character rules reduce to runs of [a-z0-9].
        return tuple(stem(word) if len(word) > 3 else word for word in _ASCII_WORD.findall(chunk))
    tokens: list[str] = []
    for word in _split_unicode(chunk):
        if word.isascii():
            tokens += (stem(w) if len(w) > 3 else w for w in _ASCII_WORD.findall(word))
        else:
            tokens.append(word)
    return tuple(tokens)


@lru_cache(maxsize=8192)
def tokenize(text: str) -> tuple[str, ...]:
    """The tokens ADK's ROUGE-1 counts for `text`.

    Whitespace only ever separates words, so the text is normalised whole, split on whitespace,
    and each chunk tokenised (and cached) on its own: common words cost one lookup.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    for chunk in text.split():
        tokens += _chunk_tokens(chunk)
    return tuple(tokens)


def rouge1(candidate: str, reference: str) -> RougeScore:
    """ROUGE-1 of `candidate` (the actual response) against `reference` (the expected one)."""
    target = Counter(tokenize(reference))
    prediction = Counter(tokenize(candidate))
    overlap = sum(min(count, prediction[token]) for token, count in target.items())
    precision = overlap / max(sum(prediction.values()), 1)
    recall = overlap / max(sum(target.values()), 1)
    if precision + recall > 0:
        fmeasure = 2 * precision * recall / (precision + recall)
    else:
        fmeasure = 0.0
    return RougeScore(precision, recall, fmeasure)
