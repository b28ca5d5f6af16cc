"""Editing a hand-maintained JSON file in place: accepting a new baseline changes only the bytes of the values
that differ, and editing back to the old data (undo) restores the file byte for byte.

- Existing keys keep their positions; a new key goes right after the key before it in `new_data` (first if
  none), so keys added to a loaded dict are appended and an undo puts a deleted key back where it was.
- Deleting a member removes it with one comma and the whitespace inserting it adds; deleting every member
  keeps the whitespace before the closing bracket (`{\\n  }`), so a re-inserted member gets its line back.
- A list grown or cut at the end is edited member-wise; any other change of length replaces it whole, as
  does an object that keeps none of its keys.
- New text follows its surroundings: on one line if the value it replaces was; a new member, or a container
  replacing a scalar, on one line if its container is, or else its container's nearest non-empty container
  member is. An empty list `[]` (ADK writes `"tool_responses": []`) shows no style either: filled with
  containers, it is styled like a member of its parent (in an expanded file, expanded, its closing
  bracket on a line of its own); so a list of containers that was on one line, emptied and filled again,
  comes back expanded there (an empty `{}` keeps its line). A list of containers emptied is written `[]`. Otherwise expanded, with the file's indent unit, line ending and the indentation of its line.
  Separators and \\u escapes of non-ASCII follow the file. So undo is byte-exact where old values were
  written in that style; one written otherwise (`[1,2]` in a file of `[1, 2]`) comes back restyled.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Optional

from json_source_map import calculate

_ESCAPED_NON_ASCII = re.compile(r"(?<!\\)(?:\\\\)*\\u(?!00[0-7])[0-9a-fA-F]{4}")
_INDENT = re.compile(r"[ \t]*")


def edit_json(text: str, new_data: Any) -> str:
    """`text` (a JSON document) changed so that it parses to `new_data`, touching only what differs.

    ValueError if `text` is not JSON, or cannot be edited in place (a repeated key, or keys with '/' that
    json-source-map cannot tell apart)."""
    try:
        old = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"cannot edit: the text is not valid JSON ({error})") from error
    new = json.loads(json.dumps(new_data))  # the types JSON gives back: tuples become lists, keys strings
    if _same(old, new):
        return text
    editor = _Editor(text, root := _source_tree(text, old))
    editor.walk(root, old, new)
    result = editor.apply()
    try:
        parsed = json.loads(result)
    except json.JSONDecodeError as error:
        raise ValueError(f"edit_json produced invalid JSON ({error}); this is a bug") from error
    if not _same(parsed, new):
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
    parent: Optional[_Node] = field(default=None, repr=False)


def _source_tree(text: str, data: Any) -> _Node:
    """The value spans of `text` as a tree, built from positions (json-source-map's pointers leave keys raw)."""
    json.loads(text, object_pairs_hook=_unique)
    source_map = calculate(text)
    if len(source_map) != _count(data):  # pointers collided and entries were lost
        raise ValueError("cannot edit in place: keys containing '/' make the JSON source map ambiguous")
    entries = sorted(source_map.values(), key=lambda entry: entry.value_start.position)
    stack: list[_Node] = []
    for entry in entries:
        node = _Node(entry.value_start.position, entry.value_end.position, entry.value_start.position)
        if entry.key_start is not None:
            node.head, node.key_end = entry.key_start.position, entry.key_end.position
            raw = text[node.head : node.key_end]
            node.key = json.loads(raw) if "\\" in raw else raw[1:-1]
        while stack and stack[-1].end <= node.start:
            stack.pop()
        if stack:
            node.parent = stack[-1]
            stack[-1].children.append(node)
        stack.append(node)
    return stack[0]


def _unique(pairs: list[tuple[str, Any]]) -> dict:
    repeated = [key for key, times in Counter(key for key, _ in pairs).items() if times > 1]
    if repeated:
        raise ValueError(f"cannot edit in place: an object repeats the key {repeated[0]!r}")
    return dict(pairs)


def _count(data: Any) -> int:
    children = data.values() if isinstance(data, dict) else data if isinstance(data, list) else ()
    return 1 + sum(map(_count, children))


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
    indents = [_INDENT.match(line).group() for line in text.split("\n") if line.strip()]
    widths = [len(indent) for indent in indents]
    steps = [after - before for before, after in zip(widths, widths[1:]) if after > before]
    unit = "\t" if any(indent.startswith("\t") for indent in indents) else " " * min(steps, default=2)
    item_sep, key_sep = (next((sep for sep, _ in seps.most_common() if "\n" not in sep), "") for seps in (item_seps, key_seps))
    return _Style(
        newline="\r\n" if "\r\n" in text else "\n",
        unit=unit,
        item_sep=item_sep or ("," if key_sep == ":" else ", "),  # either one tells if the file is compact
        key_sep=key_sep or (":" if item_sep == "," else ": "),
        ascii_only=text.isascii() and _ESCAPED_NON_ASCII.search(text) is not None,
    )


class _Editor:
    """Collects span edits (start, end, replacement) by walking old and new data together."""

    def __init__(self, text: str, root: _Node) -> None:
        self.text = text
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
        """A scalar shows no style, so a container replacing one is styled like a member of its parent."""
        inline = "\n" not in self.text[node.start : node.end]
        if node.parent and not node.children and new and isinstance(new, (dict, list)):
            inline = self.inline_in(node.parent, node.parent.children.index(node))
        self.edits.append((node.start, node.end, self.render(new, inline, self.line_indent(node.start))))

    def delete(self, node: _Node, indices: list[int]) -> None:
        """Remove runs of members with one comma and the whitespace inserting them would have added. A
        list of containers emptied is `[]`, as filling `[]` expands them again (`insert`)."""
        children, last = node.children, len(node.children) - 1
        if self.text[node.start] == "[" and len(indices) == len(children) and children \
                and all(self.text[child.start] in "[{" for child in children):
            self.edits.append((node.start, node.end, "[]"))
            return
        for _, group in groupby(enumerate(indices), key=lambda pair: pair[1] - pair[0]):
            run = [index for _, index in group]
            first, final = run[0], run[-1]
            if final < last:
                self.edits.append((children[first].head, children[final + 1].head, ""))
            elif first > 0:
                self.edits.append((children[first - 1].end, children[final].end, ""))
            else:
                self.edits.append((node.start + 1, children[final].end, ""))

    def insert(self, node: _Node, anchor: int, members: list[tuple[Optional[str], Any]], first_kept: int = 0) -> None:
        """Add members after child `anchor`, or before child `first_kept` when `anchor` is -1."""
        children, style = node.children, self.style
        closing = ""
        if not children:
            inline = "\n" not in self.text[node.start : node.end]
            if self.text[node.start : node.end] == "[]" and node.parent is not None \
                    and any(isinstance(value, (dict, list)) and value for _, value in members):
                # `[]` shows no style: filled with containers, it is styled like a member of its parent
                inline = self.inline_in(node.parent, node.parent.children.index(node))
                closing = "" if inline else style.newline + self.line_indent(node.start)
            at, gap = node.start + 1, "" if inline else style.newline + self.line_indent(node.start) + style.unit
        else:
            near = anchor if anchor >= 0 else first_kept
            at = children[anchor].end if anchor >= 0 else children[first_kept].head
            gap, inline = self.separator(node, near), self.inline_in(node, near)
        base = gap.rpartition("\n")[2] if "\n" in gap else self.line_indent(at)
        rendered = [self.render_member(node, key, value, inline, base) for key, value in members]
        if not children:
            new = (style.item_sep if inline else ",").join(gap + item for item in rendered) + closing
        elif anchor >= 0:
            new = "".join("," + gap + item for item in rendered)
        else:
            new = "".join(item + "," + gap for item in rendered)
        self.edits.append((at, at, new))

    def inline_in(self, node: _Node, near: int) -> bool:
        """Whether a new value near child `near` goes on one line: if `node` is, or the nearest child that
        is a non-empty container is."""
        if "\n" not in self.text[node.start : node.end]:
            return True
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
        return _INDENT.match(self.text, self.text.rfind("\n", 0, position) + 1).group()

    def apply(self) -> str:
        """The text with every edit applied, in one pass (an insertion may meet a deletion, nothing overlaps)."""
        pieces, done = [], 0
        for start, end, replacement in sorted(self.edits, key=lambda edit: edit[:2]):
            if start < done:
                raise ValueError("edit_json planned overlapping edits; this is a bug")
            pieces += [self.text[done:start], replacement]
            done = end
        return "".join(pieces) + self.text[done:]
