"""Finished runs kept on disk while a session holds many cases.

A case's whole run (its diff, traces, the worker's output, every invocation) is some tens of KB; a
session of 50,000 cases would hold GBs of them. Past `SPILL_FROM` cases, the workbench keeps the
`KEEP_WHOLE` runs settled last whole, and each older one as a `LightRun`: its slim result, agent and
files read in memory (all the list, the header, filters and the index need) and the rest in a
temporary file, read back when the case is opened, accepted or re-scored. The file goes when the
session does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import pickle
import sys
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional

from agentdiff.core.project.case_refs import CaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.result_spool import BlobFile
from agentdiff.core.scoring.results import CaseResult, slim

#: A session with fewer cases keeps every run whole.
SPILL_FROM = 2_000
#: Runs settled last that stay whole (the ones being looked at, most likely).
KEEP_WHOLE = 256
#: Runs read back from the file that stay read (a case opened again, a detail repainted).
READ_BACK = 64


def spillable(run: CaseRun) -> bool:
    """A run its case's family lets be kept on disk (an EvalSet case's run of one repeat)."""
    return family_of(run.ref).spillable(run)


class Spill:
    """Whole runs in an anonymous temporary file, each written once and read back by offset."""

    def __init__(self) -> None:
        self._blobs = BlobFile("agentdiff-runs-")
        self._lock = threading.Lock()  # the runs read back
        self._read: OrderedDict[int, CaseRun] = OrderedDict()
        self.problem: Optional[str] = None  # why runs stay whole (a full disk, say)
        self._files: dict[frozenset[str], frozenset[str]] = {}

    def put(self, run: CaseRun) -> Optional["LightRun"]:
        """The run as a `LightRun`, its whole written to the file; None when it cannot be (it stays whole)."""
        if self.problem is not None or not spillable(run):
            return None
        baseline = dataclasses.replace(run.baseline, sources=None) if run.baseline is not None else None  # re-attached when read
        try:
            blob = pickle.dumps((run.result, run.diff, baseline, run.trace, run.outputs), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - a run that cannot be written stays whole; a verdict never fails over this
            return None
        try:
            at = self._blobs.put(blob)
        except OSError as exc:
            self.problem = exc.strerror or str(exc)
            return None
        files = self._files.get(run.files_read)  # the same few files for many cases: one set of one string each
        if files is None:
            if len(self._files) >= 4096:
                self._files.clear()
            files = self._files[run.files_read] = frozenset(sys.intern(path) for path in run.files_read)
        light = LightRun(self, at, len(blob), run.ref, slim(run.result), run.agent, files, run.shown, run.modes)
        light.changed_layers = run.changed_layers
        return light

    def whole(self, light: "LightRun") -> CaseRun:
        with self._lock:
            run = self._read.get(light.at)
            if run is not None and run.ref is light.ref:
                self._read.move_to_end(light.at)
                return run
        blob = self._blobs.get(light.at, light.size)
        result, diff, baseline, trace, outputs = pickle.loads(blob)
        if baseline is not None:
            baseline = dataclasses.replace(baseline, sources=family_of(light.ref).sources(light.ref))
        run = CaseRun(light.ref, result, light.agent, diff, baseline, trace, outputs, light.shown, light.modes)
        with self._lock:
            self._read[light.at] = run
            while len(self._read) > READ_BACK:
                self._read.popitem(last=False)
        return run

    def close(self) -> None:
        self._blobs.close()
        with self._lock:
            self._read.clear()


class Spiller:
    """Runs to spill, written in a thread of their own, then each swapped for its `LightRun` if
    `may_swap(state, run)` still says so (the case has not run again meanwhile, say). Pickling a run
    took about a sixth of the app's loop during a big first run; a verdict's settling now only queues
    it. Runs that come while a batch is written make the next batch."""

    def __init__(self, spill: Spill, may_swap: Callable[[Any, CaseRun], bool]) -> None:
        self.spill, self._may_swap = spill, may_swap
        self._pending: list[tuple[Any, CaseRun]] = []
        self._writing: Optional[asyncio.Future] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None  # whose future `_writing` is
        self._executor: Optional[ThreadPoolExecutor] = None

    def add(self, state: Any, run: CaseRun) -> None:
        self._pending.append((state, run))
        self._next()

    def _next(self) -> None:
        loop = asyncio.get_running_loop()
        if self._writing is not None and self._loop is not loop:
            self._writing = None  # a batch of a loop that ended: its runs stay whole
        if self._writing is not None or not self._pending:
            return
        batch, self._pending = self._pending, []
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentdiff-spill")
        self._loop = loop
        self._writing = loop.run_in_executor(self._executor, lambda: [self._put(run) for _, run in batch])
        self._writing.add_done_callback(lambda done: self._written(batch, done))

    def _put(self, run: CaseRun) -> Optional[LightRun]:
        try:
            return self.spill.put(run)
        except Exception:  # noqa: BLE001 - a run that cannot be spilled stays whole
            return None

    def _written(self, batch: list[tuple[Any, CaseRun]], done: asyncio.Future) -> None:
        self._writing = None
        try:
            if not done.cancelled() and done.exception() is None:
                for (state, run), light in zip(batch, done.result()):
                    if light is not None and self._may_swap(state, run):
                        state.run = light
        finally:
            self._next()  # what came meanwhile

    async def settled(self) -> None:
        """Until every run queued so far is written and swapped."""
        self._next()
        while self._writing is not None:
            await asyncio.wait([self._writing])


def _read_back(name: str) -> property:
    """An attribute of the whole run, read back from the spill."""
    return property(lambda self: getattr(self.full(), name), doc=f"the whole run's `{name}`")


class LightRun:
    """A finished run whose whole is in a `Spill`: what lists, filters and the index read is here (its
    result without invocations, its agent, the files its agent read); the rest is read back when asked
    (`diff`, `trace`, `outputs`, …), so code that reads a run reads this one alike."""

    restage = None  # only runs of one repeat are spilled
    has_outputs = True
    changed_layers: tuple[str, ...] = ()

    def __init__(self, spill: Spill, at: int, size: int, ref: CaseRef, result: CaseResult, agent, files_read: frozenset[str],
                 shown: int, modes: tuple[str, ...]) -> None:
        self._spill, self.at, self.size = spill, at, size
        self.ref, self.result, self.agent, self.files_read, self.shown, self.modes = ref, result, agent, files_read, shown, modes

    def full(self) -> CaseRun:
        """The whole run, read back."""
        return self._spill.whole(self)

    diff = _read_back("diff")
    baseline = _read_back("baseline")
    trace = _read_back("trace")
    outputs = _read_back("outputs")
    shown_output = _read_back("shown_output")
    shown_record = _read_back("shown_record")

    def showing(self, index: int) -> CaseRun:
        return self.full().showing(index)
