"""The cases of one loaded eval set file, kept compact.

A suite of many thousand cases would hold one pydantic model tree per case (several KB each) for as long
as it is loaded. Instead, a file whose every case validates keeps each case's eval_id and the span of its
text in the file; the case's model is built again from that span when it is asked for, and the last
`KEPT` built are kept. Small in-memory sets (legacy files, agents-cli datasets) keep their models.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
import threading
from array import array
from collections import OrderedDict
from typing import Any, Iterator, Optional, Sequence, Union

from agentdiff.core.formats.case_check import case_facts, check_case
from agentdiff.core.formats.eval_set import EvalCase
from agentdiff.core.formats.packed_text import PackedText
from agentdiff.core.formats.source_file import MAX_DEPTH, SourceText, deeper_than, lone_surrogate
from pydantic import ValidationError

#: Models built from spans that stay built, over every loaded file: more than the cases a run or the TUI
#: has in flight at once.
KEPT = 1024

_KEPT: "OrderedDict[tuple[int, int], EvalCase]" = OrderedDict()  # (the store's serial, the case's index) → its model
_KEPT_LOCK = threading.Lock()  # the workbench builds cases in threads too
_SERIALS = itertools.count()

_SPACE = re.compile(r"[ \t\n\r]*")
_NEWLINE = re.compile(r"\n")


class EvalCases(Sequence[EvalCase]):
    """A file's eval cases in order: `cases[i]` is the i-th case's model; `eval_ids` are known without one."""

    def __init__(self, eval_ids: Sequence[str], turns: Sequence[Optional[int]], models: Optional[Sequence[EvalCase]] = None,
                 text: Optional[str] = None, bounds: Sequence[int] = (), app_names: Sequence[Optional[str]] = ()) -> None:
        self.eval_ids: tuple[str, ...] = tuple(eval_ids)
        self.turns: tuple[Optional[int], ...] = tuple(turns)  # each conversation's length; None: a scenario
        #: each case's `session_input.app_name` (what names its agent), when any case has one
        self.app_names: tuple[Optional[str], ...] = tuple(app_names) if any(app_names) else ()
        self._models = tuple(models) if models is not None else None
        self._text: Union[str, PackedText, None] = text
        self._source: Optional[SourceText] = None  # the file's text as held elsewhere too (packed with ours)
        self._bounds = array("q", bounds)  # each case's start and end in `text`, one after the other: 16 bytes a case
        self._serial = next(_SERIALS)
        self._lines: Optional[array] = None
        self._lock = threading.Lock()

    @classmethod
    def of_models(cls, models: Sequence[EvalCase]) -> "EvalCases":
        return cls([m.eval_id for m in models], [turns_of(m) for m in models], models=models, app_names=[app_name_of(m) for m in models])

    def app_name(self, index: int) -> Optional[str]:
        return self.app_names[index] if self.app_names else None

    @property
    def runnable(self) -> bool:
        """Any case has a conversation or a scenario (a file of `[]`, or of empty conversations, has none)."""
        return any(turns is None or turns for turns in self.turns)

    def __len__(self) -> int:
        return len(self.eval_ids)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if self._models is not None:
            return self._models[index]
        if index < 0:
            index += len(self.eval_ids)
        if not 0 <= index < len(self.eval_ids):
            raise IndexError(index)
        key = (self._serial, index)
        with _KEPT_LOCK:
            model = _KEPT.get(key)
            if model is not None:
                _KEPT.move_to_end(key)
                return model
        assert self._text is not None
        if self._source is not None:  # its first case built: the suite is held, so its text is packed
            self._pack()
        start, end = self._span(index)
        model = EvalCase.model_validate(json.loads(self._text[start:end]))  # as it was validated at load
        with _KEPT_LOCK:
            _KEPT[key] = model
            while len(_KEPT) > KEPT:
                _KEPT.popitem(last=False)
        return model

    def share_text(self, source: SourceText) -> None:
        """`source` holds the same text: when this file's cases are first built, both hold it packed."""
        self._source = source

    def _pack(self) -> None:
        with self._lock:
            source, self._source = self._source, None
            if source is not None and isinstance(self._text, str):
                self._text = source.pack(self._text)

    def span_of(self, index: int) -> Optional[tuple[int, int]]:
        """Where case `index` starts and ends in the file's text; None when the cases are kept as models."""
        return self._span(index) if self._text is not None and 0 <= index < len(self) else None

    def _span(self, index: int) -> tuple[int, int]:
        return self._bounds[2 * index], self._bounds[2 * index + 1]

    def _texts(self) -> list[str]:
        assert self._text is not None
        return [self._text[self._bounds[i]:self._bounds[i + 1]] for i in range(0, len(self._bounds), 2)]

    def record(self) -> dict[str, list]:
        """What `from_record` needs, beside the text, to make these cases again (JSON values only)."""
        return {"eval_ids": list(self.eval_ids), "turns": list(self.turns), "app_names": list(self.app_names), "bounds": list(self._bounds)}

    @classmethod
    def from_record(cls, text: str, record: dict[str, list]) -> "EvalCases":
        """The cases `record` kept of `text`; ValueError or TypeError when the record does not fit it."""
        eval_ids, turns, apps, bounds = record["eval_ids"], record["turns"], record["app_names"], record["bounds"]
        count = len(eval_ids)
        if (len(turns) != count or len(bounds) != 2 * count or (apps and len(apps) != count)
                or not all(isinstance(e, str) for e in eval_ids) or (bounds and not 0 <= bounds[0] <= bounds[-1] <= len(text))):
            raise ValueError("the record does not fit the text")
        return cls(eval_ids, turns, text=text, bounds=bounds, app_names=apps)

    def text_of(self, index: int) -> Optional[tuple[str, int, int]]:
        """Case `index`'s own text, and the 1-based line and column it starts at in the file; None when
        the cases are kept as models. What locates a value in one case without reading the whole file."""
        if self._text is None or not 0 <= index < len(self):
            return None
        with self._lock:
            if self._lines is None:  # where each line starts: made once, when a first value is located
                self._lines = array("q", [0] + [m.end() for m in _NEWLINE.finditer(str(self._text))])
        start, end = self._span(index)
        line = bisect.bisect_right(self._lines, start)
        return self._text[start:end], line, start - self._lines[line - 1] + 1

    def __iter__(self) -> Iterator[EvalCase]:
        for index in range(len(self.eval_ids)):
            yield self[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvalCases):
            return NotImplemented
        if self is other:
            return True
        if self._text is not None and other._text is not None:
            return self.eval_ids == other.eval_ids and self._texts() == other._texts()
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EvalCases({len(self)} cases)"


def turns_of(case: EvalCase) -> Optional[int]:
    return len(case.conversation) if case.conversation is not None else None


def app_name_of(case: EvalCase) -> Optional[str]:
    return case.session_input.app_name if case.session_input is not None else None


def read_compact(text: str) -> Optional[tuple[dict[str, Any], EvalCases]]:
    """An eval set file's top-level fields but its cases, and its cases as spans of `text`, when the text
    is one JSON object whose every case validates (and none is nested too deeply, and no escape is half a
    surrogate pair); else None, and the caller reads the file whole, for its errors. The text is read once:
    the top-level object by hand, each value by the json module's own scanner (so a value is exactly
    what `json.loads` gives, and a repeated key keeps its last value), and each case is validated and let
    go, so not even loading holds every case's model at once."""
    if ("\\u" in text or "\\U" in text) and lone_surrogate(text) is not None:
        return None
    try:
        return _scan(text)
    except (ValueError, RecursionError, ValidationError):  # not JSON, or a case that does not validate
        return None


def _scan(text: str) -> Optional[tuple[dict[str, Any], EvalCases]]:
    decoder = json.JSONDecoder()
    space = _SPACE.match
    at = space(text, 0).end()  # type: ignore[union-attr]
    if text[at : at + 1] != "{":
        return None
    at = space(text, at + 1).end()  # type: ignore[union-attr]
    header: dict[str, Any] = {}
    cases: Optional[EvalCases] = None
    while text[at : at + 1] == '"':
        key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
        at = space(text, at).end()  # type: ignore[union-attr]
        if text[at : at + 1] != ":":
            return None
        at = space(text, at + 1).end()  # type: ignore[union-attr]
        if key == "eval_cases":  # snake_case only, as EvalSet reads it
            if text[at : at + 1] != "[":
                return None
            cases, at = _cases(decoder, text, at)
        else:
            header[key], at = decoder.raw_decode(text, at)
            if deeper_than(header[key], MAX_DEPTH - 1):  # the top-level object is the first level
                return None
        at = space(text, at).end()  # type: ignore[union-attr]
        if text[at : at + 1] != ",":
            break
        at = space(text, at + 1).end()  # type: ignore[union-attr]
        if text[at : at + 1] != '"':
            return None
    if cases is None or text[at : at + 1] != "}" or space(text, at + 1).end() != len(text):  # type: ignore[union-attr]
        return None
    return header, cases


def _cases(decoder: json.JSONDecoder, text: str, at: int) -> tuple[EvalCases, int]:
    """The cases of the `eval_cases` array whose `[` is at `at`, each validated
    (`case_check`); and where the array ends."""
    eval_ids: list[str] = []
    turns: list[Optional[int]] = []
    apps: list[Optional[str]] = []
    bounds = array("q")
    space = _SPACE.match
    at = space(text, at + 1).end()  # type: ignore[union-attr]
    if text[at : at + 1] == "]":
        return EvalCases(eval_ids, turns, text=text, bounds=bounds, app_names=apps), at + 1
    while True:
        value, end = decoder.raw_decode(text, at)
        # each level opens a bracket: a case with fewer brackets than the limit cannot nest past it
        if text.count("{", at, end) + text.count("[", at, end) > MAX_DEPTH - 2 and deeper_than(value, MAX_DEPTH - 2):
            raise ValueError("nested too deeply")
        facts = case_facts(check_case(value))  # validated as EvalCase validates it, without its model
        eval_ids.append(facts[0])
        turns.append(facts[1])
        apps.append(facts[2])
        bounds.append(at)
        bounds.append(end)
        at = space(text, end).end()  # type: ignore[union-attr]
        if text[at : at + 1] == ",":
            at = space(text, at + 1).end()  # type: ignore[union-attr]
            continue
        if text[at : at + 1] == "]":
            return EvalCases(eval_ids, turns, text=text, bounds=bounds, app_names=apps), at + 1
        raise ValueError("not an array")
