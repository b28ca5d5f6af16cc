"""Case ids a reader cannot tell apart: the same text in two Unicode forms (`café` composed and
decomposed), ids or eval_ids that differ only in spaces at an end or in invisible characters, and an
eval_id kept as written though it reads ambiguously (`a/b`, because `case_<n>`, the name it would
get, is another case's eval_id). `list` warns of them and the TUI marks their rows; nothing is
renamed (ids are the files' own)."""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

from agentdiff.core.project.case_ids import INDEX_PREFIX, eval_id_facts
from agentdiff.core.project.discovery import CaseRef
from agentdiff.core.project.family import family_of

_INVISIBLE = re.compile(r"[\u200b-\u200f\u2060-\u2064\ufeff\u00ad\u034f\u180e]")
_SPACES = re.compile(r"\s+")
_AMBIGUOUS = re.compile(r"(^\s|\s$|::|/|\\|[\x00-\x1f\x7f-\x9f])")


def _seen_as(text: str) -> str:
    """What a reader sees: compatibility-normalised, invisible characters gone, spaces collapsed."""
    if _plain(text):
        return text
    return _SPACES.sub(" ", _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))).strip()


def _why(a: str, b: str) -> str:
    if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return "the same text in two Unicode forms (composed and decomposed)"
    if a.strip() == b.strip():
        return "they differ only in spaces at an end"
    return "they differ only in invisible or look-alike characters"


def _plain(text: str) -> bool:
    """Printable ASCII with single spaces inside and none at the ends: seen exactly as written."""
    return text.isascii() and text.isprintable() and "  " not in text and text.strip(" ") == text


def look_alikes(refs: Iterable[CaseRef]) -> dict[str, str]:
    """Each case id that a reader could take for another's (or that reads ambiguously), with why."""
    refs = list(refs)
    notes: dict[str, str] = {}
    eval_sets, other_ids = {}, []
    keys = {ref.id: family_of(ref).eval_key(ref) for ref in refs}  # a case of a file of many, by its key there
    for ref in refs:
        if keys[ref.id] is not None:
            eval_sets.setdefault(id(ref.eval_set), ref.eval_set)
        else:
            other_ids.append(ref.id)
    if all(_plain(s.source.display) and eval_id_facts(s.cases) == (True, False) for s in eval_sets.values()) and all(map(_plain, other_ids)):
        return notes  # every id plain (a plain file, `::`, a plain key) and no eval_id ambiguous: most projects' suites

    def group(items: list[tuple[str, str]], what: str) -> None:
        # a plain text is seen as itself, so only a text that is not plain can look like another: the
        # texts seen as one of those are all that need grouping (most suites have none)
        odd = {_seen_as(text) for _, text in items if not _plain(text)}
        if not odd:
            return
        by_sight: dict[str, list[tuple[str, str]]] = {}
        for case_id, text in items:
            seen = _seen_as(text)
            if seen in odd:
                by_sight.setdefault(seen, []).append((case_id, text))
        for alike in by_sight.values():
            texts = {text for _, text in alike}
            if len(texts) < 2:
                continue
            for case_id, text in alike:
                other = next(t for t in texts if t != text)
                notes.setdefault(case_id, f"its {what} {text!r} looks like {other!r}: {_why(text, other)}")

    group([(ref.id, ref.id) for ref in refs], "id")
    by_file: dict[str, list[tuple[str, str]]] = {}
    for ref in refs:
        if keys[ref.id] is not None:
            by_file.setdefault(ref.source, []).append((ref.id, keys[ref.id]))
    for items in by_file.values():
        group(items, "eval_id")
    for ref in refs:
        eval_id = keys[ref.id]
        if eval_id is None or "::" not in ref.id or not _AMBIGUOUS.search(eval_id):
            continue
        key = ref.id.split("::", 1)[1]
        if key == eval_id:
            notes.setdefault(ref.id, f"its eval_id {key!r} reads ambiguously, and is kept as its id because the name it "
                                     f"would get ({INDEX_PREFIX}<n>) is another case's eval_id: rename one")
    return notes
