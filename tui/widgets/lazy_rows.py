"""The case tree's rows made only when looked at, so a group of 50,000 cases costs what its screenful does.

Textual's `Tree` makes a node per row, labels each, and lays out one line per visible row on every
change of the tree's shape (a fold, a rebuild): at 50,000 cases that was a second of the app's loop.
Here a group of cases (a node whose children are all cases) holds their ids as `Leaves`, and a
case's node (`CaseNode`) is made when something asks for it: the row is drawn, the cursor lands on
it, the app selects it. Its label is made when first read, from the tree's row for that case, and
made again after a change (`relabel`). `Lines` stands in for the tree's list of laid-out lines: a
run of cases is one entry, so laying the tree out walks its agents and groups, not its cases.

Uses `Tree` internals (`_children`, `_line`, `_label`, `_TreeLine`); Textual is pinned exactly.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterator, Optional, Sequence

from rich.text import Text
from textual.widgets._tree import TreeNode, _TreeLine

_BLANK = Text()


class CaseNode(TreeNode[str]):
    """One case's row: its line follows from its group's, its label from the tree's row."""

    def __init__(self, tree, group: TreeNode[str], index: int, case_id: str) -> None:
        super().__init__(tree, group, tree._new_id(), _BLANK, case_id, expanded=False, allow_expand=False)
        self._text: Optional[Text] = None  # made when first read
        self._index = index

    @property  # type: ignore[override]
    def _label(self) -> Text:
        if self._text is None:
            self._text = self._tree.label_of(self.data or "")
        return self._text

    @_label.setter
    def _label(self, value: Text) -> None:
        self._text = value

    def relabel(self) -> None:
        """Its row changed: labelled again when next read, drawn again when on screen."""
        self._text = None
        self._updates += 1

    @property  # type: ignore[override]
    def _line(self) -> int:
        start = getattr(self._parent, "_first_line", -1)
        return -1 if start < 0 else start + 1 + self._index

    @_line.setter
    def _line(self, value: int) -> None:
        pass  # follows from its group's line


class Leaves(Sequence[TreeNode[str]]):
    """A group's cases, as its children: their ids, and the nodes made so far."""

    def __init__(self, tree, group: TreeNode[str], ids: list[str]) -> None:
        self._tree, self._group, self.ids = tree, group, ids
        self.made: dict[int, CaseNode] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.ids)))]
        if index < 0:
            index += len(self.ids)
        if not 0 <= index < len(self.ids):
            raise IndexError(index)
        node = self.made.get(index)
        if node is None:
            node = self.made[index] = CaseNode(self._tree, self._group, index, self.ids[index])
            self._tree._tree_nodes[node._id] = node
        return node

    def __iter__(self) -> Iterator[TreeNode[str]]:
        return (self[i] for i in range(len(self.ids)))

    def __contains__(self, node: object) -> bool:
        return isinstance(node, CaseNode) and self.made.get(node._index) is node

    def index(self, node, start: int = 0, stop: Optional[int] = None) -> int:  # type: ignore[override]
        if node not in self:
            raise ValueError("not one of this group's cases")
        return node._index


class Lines(Sequence[_TreeLine]):
    """The tree's laid-out lines: single lines, and runs of a group's cases made into lines when read."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._parts: list[object] = []  # a _TreeLine, or (the path to a group, its Leaves)
        self._length = 0

    def append(self, line: _TreeLine) -> None:
        self._starts.append(self._length)
        self._parts.append(line)
        self._length += 1

    def add_leaves(self, path: list[TreeNode[str]], leaves: Leaves) -> None:
        if len(leaves):
            self._starts.append(self._length)
            self._parts.append((path, leaves))
            self._length += len(leaves)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        at = bisect_right(self._starts, index) - 1
        part = self._parts[at]
        if isinstance(part, _TreeLine):
            return part
        path, leaves = part
        offset = index - self._starts[at]
        return _TreeLine([*path, leaves[offset]], offset == len(leaves) - 1)

    def __iter__(self) -> Iterator[_TreeLine]:
        return (self[i] for i in range(self._length))


class CaseNodes:
    """Case id → its node, made on first ask (`get`, `[]`); `made` says without making one."""

    def __init__(self) -> None:
        self.where: dict[str, tuple[Leaves, int]] = {}

    def __contains__(self, case_id: object) -> bool:
        return case_id in self.where

    def __len__(self) -> int:
        return len(self.where)

    def get(self, case_id: str, default=None):
        found = self.where.get(case_id)
        return found[0][found[1]] if found is not None else default

    def __getitem__(self, case_id: str) -> TreeNode[str]:
        leaves, index = self.where[case_id]
        return leaves[index]

    def made(self, case_id: str) -> Optional[CaseNode]:
        found = self.where.get(case_id)
        return found[0].made.get(found[1]) if found is not None else None

    def values(self) -> Iterator[TreeNode[str]]:
        return (self[case_id] for case_id in self.where)


def lay_out(roots: Sequence[TreeNode[str]], groups: Sequence[TreeNode[str]]) -> Lines:
    """The lines of the nodes under the root, as Textual's `Tree._build` lays them out; each group
    of cases learns its first line (-1 when not shown)."""
    for group in groups:
        group._first_line = -1  # type: ignore[attr-defined]
    lines = Lines()

    def add(path: list[TreeNode[str]], node: TreeNode[str], last: bool) -> None:
        child_path = [*path, node]
        node._line = len(lines)
        lines.append(_TreeLine(child_path, last))
        if not node._expanded:
            return
        children = node._children
        if isinstance(children, Leaves):
            node._first_line = node._line  # type: ignore[attr-defined]
            lines.add_leaves(child_path, children)
            return
        for at, child in enumerate(children):
            add(child_path, child, at == len(children) - 1)

    for node in roots:
        add([], node, True)
    return lines
