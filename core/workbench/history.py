"""Each case's recent verdicts and scores, kept across restarts in `.agentdiff/history.json`.

Several sessions may keep one project's history at once (two terminals, two tabs of `serve`, a `run`):
they write in turn, under a lock beside the file, and a session that finds the file written by another
since it last read or wrote it merges that content into its own entries before it writes (entries told
apart by time, verdict and score; each case's newest `KEEP`)."""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from agentdiff.core.baselines.journal import atomic_write
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.usage import total_tokens
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus
from agentdiff.core.formats.set_aside import linked_state, set_aside
from agentdiff.core.formats.source_file import read_text_regular
from agentdiff.core.workbench.costs import run_cost
from agentdiff.core.workbench.snapshots import Snapshots

HISTORY_FILE = Path(".agentdiff") / "history.json"  # under the project root
KEEP = 20
SAVE_EVERY = 2.0  # seconds
SAVE_SCALE = 2000  # cases: a history of more is saved proportionally less often


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
        self._dirty = False
        self._saved_at = float("-inf")
        self._data: dict[str, list[dict[str, Any]]] = {}
        self._reads: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}  # each distinct `read` of the entries added
        self._writer: Optional[ThreadPoolExecutor] = None  # writes in order, off the caller's thread
        self._written: Optional[Future] = None
        self.loaded = True  # False: a history file was there but could not be read (nothing is pruned by it)
        self._lock = threading.Lock()  # `_data` changes on the caller's thread (add) and the writer's (a merge)
        self._seen = self._version()  # the file's version this session last read or wrote
        try:
            loaded = _entries(json.loads(read_text_regular(path)))
        except (FileNotFoundError, NotADirectoryError):  # none yet (`.agentdiff` a file: `run` says so)
            return
        except (OSError, ValueError, RecursionError) as exc:  # cut short, garbled, nested past reading, not a file
            loaded, why = None, _why(exc)
        else:
            why = "it is not a mapping of case ids to entries"
        if loaded is None:
            # never written over with this session's cases alone: set aside whole, with a notice
            self.loaded = False
            set_aside(path, path.parent.parent, why)
            self._seen = self._version()
            return
        self._data = loaded

    def add(self, case_id: str, result: CaseResult, when: float, seconds: Optional[float] = None, tools: Optional[int] = None,
            batch: Optional[float] = None, read: Optional[dict[str, str]] = None) -> None:
        """A run's verdict and score; and, for the plots, its seconds and tool calls (a mean over
        repeats), its tokens and the batch of runs it belonged to (when that batch started); `read`: a
        passing run's files read, by digest (`snapshots`)."""
        entry: dict[str, Any] = {"time": round(when, 3), "status": result.status.value, "score": headline_score(result), "mode": result.mode}
        if read:  # every case of a file reads the same few files: one mapping for them all (entries are never changed)
            read = self._reads.setdefault(tuple(read.items()), read)
        tokens = total_tokens(result.usage)
        for key, value in (("seconds", seconds), ("tools", tools), ("batch", batch), ("tokens", tokens or None), ("read", read or None)):
            if value is not None:
                entry[key] = round(value, 3) if isinstance(value, float) else value
        with self._lock:
            entries = self._data.setdefault(case_id, [])
            entries.append(entry)
            del entries[:-KEEP]
        self._dirty = True
        # a burst of verdicts is written once, not once each; a big history less often, as each write
        # copies all of it (every 2 s, a long run of N cases wrote N² entries in all)
        if when - self._saved_at >= SAVE_EVERY * max(1.0, len(self._data) / SAVE_SCALE):
            self.save(when)

    def entries(self, case_id: str) -> list[dict[str, Any]]:
        return list(self._data.get(case_id, []))

    def last_seconds(self, case_ids: Iterable[str]) -> dict[str, float]:
        """Each case's seconds the last time it ran (those with a known time), for an ETA."""
        out: dict[str, float] = {}
        with self._lock:
            for case_id in case_ids:
                entries = self._data.get(case_id)
                seconds = entries[-1].get("seconds") if entries else None
                if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0:
                    out[case_id] = float(seconds)
        return out

    def last_passed(self, case_id: str) -> Optional[dict[str, Any]]:
        """The case's newest passing run that kept what its agent read, if any."""
        return next((e for e in reversed(self._data.get(case_id, [])) if e.get("status") == "passed" and e.get("read")), None)

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
        """Every blob digest the kept entries refer to, other sessions' merged in too (what `W` may still need)."""
        return {digest for entries in self._data.values() for entry in entries
                if isinstance(entry, dict) and isinstance(entry.get("read"), dict)
                for digest in entry["read"].values() if isinstance(digest, str)}

    def pass_rates(self) -> list[tuple[float, int, int]]:
        """The suite over time: after each batch of runs (oldest first), its start, and of every case
        run so far the ones whose latest verdict then was a pass, and how many. A batch re-running one
        case moves the rate by that case alone. Entries kept before batches were recorded count by
        the minute they ran."""
        batches: dict[float, list[tuple[str, str]]] = {}
        for case_id, entries in self._data.items():
            for entry in entries:
                when = float(entry.get("batch") or (entry.get("time", 0) // 60 * 60))
                batches.setdefault(when, []).append((case_id, entry.get("status", "")))
        latest: dict[str, str] = {}
        rates = []
        for when in sorted(batches):
            latest.update(batches[when])
            rates.append((when, sum(status == "passed" for status in latest.values()), len(latest)))
        return rates

    def save(self, when: Optional[float] = None, wait: bool = False) -> None:
        """Write the history if it changed: a copy is encoded and written in a background thread,
        so a burst of verdicts never stalls the caller. `wait` (when the app closes) waits for it."""
        if self._dirty:
            with self._lock:
                snapshot = {case_id: list(entries) for case_id, entries in self._data.items()}
            if self._writer is None:
                self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentdiff-history")
            self._written = self._writer.submit(self._write, snapshot)
            self._dirty = False
            self._saved_at = when if when is not None else self._saved_at
        if wait and self._written is not None:
            self._written.result()

    def _version(self) -> Optional[tuple[int, int, int]]:
        try:
            info = self.path.stat()
        except OSError:
            return None
        return info.st_ino, info.st_mtime_ns, info.st_size

    def _write(self, data: dict[str, list[dict[str, Any]]]) -> None:
        """Under the history's lock (sessions open at once take turns): what another session wrote
        since this one last read or wrote the file is merged into this one's entries (so its plots
        show them too) before the whole is written."""
        if linked_state(self.path.parent.parent) is not None or os.path.islink(self.path.with_name(self.path.name + ".lock")):
            return  # never written through a committed link
        try:
            with _locked(self.path):
                now = self._version()
                if now is not None and now != self._seen:  # another session wrote it meanwhile
                    theirs = self._read()
                    if theirs:
                        with self._lock:  # the caller's thread adds entries meanwhile
                            merged = dict(self._data)  # a new table: readers on the caller's thread keep theirs
                            for case_id, entries in theirs.items():
                                if entries != merged.get(case_id):
                                    merged[case_id] = _merged(entries, merged.get(case_id, []))
                            self._data = merged
                            data = {case_id: list(entries) for case_id, entries in merged.items()}
                atomic_write(self.path, encoded(data), durable=False)
                self._seen = self._version()  # ours: nobody writes while the lock is held
        except OSError:
            pass  # history is a convenience; a read-only project still works

    def _read(self) -> Optional[dict[str, list[dict[str, Any]]]]:
        try:
            return _entries(json.loads(read_text_regular(self.path)))
        except (OSError, ValueError, RecursionError):
            return None  # gone, cut short or not ours: nothing to merge


CHUNK = 500  # cases per call into the C encoder, which holds the interpreter's lock until it returns


def encoded(data: dict[str, list[dict[str, Any]]]) -> str:
    """`json.dumps(data, sort_keys=True, separators=(",", ":"))`'s text, encoded `CHUNK` cases at a time.
    Written in a thread, one call for the whole history of 50,000 cases held the lock for about 200 ms,
    and the app's loop waited that long; a chunk holds it for about 2 ms."""
    keys = sorted(data)
    parts = []
    for start in range(0, len(keys), CHUNK):
        part = json.dumps({key: data[key] for key in keys[start:start + CHUNK]}, sort_keys=True, separators=(",", ":"))
        parts.append(part[1:-1])
    return "{" + ",".join(parts) + "}"


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at line {exc.lineno}: {exc.msg}"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def _entries(loaded: Any) -> Optional[dict[str, list[dict[str, Any]]]]:
    """The history's table from its JSON: case id → its entries (mappings with a numeric time); None
    when the file is not such a table at all. Entries of another shape are dropped, one by one."""
    if not isinstance(loaded, dict):
        return None
    table: dict[str, list[dict[str, Any]]] = {}
    for case_id, entries in loaded.items():
        if isinstance(entries, list):
            table[case_id] = [entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("time"), (int, float))
                              and not isinstance(entry.get("time"), bool) and isinstance(entry.get("batch", 0) or 0, (int, float))]
    return table


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock beside the history file (where the system has `flock`)."""
    try:
        import fcntl
    except ImportError:  # no flock: writes are still whole, only a merge may miss a concurrent write
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _merged(theirs: list[dict[str, Any]], mine: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A case's entries from both, once each (by time, verdict and score), oldest first, its newest `KEEP`."""
    entries: dict[tuple, dict[str, Any]] = {}
    for entry in (*theirs, *mine):
        if isinstance(entry, dict):
            entries[(entry.get("time"), entry.get("status"), entry.get("score"))] = entry
    kept = sorted(entries.values(), key=lambda e: e.get("time") if isinstance(e.get("time"), (int, float)) else 0)
    return kept[-KEEP:]
