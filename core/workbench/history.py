"""Each case's recent verdicts and scores, kept across restarts in `.agentdiff/history.json`.

Several sessions may keep one project's history at once (two terminals, two tabs of `serve`): a
session that finds the file written by another since it last wrote it merges that content with its
own on each write (entries told apart by time, verdict and score; each case's newest `KEEP`)."""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.baselines.journal import atomic_write
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.usage import total_tokens
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseResult, CaseStatus
from agentdiff.core.formats.source_file import read_text_regular
from agentdiff.core.workbench.costs import run_cost
from agentdiff.core.workbench.snapshots import Snapshots

HISTORY_FILE = Path(".agentdiff") / "history.json"  # under the project root
KEEP = 20
SAVE_EVERY = 2.0  # seconds


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
        self._writer: Optional[ThreadPoolExecutor] = None  # writes in order, off the caller's thread
        self._written: Optional[Future] = None
        self.loaded = True  # False: a history file was there but could not be read (nothing is pruned by it)
        self._others: dict[str, list[dict[str, Any]]] = {}  # the file as another session last left it (the writer's)
        self._seen = self._version()  # the file's version this session last read or wrote
        try:
            loaded = json.loads(read_text_regular(path))
            if isinstance(loaded, dict):
                self._data = {k: v for k, v in loaded.items() if isinstance(v, list)}
            else:
                self.loaded = False
        except FileNotFoundError:
            self._data = {}
        except (OSError, ValueError):
            self._data = {}
            self.loaded = False

    def add(self, case_id: str, result: CaseResult, when: float, seconds: Optional[float] = None, tools: Optional[int] = None,
            batch: Optional[float] = None, read: Optional[dict[str, str]] = None) -> None:
        """A run's verdict and score; and, for the plots, its seconds and tool calls (a mean over
        repeats), its tokens and the batch of runs it belonged to (when that batch started); `read`: a
        passing run's files read, by digest (`snapshots`)."""
        entries = self._data.setdefault(case_id, [])
        entry: dict[str, Any] = {"time": round(when, 3), "status": result.status.value, "score": headline_score(result), "mode": result.mode}
        tokens = total_tokens(result.usage)
        for key, value in (("seconds", seconds), ("tools", tools), ("batch", batch), ("tokens", tokens or None), ("read", read or None)):
            if value is not None:
                entry[key] = round(value, 3) if isinstance(value, float) else value
        entries.append(entry)
        del entries[:-KEEP]
        self._dirty = True
        if when - self._saved_at >= SAVE_EVERY:  # a burst of verdicts is written once, not once each
            self.save(when)

    def entries(self, case_id: str) -> list[dict[str, Any]]:
        return list(self._data.get(case_id, []))

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

    def digests(self) -> set[str]:
        """Every blob digest the kept entries refer to, other sessions' too (what `W` may still need)."""
        return {digest for data in (self._data, self._others) for entries in data.values() for entry in entries
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
        try:
            now = self._version()
            if now is not None and now != self._seen:  # another session wrote it meanwhile
                try:
                    loaded = json.loads(read_text_regular(self.path))
                    if isinstance(loaded, dict):
                        self._others = {k: v for k, v in loaded.items() if isinstance(v, list)}
                except ValueError:
                    pass  # cut short or not ours: what was read before stands
            if self._others:
                data = _merged(self._others, data)
            atomic_write(self.path, json.dumps(data, sort_keys=True, separators=(",", ":")), durable=False)
            self._seen = self._version()
        except OSError:
            pass  # history is a convenience; a read-only project still works


def _merged(others: dict[str, list[dict[str, Any]]], mine: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Each case's entries from both, once each, oldest first, its newest `KEEP`."""
    out = {}
    for case_id in others.keys() | mine.keys():
        entries: dict[tuple, dict[str, Any]] = {}
        for entry in (*others.get(case_id, ()), *mine.get(case_id, ())):
            if isinstance(entry, dict):
                entries[(entry.get("time"), entry.get("status"), entry.get("score"))] = entry
        kept = sorted(entries.values(), key=lambda e: e.get("time") if isinstance(e.get("time"), (int, float)) else 0)
        out[case_id] = kept[-KEEP:]
    return out
