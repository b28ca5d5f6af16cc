"""Taking one write back from a file that changed elsewhere since: a three-way merge of lines.

An accept turned `base` into `written`; the file is now `current` (a hand edit, a `git pull`, another
tool). Undo wants `current` with that one change taken back. Where the lines the accept changed are
still in `current` as it wrote them, and every other change in `current` lies apart from them, the
result is `current` with those lines put back as `base` had them (what `git revert` does with a
commit older than the working tree's edits). Where the two changes touch, there is no answer that
keeps both: None, and the caller refuses.
"""

from __future__ import annotations

import difflib
import json
from typing import Optional

#: A change between two line lists: the range of the common ancestor it replaces, and what it puts there.
_Hunk = tuple[int, int, list[str]]


def _hunks(ancestor: list[str], other: list[str]) -> list[_Hunk]:
    matcher = difflib.SequenceMatcher(None, ancestor, other, autojunk=False)
    return [(a1, a2, other[b1:b2]) for tag, a1, a2, b1, b2 in matcher.get_opcodes() if tag != "equal"]


def _touch(one: _Hunk, two: _Hunk) -> bool:
    """Two changes of the same ancestor that are not kept apart: their ranges overlap or meet (as
    git's merge, adjacent lines count as one region: a line beside an accepted value is often the
    same record)."""
    (a1, a2, _), (b1, b2, _) = one, two
    return a1 <= b2 and b1 <= a2


def take_back(base: str, written: str, current: str) -> Optional[str]:
    """`current` with the change `base` → `written` taken back; None when `current` changed the lines
    that change wrote, or next to them. A JSON file that parsed before must parse after."""
    if current == written:
        return base
    ancestor = written.splitlines(keepends=True)
    undo, edits = _hunks(ancestor, base.splitlines(keepends=True)), _hunks(ancestor, current.splitlines(keepends=True))
    if not undo:  # the write changed nothing: there is nothing to take back
        return current
    if any(_touch(u, e) for u in undo for e in edits):
        return None
    out: list[str] = []
    at = 0
    for a1, a2, lines in sorted(undo + edits, key=lambda h: (h[0], h[1])):
        out.extend(ancestor[at:a1])
        out.extend(lines)
        at = a2
    out.extend(ancestor[at:])
    merged = "".join(out)
    if _parses(current) and not _parses(merged):
        return None
    return merged


def _parses(text: str) -> bool:
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
