"""The finished results of a headless run, most of them on disk.

`run` writes its reports once every case has finished, so it keeps every result until then. Even slim
(`scoring.results.slim`), a result is some KB: a run of a million cases would grow by GBs. Past
`IN_MEMORY` results, `ResultSpool` writes each one, pickled, to an anonymous temporary file as it
comes (256 KB at a time: `BlobFile`), and keeps only where it is; the reports read them back one at a time, in order. The file goes
with the process. A result that cannot be written (a full disk) stays in memory: a run never fails
over its spool.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import threading
from array import array
from typing import Any, Iterator, Optional, Sequence, Union

from agentdiff.core.scoring.results import CaseResult

#: Runs of fewer cases keep every result in memory.
IN_MEMORY = 2_000


class BlobFile:
    """Blobs appended to an anonymous temporary file (made at the first), each read back by where it
    starts and its size; the file goes with the process. What `ResultSpool` and the workbench's spill
    keep on disk.

    Blobs are written `FLUSH_AT` bytes at a time, not one system call each: on the app's loop, each call
    gave the interpreter's lock to whichever thread was scoring, and took up to 5 ms to get it back.
    Blobs not written yet are read from memory; when a write fails (a full disk), they stay there, and
    `put` raises from then on, so its callers keep their objects whole."""

    FLUSH_AT = 256 * 1024

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._file: Optional[Any] = None
        self.end = 0  # where the next blob starts
        self._pending = bytearray()  # the blobs from `_written` on, not in the file yet
        self._written = 0
        self._failed: Optional[OSError] = None
        self._lock = threading.Lock()

    def put(self, blob: bytes) -> int:
        """Where `blob` starts; OSError when it cannot be written."""
        with self._lock:
            if self._failed is not None:
                raise self._failed
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix=self._prefix)
            at = self.end
            self._pending += blob
            self.end += len(blob)
            if len(self._pending) >= self.FLUSH_AT:
                try:
                    self._flush()
                except OSError:
                    del self._pending[len(self._pending) - len(blob):]  # this one is not kept: its caller keeps it whole
                    self.end = at
                    raise
            return at

    def _flush(self) -> None:
        try:
            done = os.pwrite(self._file.fileno(), self._pending, self._written)
            while done < len(self._pending):  # a short write: the rest
                done += os.pwrite(self._file.fileno(), self._pending[done:], self._written + done)
        except OSError as exc:
            self._failed = exc  # what is pending stays pending: every blob put so far can still be read
            raise
        self._written += len(self._pending)
        self._pending = bytearray()

    def get(self, at: int, size: int) -> bytes:
        assert self._file is not None
        with self._lock:
            if at >= self._written:
                return bytes(self._pending[at - self._written:at - self._written + size])
        return os.pread(self._file.fileno(), size, at)  # written whole: the file's bytes never change

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
            self._pending, self._written, self.end, self._failed = bytearray(), 0, 0, None  # a later put starts a new file


class ResultSpool(Sequence[CaseResult]):
    """Results in the order they were added, or as `sort` put them; the first `in_memory` held, the rest on disk."""

    def __init__(self, in_memory: Optional[int] = None) -> None:
        self._in_memory = IN_MEMORY if in_memory is None else in_memory
        self._items: list[Union[CaseResult, int]] = []  # a result, or its number in the file
        self._starts = array("q")  # where each result written starts in the file; the next one's start ends it
        self._ranks = array("q")
        self._blobs = BlobFile("agentdiff-results-")
        self.problem: Optional[str] = None  # why results stay in memory

    def append(self, result: CaseResult, rank: int = 0) -> None:
        """Add a result; `rank`: its place in the order `sort` puts them in (its case's place in the suite)."""
        self._ranks.append(rank)
        if len(self._items) < self._in_memory or self.problem is not None:
            self._items.append(result)
            return
        try:
            at = self._blobs.put(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception as exc:  # noqa: BLE001 - kept in memory instead: the run's verdicts never fail over this
            self.problem = str(exc) or type(exc).__name__
            self._items.append(result)
            return
        self._items.append(len(self._starts))
        self._starts.append(at)

    def sort(self) -> None:
        """Put them in the order of their ranks (stable); none is read back for it."""
        order = sorted(range(len(self._items)), key=self._ranks.__getitem__)
        self._items = [self._items[i] for i in order]
        self._ranks = array("q", (self._ranks[i] for i in order))

    def _result(self, item: Union[CaseResult, int]) -> CaseResult:
        if not isinstance(item, int):
            return item
        start = self._starts[item]
        end = self._starts[item + 1] if item + 1 < len(self._starts) else self._blobs.end
        return pickle.loads(self._blobs.get(start, end - start))

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self._result(item) for item in self._items[index]]
        return self._result(self._items[index])

    def __iter__(self) -> Iterator[CaseResult]:
        for item in self._items:
            yield self._result(item)

    @property
    def on_disk(self) -> int:
        return len(self._starts)

    def close(self) -> None:
        self._blobs.close()

