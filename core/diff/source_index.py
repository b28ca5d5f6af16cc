"""Finding the file and line that hold an expected value, in JSON and YAML alike."""

from __future__ import annotations

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
            try:
                self._data[origin.file] = parse_source(source, kind)
            except SourceFileError:
                self._data[origin.file] = None
        found = existing_prefix(self._data[origin.file], origin.path)
        position = locate(source.text, found, kind)
        line, column = position if position else (None, None)
        return SourceLocation(origin.file, line, column, render_path(found))


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
