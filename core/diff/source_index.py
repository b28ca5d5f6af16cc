"""Finding the file and line that hold an expected value, in JSON and YAML alike."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Iterable, Optional

from agentdiff.core.diff.model import SourceLocation
from agentdiff.core.diff.tree import render_path
from agentdiff.core.formats.load_error import child_key, locate
from agentdiff.core.formats.source_file import SourceFileError, SourceText, parse_source
from agentdiff.core.traces.model import Origin


class SourceIndex:
    """The baseline files of a diff, parsed once, so divergences can be located by path.

    A path is resolved against the data as written (snake_case or camelCase keys); where it leads
    past what exists (an added key, a value the file leaves out), the nearest enclosing value is
    located instead.
    """

    def __init__(self, sources: Iterable[SourceText] = ()) -> None:
        self._sources: dict[str, SourceText] = {}
        self._data: dict[str, Any] = {}
        for source in sources:
            self.add(source)

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
        if origin.file not in self._data:
            self._data[origin.file] = _parsed(source, kind)
        found = existing_prefix(self._data[origin.file], origin.path)
        position = locate(source.text, found, kind)
        line, column = position if position else (None, None)
        return SourceLocation(origin.file, line, column, render_path(found))


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
