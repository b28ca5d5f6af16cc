"""Editing the cases of one eval set file: what accept and record change, and the file's new text."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from agentdiff.core.formats.eval_set_files import LoadedEvalSet
from agentdiff.core.formats.json_edit import edit_json


@dataclass
class EvalFileEdit:
    """An eval set file being accepted or recorded into: `data` is what they edit. A set kept as spans of
    its text is edited a case at a time (`data["eval_cases"]` holds the cases touched, read from their own
    text), and its text changed only within those cases' spans: a file of 50,000 cases is not read
    whole to change one."""

    loaded: LoadedEvalSet
    data: Any
    sidecar: dict[str, dict] = field(default_factory=dict)  # eval_id → registration

    @classmethod
    def of(cls, loaded: LoadedEvalSet) -> "EvalFileEdit":
        if loaded.cases.span_of(0) is not None:
            return cls(loaded, {"eval_cases": _Touched(loaded)})
        return cls(loaded, copy.deepcopy(loaded.raw))

    def case(self, index: int) -> Any:
        return self.data["eval_cases"][index]

    def changed(self) -> bool:
        cases = self.data["eval_cases"]
        if isinstance(cases, _Touched):
            return any(cases[i] != cases.read[i] for i in cases.read)
        return self.data != self.loaded.raw

    def text(self) -> str:
        cases = self.data["eval_cases"]
        if not isinstance(cases, _Touched):
            return edit_json(self.loaded.source.text, self.data)
        text = self.loaded.source.text
        for index in sorted((i for i in cases.read if cases[i] != cases.read[i]), reverse=True):  # from the end: earlier spans stay put
            span = self.loaded.cases.span_of(index)
            assert span is not None
            start, end = span
            line = text.rfind("\n", 0, start) + 1
            lead = text[line:start] if not text[line:start].strip() else ""  # the case's indentation, for what is added to it
            edited = edit_json(lead + text[start:end], cases[index])
            text = text[:start] + edited[len(lead):] + text[end:]
        return text


class _Touched(dict):
    """The cases of a set kept as spans that an edit touches, each parsed from its own text when first
    asked for (`read`: as parsed, to tell what changed)."""

    def __init__(self, loaded: LoadedEvalSet) -> None:
        super().__init__()
        self.loaded, self.read = loaded, {}

    def __missing__(self, index: int) -> Any:
        part = self.loaded.cases.text_of(index)
        assert part is not None
        self.read[index] = json.loads(part[0])
        self[index] = copy.deepcopy(self.read[index])
        return self[index]
