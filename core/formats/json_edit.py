"""Editing a hand-maintained JSON file in place: when a new baseline is accepted only the bytes of the values
that change differ, so indentation, key order, inline arrays, line endings, escapes and the final newline stay
as the user wrote them, and editing back to the old data restores the file byte for byte (undo).

Rules:
- Existing keys keep their positions. A new key goes right after the key that precedes it in `new_data`
  (before the first kept key if none does): keys added to a loaded dict are appended, and an undo puts a
  deleted key back where it was.
- Deleting a member removes its text, one adjacent comma and the whitespace that separated it, exactly what
  inserting it would have added; deleting every member keeps the whitespace before the closing bracket
  (`{\\n  }`), so that re-inserting renders the member on its own line again.
- A list that grows by appending, or shrinks by dropping its tail, is edited like members; any other change
  of length replaces the whole list. An object that keeps none of its keys is replaced whole.
- New text is rendered in the style of its surroundings: on one line if the value it replaces (or the
  container it joins, or the nearest sibling that is a non-empty container) was on one line, else expanded
  with the file's indent unit, its line ending and the indentation of the line it starts on; separators,
  and escaping of non-ASCII text, follow the file. So undo is byte-exact where the old values were written
  in that style; a value written otherwise (say `[1,2]` in a file that writes `[1, 2]`) comes back restyled.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from itertools import groupby
from dataclasses import dataclass, field
from typing import Any, Optional

from json_source_map import calculate

_ESCAPED_NON_ASCII = re.compile(r"(?<!\\)(?:\\\\)*\\u(?!00[0-7])[0-9a-fA-F]{4}")


def edit_json(text: str, new_data: Any) -> str:
    """`text` (a JSON document) changed so that it parses to `new_data`, touching only what differs."""
    try:
        old = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"cannot edit: the text is not valid JSON ({error})") from error
    new = json.loads(json.dumps(new_data))  # the types JSON gives back: tuples become lists, keys strings
    if _same(old, new):
        return text
    editor = _Editor(text, _source_tree(text, old))
    editor.walk(editor.root, old, new)
    result = editor.apply()
    if not _same(json.loads(result), new):
        raise ValueError("edit_json produced text that does not parse to the new data; this is a bug")
    return result


def _same(a: Any, b: Any) -> bool:
    """Equal and written the same way: 1, 1.0 and true differ, as do 0.0 and -0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


@dataclass
class _Node:
    """Where one value sits in the text; members also carry their decoded key and where it starts."""

    start: int
    end: int
    head: int  # where the member begins: its key, or its value in a list
    key: Optional[str] = None
    key_end: int = -1
    children: list[_Node] = field(default_factory=list)


def _source_tree(text: str, data: Any) -> _Node:
    """The value spans of `text` as a tree, built from positions (json-source-map's pointers leave keys raw)."""
    entries = sorted(calculate(text).values(), key=lambda entry: entry.value_start.position)
    stack: list[_Node] = []
    for entry in entries:
        node = _Node(entry.value_start.position, entry.value_end.position, entry.value_start.position)
        if entry.key_start is not None:
            node.head, node.key_end = entry.key_start.position, entry.key_end.position
            node.key = json.loads(text[node.head : node.key_end])
        while stack and stack[-1].end <= node.start:
            stack.pop()
        if stack:
            stack[-1].children.append(node)
        stack.append(node)
    if not stack or not _matches(stack[0], data):
        raise ValueError("cannot edit in place: duplicate keys, or keys containing '/', confuse the source map")
    return stack[0]


def _matches(node: _Node, data: Any) -> bool:
    children = node.children
    if isinstance(data, dict):
        keys = [child.key for child in children]
        return len(keys) == len(data) == len(set(keys) & data.keys()) and all(
            _matches(child, data[child.key]) for child in children
        )
    if isinstance(data, list):
        return len(children) == len(data) and all(
            child.key is None and _matches(child, item) for child, item in zip(children, data)
        )
    return not children


@dataclass(frozen=True)
class _Style:
    """How the file writes JSON: line ending, indent unit, separators, and whether it escapes non-ASCII."""

    newline: str
    unit: str
    item_sep: str
    key_sep: str
    ascii_only: bool


def _detect_style(text: str, root: _Node) -> _Style:
    key_seps: Counter[str] = Counter()
    item_seps: Counter[str] = Counter()
    nodes = [root]
    for node in nodes:
        nodes.extend(node.children)
        if node.key is not None:
            key_seps[text[node.key_end : node.start]] += 1
        for before, after in zip(node.children, node.children[1:]):
            item_seps[text[before.end : after.head]] += 1
    indents = [re.match(r"[ \t]*", line).group() for line in text.split("\n") if line.strip()]
    widths = [len(indent) for indent in indents]
    steps = [after - before for before, after in zip(widths, widths[1:]) if after > before]
    unit = "\t" if any(indent.startswith("\t") for indent in indents) else " " * min(steps, default=2)
    raw_non_ascii = any(ord(char) > 127 for char in text)
    return _Style(
        newline="\r\n" if "\r\n" in text else "\n",
        unit=unit,
        item_sep=_most_common(item_seps, ", "),
        key_sep=_most_common(key_seps, ": "),
        ascii_only=not raw_non_ascii and _ESCAPED_NON_ASCII.search(text) is not None,
    )


def _most_common(counts: Counter[str], default: str) -> str:
    inline = [sep for sep, _ in counts.most_common() if "\n" not in sep]
    return inline[0] if inline else default


class _Editor:
    """Collects span edits (start, end, replacement) by walking old and new data together."""

    def __init__(self, text: str, root: _Node) -> None:
        self.text, self.root = text, root
        self.style = _detect_style(text, root)
        self.edits: list[tuple[int, int, str]] = []

    def walk(self, node: _Node, old: Any, new: Any) -> None:
        if isinstance(old, dict) and isinstance(new, dict):
            self.edit_object(node, old, new)
        elif isinstance(old, list) and isinstance(new, list):
            self.edit_list(node, old, new)
        elif not _same(old, new):
            self.replace(node, new)

    def edit_object(self, node: _Node, old: dict, new: dict) -> None:
        index = {child.key: i for i, child in enumerate(node.children)}
        added: dict[int, list[tuple[Optional[str], Any]]] = {}
        anchor = -1  # the kept member new keys follow; -1: before the first kept member
        for key, value in new.items():
            if key in old:
                anchor = index[key]
            else:
                added.setdefault(anchor, []).append((key, value))
        kept = [child for child in node.children if child.key in new]
        if added and node.children and not kept:
            self.replace(node, new)
            return
        for child in kept:
            self.walk(child, old[child.key], new[child.key])
        self.delete(node, [i for i, child in enumerate(node.children) if child.key not in new])
        first_kept = index[kept[0].key] if kept else 0
        for anchor, members in added.items():
            self.insert(node, anchor, members, first_kept)

    def edit_list(self, node: _Node, old: list, new: list) -> None:
        if len(old) == len(new):
            for child, old_item, new_item in zip(node.children, old, new):
                self.walk(child, old_item, new_item)
        elif not all(map(_same, old, new)):
            self.replace(node, new)
        elif len(new) > len(old):
            self.insert(node, len(old) - 1, [(None, item) for item in new[len(old) :]])
        else:
            self.delete(node, list(range(len(new), len(old))))

    def replace(self, node: _Node, new: Any) -> None:
        inline = "\n" not in self.text[node.start : node.end]
        self.edits.append((node.start, node.end, self.render(new, inline, self.line_indent(node.start))))

    def delete(self, node: _Node, indices: list[int]) -> None:
        """Remove runs of members with one comma and the whitespace inserting them would have added."""
        children, last = node.children, len(node.children) - 1
        for _, run in groupby(enumerate(indices), key=lambda pair: pair[1] - pair[0]):
            first, *_, final = [index for _, index in run] * 2
            if final < last:
                self.edits.append((children[first].head, children[final + 1].head, ""))
            elif first > 0:
                self.edits.append((children[first - 1].end, children[final].end, ""))
            else:
                self.edits.append((node.start + 1, children[final].end, ""))

    def insert(self, node: _Node, anchor: int, members: list[tuple[Optional[str], Any]], first_kept: int = 0) -> None:
        """Add members after child `anchor`, or before child `first_kept` when `anchor` is -1."""
        children, style = node.children, self.style
        inline = "\n" not in self.text[node.start : node.end]
        if not children:
            at, gap = node.start + 1, "" if inline else style.newline + self.line_indent(node.start) + style.unit
        else:
            near = anchor if anchor >= 0 else first_kept
            at = children[anchor].end if anchor >= 0 else children[first_kept].head
            gap, inline = self.separator(node, near), inline or self.sibling_inline(node, near)
        base = gap.rpartition("\n")[2] if "\n" in gap else self.line_indent(at)
        rendered = [self.render_member(node, key, value, inline, base) for key, value in members]
        if not children:
            new = (style.item_sep if inline else ",").join(gap + item for item in rendered)
        elif anchor >= 0:
            new = "".join("," + gap + item for item in rendered)
        else:
            new = "".join(item + "," + gap for item in rendered)
        self.edits.append((at, at, new))

    def sibling_inline(self, node: _Node, near: int) -> bool:
        """Whether the sibling nearest child `near` that is a non-empty container is written on one line."""
        for _, child in sorted(enumerate(node.children), key=lambda pair: abs(pair[0] - near)):
            if child.children:
                return "\n" not in self.text[child.start : child.end]
        return False

    def separator(self, node: _Node, i: int) -> str:
        """The whitespace after the comma before child `i`, or before a member that follows it."""
        children, i = node.children, max(i, min(1, len(node.children) - 1))
        if i > 0:
            return self.text[children[i - 1].end : children[i].head].partition(",")[2]
        lead = self.text[node.start + 1 : children[0].head]
        return lead if "\n" in lead else self.style.item_sep.partition(",")[2]

    def render_member(self, node: _Node, key: Optional[str], value: Any, inline: bool, base: str) -> str:
        body = self.render(value, inline, base)
        if key is None:
            return body
        seps = [self.text[child.key_end : child.start] for child in node.children[:1] if child.key is not None]
        key_sep = seps[0] if seps and "\n" not in seps[0] else self.style.key_sep
        return json.dumps(key, ensure_ascii=self.style.ascii_only) + key_sep + body

    def render(self, value: Any, inline: bool, base: str) -> str:
        style = self.style
        if inline or not value or not isinstance(value, (dict, list)):
            return json.dumps(value, ensure_ascii=style.ascii_only, separators=(style.item_sep, style.key_sep))
        expanded = json.dumps(value, ensure_ascii=style.ascii_only, indent=style.unit, separators=(",", style.key_sep))
        return expanded.replace("\n", style.newline + base)

    def line_indent(self, position: int) -> str:
        line_start = self.text.rfind("\n", 0, position) + 1
        return re.match(r"[ \t]*", self.text[line_start:]).group()

    def apply(self) -> str:
        """The text with every edit applied, last first, so earlier positions stay valid."""
        text, limit = self.text, len(self.text)
        for start, end, replacement in sorted(self.edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
            if end > limit:
                raise ValueError("edit_json planned overlapping edits; this is a bug")
            text, limit = text[:start] + replacement + text[end:], start
        return text
