"""Finding the file and line that hold an expected value, in JSON and YAML alike."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Iterable, Mapping, Optional

from agentdiff.core.diff.model import SourceLocation
from agentdiff.core.diff.tree import render_path
from agentdiff.core.formats.eval_cases import EvalCases
from agentdiff.core.formats.load_error import child_key, locate
from agentdiff.core.formats.source_file import SourceFileError, SourceText, parse_source
from agentdiff.core.traces.model import Origin


class SourceIndex:
    """The baseline files of a diff, parsed once, so divergences can be located by path.

    A path is resolved against the data as written (snake_case or camelCase keys); where it leads
    past what exists (an added key, a value the file leaves out), the nearest enclosing value is
    located instead.
    """

    def __init__(self, sources: Iterable[SourceText] = (), cases: Optional[Mapping[str, EvalCases]] = None) -> None:
        """`cases`: an eval set file's cases by its display name, when they are kept as spans of its text:
        a value in a case is then located in that case's text alone, however big the file."""
        self._sources: dict[str, SourceText] = {}
        self._data: dict[str, Any] = {}
        self._cases = dict(cases or {})
        for source in sources:
            self.add(source)

    @classmethod
    def of_eval_set(cls, loaded) -> "SourceIndex":
        """The index of one eval set file (a `LoadedEvalSet`), its values located case by case."""
        return cls([loaded.source], {loaded.source.display: loaded.cases})

    def add(self, source: SourceText) -> None:
        self._sources[source.display] = source
        self._data.pop(source.display, None)

    def __call__(self, origin: Origin) -> Optional[SourceLocation]:
        return self.locate(origin)

    def locate(self, origin: Origin) -> SourceLocation:
        source = self._sources.get(origin.file)
        if source is None:
            return SourceLocation(origin.file, path=render_path(origin.path))
        kind = "yaml" if source.path.suffix in (".yaml", ".yml") else "json"
        in_case = self._in_case(origin)
        if in_case is not None:
            return in_case
        if origin.file not in self._data:
            self._data[origin.file] = _parsed(source, kind)
        found = existing_prefix(self._data[origin.file], origin.path)
        position = locate(source.text, found, kind)
        line, column = position if position else (None, None)
        return SourceLocation(origin.file, line, column, render_path(found))


    def _in_case(self, origin: Origin) -> Optional[SourceLocation]:
        cases, path = self._cases.get(origin.file), origin.path
        if cases is None or len(path) < 2 or path[0] != "eval_cases" or not isinstance(path[1], int):
            return None
        part = cases.text_of(path[1])
        if part is None:
            return None
        text, line, column = part
        found = existing_prefix(json.loads(text), path[2:])
        position = locate(text, found, "json")
        full = ["eval_cases", path[1], *found]
        if position is None:
            return SourceLocation(origin.file, path=render_path(full))
        at_line, at_column = position
        return SourceLocation(origin.file, line + at_line - 1, at_column + (column - 1 if at_line == 1 else 0), render_path(full))


#: Parsed baseline files shared by every case's index, by content: the cases of one eval set (a
#: thousand, say) locate their values in one parse of it, not one each. Read only.
_PARSED: "OrderedDict[tuple[str, str, str], Any]" = OrderedDict()
_KEPT = 16
_LOCK = threading.Lock()


def _parsed(source: SourceText, kind: str) -> Any:
    key = (source.display, source.sha256, kind)
    with _LOCK:  # cases are scored in threads
        if key in _PARSED:
            _PARSED.move_to_end(key)
            return _PARSED[key]
    try:
        data = parse_source(source, kind)
    except SourceFileError:
        data = None
    with _LOCK:
        _PARSED[key] = data
        while len(_PARSED) > _KEPT:
            _PARSED.popitem(last=False)
    return data


def existing_prefix(data: Any, path: tuple[str | int, ...]) -> list[str | int]:
    """The longest prefix of `path` that exists in `data`, keys spelled as the data spells them."""
    found: list[str | int] = []
    node = data
    for part in path:
        if isinstance(node, dict) and isinstance(part, str):
            key = child_key(node, part)
            if key is None:
                break
            found.append(key)
            node = node[key]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            found.append(part)
            node = node[part]
        else:
            break
    return found
