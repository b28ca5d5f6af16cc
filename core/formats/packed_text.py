"""A big file's text kept compressed in blocks, sliced as a string is.

A loaded suite keeps each eval set file's text, to build a case's model from its span when asked
(`eval_cases.py`) and to edit a file a case at a time (`case_edits.py`): about 1 KB a case, most of
what a large suite holds. Packed, the text takes a few percent of that; a slice decompresses only the
blocks it spans, and the last few blocks read stay decompressed, so reading the cases in order (a run)
decompresses each block once.
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict

#: Characters a block holds.
BLOCK = 1 << 16
#: Decompressed blocks kept: a slice that spans a few blocks, and the run's cases around it.
RECENT = 4
#: A text shorter than this is not worth packing.
MIN_PACKED = 1 << 20


class PackedText:
    """`text` compressed, `BLOCK` characters a block; `packed[a:b]` is `text[a:b]`, `str(packed)` the text."""

    __slots__ = ("_blocks", "_length", "_recent", "_lock")

    def __init__(self, text: str) -> None:
        self._length = len(text)
        self._blocks = tuple(zlib.compress(text[at : at + BLOCK].encode("utf-8", "surrogatepass"), 1)
                             for at in range(0, len(text), BLOCK))
        self._recent: "OrderedDict[int, str]" = OrderedDict()
        self._lock = threading.Lock()  # the workbench builds cases in threads too

    def __reduce__(self) -> tuple:
        return _unpickled, (self._blocks, self._length)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, where: slice) -> str:
        if not isinstance(where, slice) or where.step not in (None, 1):
            raise TypeError("a packed text is sliced with [start:end] only")
        start, end, _ = where.indices(self._length)
        if start >= end:
            return ""
        first, last = start // BLOCK, (end - 1) // BLOCK
        parts = [self._block(index) for index in range(first, last + 1)]
        parts[-1] = parts[-1][: end - last * BLOCK]
        parts[0] = parts[0][start - first * BLOCK :]
        return "".join(parts)

    def __str__(self) -> str:
        return "".join(zlib.decompress(block).decode("utf-8", "surrogatepass") for block in self._blocks)

    @property
    def packed_bytes(self) -> int:
        return sum(len(block) for block in self._blocks)

    def _block(self, index: int) -> str:
        with self._lock:
            text = self._recent.get(index)
            if text is not None:
                self._recent.move_to_end(index)
                return text
        text = zlib.decompress(self._blocks[index]).decode("utf-8", "surrogatepass")
        with self._lock:
            self._recent[index] = text
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
        return text


def _unpickled(blocks: tuple[bytes, ...], length: int) -> PackedText:
    packed = PackedText("")
    packed._blocks, packed._length = blocks, length
    return packed
