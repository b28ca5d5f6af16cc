"""Each case's recent verdicts and scores, kept across restarts in `.agentdiff/history.sqlite` (the
table itself: `history_store`). A session's new entries wait in memory until they are written, every
`SAVE_EVERY` seconds and when it closes, in a thread of their own; it reads its own entries and every
session's written ones alike."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable, Optional

from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.usage import total_tokens
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus
from agentdiff.core.workbench.costs import run_cost
from agentdiff.core.workbench.history_store import KEEP, Store, entry_of, row
from agentdiff.core.workbench.snapshots import Snapshots

HISTORY_FILE = Path(".agentdiff") / "history.sqlite"  # under the project root
SAVE_EVERY = 2.0  # seconds
SCAN_ABOVE = 200  # cases: the last seconds of more are read in one pass over the table, not one query each
MAX_WAITING = 100_000  # entries kept for the next save while writes fail (beyond: the oldest are dropped)
__all__ = ["HISTORY_FILE", "KEEP", "SAVE_EVERY", "History", "headline_score"]


def headline_score(result: CaseResult) -> Optional[float]:
    """The case's score as the tree shows it: the metric that failed it (the first failing, which
    decides the verdict as in ADK), else the lowest gating score; None when none was scored."""
    gating = [m for m in result.metrics if m.status in (MetricStatus.PASSED, MetricStatus.FAILED) and m.score is not None]
    failing = [m for m in gating if m.status is MetricStatus.FAILED]
    if failing:
        return failing[0].score
    return min(m.score for m in gating) if gating else None  # type: ignore[type-var]


class History:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._store = Store(path)
        self.loaded = self._store.loaded  # False: a history was there but could not be read (nothing is pruned by it)
        self._saved_at = float("-inf")
        self._lock = threading.Lock()  # the entries waiting: added on the caller's thread, taken by the writer's
        self._waiting: list[tuple[str, str, dict[str, Any]]] = []  # (case id, tag, entry) added, not yet handed to the writer
        self._unwritten: dict[str, dict[str, dict[str, Any]]] = {}  # by case, by tag: added, not yet written (or never: no write)
        session = f"{os.getpid():x}{os.urandom(3).hex()}"
        self._tags = (f"{session}.{n:x}" for n in itertools.count())  # this session's entries, told apart from every other's
        self._writer: Optional[ThreadPoolExecutor] = None  # writes in order, off the caller's thread
        self._written: Optional[Future] = None
        self._last: Optional[dict[str, float]] = None  # every case's seconds the last time it ran, once read ahead
        self._failure: Optional[str] = None  # why the last write failed (it is tried again at the next save)
        self.problem: Optional[str] = self._store.problem  # what to say once: rows not written, a file not read

    def add(self, case_id: str, result: CaseResult, when: float, seconds: Optional[float] = None, tools: Optional[int] = None,
            batch: Optional[float] = None, read: Optional[dict[str, str]] = None) -> None:
        """A run's verdict and score; and, for the plots, its seconds and tool calls (a mean over
        repeats), its tokens and the batch of runs it belonged to (when that batch started); `read`: a
        passing run's files read, by digest (`snapshots`)."""
        entry: dict[str, Any] = {"time": round(when, 3), "status": result.status.value, "score": headline_score(result), "mode": result.mode}
        tokens = total_tokens(result.usage)
        for key, value in (("seconds", seconds), ("tools", tools), ("batch", batch), ("tokens", tokens or None), ("read", read or None)):
            if value is not None:
                entry[key] = round(value, 3) if isinstance(value, float) else value
        with self._lock:
            tag = next(self._tags)
            self._waiting.append((case_id, tag, entry))
            unwritten = self._unwritten.setdefault(case_id, {})
            unwritten[tag] = entry
            if len(unwritten) > KEEP:
                del unwritten[next(iter(unwritten))]
            if self._last is not None:
                seconds = _seconds(entry.get("seconds"))
                if seconds is None:
                    self._last.pop(case_id, None)
                else:
                    self._last[case_id] = seconds
        if when - self._saved_at >= SAVE_EVERY:  # a burst of verdicts is written once, not once each
            self.save(when)

    def entries(self, case_id: str) -> list[dict[str, Any]]:
        """The case's newest KEEP entries, oldest first: every session's written ones and this one's own."""
        with self._lock:
            mine = dict(self._unwritten.get(case_id, {}))
        rows = self._store.query("SELECT tag, entry, read FROM runs WHERE case_id = ? ORDER BY time DESC LIMIT ?", (case_id, KEEP))
        written = [entry_of(text, read) for tag, text, read in reversed(rows) if tag not in mine]  # (one written since is in both)
        if not mine:
            return written
        return sorted((*written, *mine.values()), key=lambda e: e["time"])[-KEEP:]

    def last_seconds(self, case_ids: Iterable[str]) -> dict[str, float]:
        """Each case's seconds the last time it ran (those with a known time), for an ETA."""
        case_ids = list(case_ids)
        if self._last is not None and len(case_ids) > SCAN_ABOVE:  # read ahead (`read_last_seconds`), kept up by `add`
            with self._lock:
                known = self._last
                return {case_id: known[case_id] for case_id in case_ids if case_id in known}
        wanted = set(case_ids)
        last: dict[str, tuple[float, Optional[float]]] = {}
        if len(wanted) <= SCAN_ABOVE:
            for case_id in wanted:
                for time, seconds in self._store.query("SELECT time, seconds FROM runs WHERE case_id = ? ORDER BY time DESC LIMIT 1", (case_id,)):
                    last[case_id] = (time, seconds)
        else:
            last = {case_id: last_run for case_id, last_run in self._scan().items() if case_id in wanted}
        with self._lock:
            self._add_unwritten(last, wanted)
        return _seconds_of(last)

    def read_last_seconds(self) -> None:
        """Read every case's last seconds now, in the writer's thread, so that the ETA of a queue of the
        whole suite later (the TUI's first run) looks them up instead of reading the table on the
        caller's thread (about 100 ms at 50,000 cases)."""
        def read() -> None:
            last = self._scan()
            with self._lock:
                self._add_unwritten(last)  # (added while it read)
                self._last = _seconds_of(last)
        self._writer_thread().submit(read)

    def _add_unwritten(self, last: dict[str, tuple[float, Optional[float]]], wanted: Optional[set[str]] = None) -> None:
        """(Under the lock.) This session's entries not yet written, where newer than the table's."""
        for case_id, entries in self._unwritten.items():
            if entries and (wanted is None or case_id in wanted):
                newest = max(entries.values(), key=lambda e: e["time"])
                if newest["time"] >= last.get(case_id, (float("-inf"),))[0]:
                    last[case_id] = (newest["time"], newest.get("seconds"))

    def _scan(self) -> dict[str, tuple[float, Optional[float]]]:
        """Every case's last (time, seconds) written, in one pass over the table's index (SQLite's bare
        columns come from the row of the max)."""
        return {case_id: (time, seconds) for case_id, time, seconds in self._store.query("SELECT case_id, max(time), seconds FROM runs GROUP BY case_id")}

    def last_passed(self, case_id: str) -> Optional[dict[str, Any]]:
        """The case's newest passing run that kept what its agent read, if any."""
        return next((e for e in reversed(self.entries(case_id)) if e.get("status") == "passed" and e.get("read")), None)

    def record(self, run: CaseRun, when: float, batch: Optional[float], snapshots: Snapshots) -> None:
        """A finished run of a case (the TUI's and `run`'s alike): its verdict, score, seconds, tool
        calls and tokens, and, when it passed, the files its agent read (kept for `W`)."""
        seconds, _, tools, _ = run_cost(run, {})
        passed = run.result.status is CaseStatus.PASSED and run.files_read
        read = snapshots.keep(run.files_read) if passed else None  # what changed since it passed, later
        self.add(run.result.id, run.result, when, seconds, tools, batch, read)

    def prune(self, snapshots: Snapshots, now: float) -> None:
        """Remove the stored contents (`W`) no entry needs any more; none when the history could not be read."""
        if self.loaded:
            snapshots.prune(self.digests(), now)

    def digests(self) -> set[str]:
        """Every blob digest the kept entries refer to, other sessions' too (what `W` may still need)."""
        reads = [json.loads(text) for (text,) in self._store.query("SELECT DISTINCT read FROM runs WHERE read IS NOT NULL")]
        with self._lock:
            reads += [entry["read"] for entries in self._unwritten.values() for entry in entries.values() if isinstance(entry.get("read"), dict)]
        return {digest for read in reads if isinstance(read, dict) for digest in read.values() if isinstance(digest, str)}

    def pass_rates(self) -> list[tuple[float, int, int]]:
        """The suite over time: after each batch of runs (oldest first), its start, and of every case
        run so far the ones whose latest verdict then was a pass, and how many. A batch re-running one
        case moves the rate by that case alone. Entries kept before batches were recorded count by
        the minute they ran."""
        with self._lock:
            mine = [(case_id, tag, entry) for case_id, entries in self._unwritten.items() for tag, entry in entries.items()]
        tags = {tag for _, tag, _ in mine}
        rows = [(case_id, when, time, status) for case_id, when, time, status, tag in self._store.query(
            "SELECT case_id, coalesce(nullif(batch, 0), cast(time / 60 AS INTEGER) * 60.0), time, status, tag FROM runs")
            if tag not in tags]  # (one written since is in both)
        rows += [(case_id, float(entry.get("batch") or (entry["time"] // 60 * 60)), entry["time"], entry.get("status"))
                 for case_id, _, entry in mine]
        rows.sort(key=lambda r: (r[1], r[2]))
        batches: dict[float, list[tuple[str, str]]] = {}
        for case_id, when, _, status in rows:
            batches.setdefault(float(when), []).append((case_id, status or ""))
        latest: dict[str, str] = {}
        rates = []
        for when in sorted(batches):
            latest.update(batches[when])
            rates.append((when, sum(status == "passed" for status in latest.values()), len(latest)))
        return rates

    def save(self, when: Optional[float] = None, wait: bool = False) -> None:
        """Write the entries added since the last save, in a background thread, so a burst of
        verdicts never stalls the caller. `wait` (when the app closes) waits for it."""
        with self._lock:
            batch, self._waiting = self._waiting, []
        if batch:
            self._written = self._writer_thread().submit(self._write, batch)
            self._saved_at = when if when is not None else self._saved_at
        if wait and self._written is not None:
            self._written.result()

    def close(self) -> None:
        """Write what is waiting and let the database go (its journal folded in, as SQLite does when
        the last connection closes). Reading or adding again opens it again. What could not be written
        is said by `problem`."""
        self.save(wait=True)
        with self._lock:
            if self._waiting and self._failure:
                self.problem = (f"history: {len(self._waiting)} run(s) could not be written to {self.path.name} "
                                f"({self._failure}); the file is kept as it was")
        if self._writer is not None:
            self._writer.submit(self._store.close_writer).result()
        self._store.close_reader()

    def _writer_thread(self) -> ThreadPoolExecutor:
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentdiff-history")
        return self._writer

    def _write(self, batch: list[tuple[str, str, dict[str, Any]]]) -> None:
        try:
            self._store.write([row(case_id, entry, tag) for case_id, tag, entry in batch])
        except (OSError, sqlite3.Error) as exc:
            if not (self._store.writable and self._store.usable):
                return  # history is a convenience; a read-only project still works (this session keeps its own)
            with self._lock:  # locked by another session, a full disk: kept, and written with the next save
                self._waiting[:0] = batch[-MAX_WAITING:]
                del self._waiting[MAX_WAITING:]
                self._failure = str(exc) or type(exc).__name__
            return
        with self._lock:  # written: read from the database from now on
            for case_id, tag, _ in batch:
                unwritten = self._unwritten.get(case_id)
                if unwritten is not None:
                    unwritten.pop(tag, None)
                    if not unwritten:
                        del self._unwritten[case_id]


def _seconds(value: Any) -> Optional[float]:
    """A run's seconds as an ETA may use them: a number, not negative."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def _seconds_of(last: dict[str, tuple[float, Optional[float]]]) -> dict[str, float]:
    return {case_id: seconds for case_id, (_, value) in last.items() if (seconds := _seconds(value)) is not None}
