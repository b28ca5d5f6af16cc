"""ROUGE-1 F-measure exactly as ADK 2.13's `response_match_score` computes it.

Tokenisation (in this order): NFKC and lowercase; each CJK character is a token; Thai, Lao, Khmer
and Myanmar split into grapheme clusters (base + combining marks); other characters are kept when
alphanumeric or a combining mark, else they separate words. ASCII words go through rouge-score's
rules (Porter stemming from NLTK, only for tokens longer than 3 characters); non-ASCII words are
kept unstemmed. Score: F = 2PR/(P+R) over clipped unigram counts, 0.0 when P+R is 0 (so empty vs
empty is 0.0).

Before ADK 2.6 the tokenizer was rouge-score's default (`legacy_tokenize`): lowercase, then only
runs of ASCII `[a-z0-9]` are words (stemmed the same way); other characters separate words, so CJK
text has no tokens at all.

Stems and whole-text tokenisations are cached: scoring the same reference against many runs, or
the same common words across a suite, pays for each once. NLTK's stemmer is loaded on first use,
without the rest of NLTK.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import threading
import types
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, NamedTuple

_ASCII_WORD = re.compile(r"[a-z0-9]+")
_stem: Callable[[str], str] | None = None


class RougeScore(NamedTuple):
    precision: float
    recall: float
    fmeasure: float


_STEMMER_LOCK = threading.Lock()


def _porter_module() -> Any:
    """NLTK's Porter stemmer module, without running `nltk/__init__.py`.

    Importing `nltk` pulls in NumPy, SciPy and pandas (over two seconds); the stemmer needs none of
    it. Its few modules are loaded from the installed NLTK under their own names, with stand-in
    parent packages that are removed again afterwards, so a later `import nltk` is unaffected.
    Any surprise (another NLTK layout) falls back to the plain import.
    """
    if "nltk" in sys.modules:
        from nltk.stem import porter

        return porter
    spec = importlib.util.find_spec("nltk")
    if spec is None or spec.origin is None:
        raise ImportError("nltk is not installed")
    root = Path(spec.origin).parent
    added: list[str] = []
    try:
        for name, folder in (("nltk", root), ("nltk.stem", root / "stem")):
            package = types.ModuleType(name)
            package.__path__ = [str(folder)]  # type: ignore[attr-defined]
            sys.modules[name] = package
            added.append(name)
        module = None
        for name, file in (("nltk.redos", "redos.py"), ("nltk.termsec", "termsec.py"), ("nltk.stem.api", "stem/api.py"), ("nltk.stem.porter", "stem/porter.py")):
            loader_spec = importlib.util.spec_from_file_location(name, root / file)
            module = importlib.util.module_from_spec(loader_spec)  # type: ignore[arg-type]
            sys.modules[name] = module
            added.append(name)
            loader_spec.loader.exec_module(module)  # type: ignore[union-attr]
        return module
    except Exception:
        for name in added:
            sys.modules.pop(name, None)
        added.clear()
        from nltk.stem import porter

        return porter
    finally:
        for name in added:
            sys.modules.pop(name, None)


def _stemmer() -> Callable[[str], str]:
    """Loaded once, under a lock: scoring runs in threads, and the loader's stand-in modules in
    `sys.modules` must never be seen half-made by another thread."""
    global _stem
    if _stem is None:
        with _STEMMER_LOCK:
            if _stem is None:
                stem = _porter_module().PorterStemmer().stem
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


@lru_cache(maxsize=8192)
def legacy_tokenize(text: str) -> tuple[str, ...]:
    """The tokens ADK before 2.6 counted: rouge-score's default tokenizer."""
    stem = _stemmer()
    return tuple(stem(word) if len(word) > 3 else word for word in _ASCII_WORD.findall(text.lower()))


def rouge1(candidate: str, reference: str, unicode: bool = True) -> RougeScore:
    """ROUGE-1 of `candidate` (the actual response) against `reference` (the expected one); with
    `unicode` False, tokenised as ADK before 2.6 did."""
    tokens = tokenize if unicode else legacy_tokenize
    target = Counter(tokens(reference))
    prediction = Counter(tokens(candidate))
    overlap = sum(min(count, prediction[token]) for token, count in target.items())
    precision = overlap / max(sum(prediction.values()), 1)
    recall = overlap / max(sum(target.values()), 1)
    if precision + recall > 0:
        fmeasure = 2 * precision * recall / (precision + recall)
    else:
        fmeasure = 0.0
    return RougeScore(precision, recall, fmeasure)
