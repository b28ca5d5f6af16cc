"""The history (`.agentdiff/history.sqlite`) as a run of N cases uses it: one entry a case, written
every 2,000 entries (as `SAVE_EVERY` does at ~1,000 cases a second), then the reads the TUI makes.
Beside it, in the same run, the table the JSON history was: every entry held in a dict and the whole
written again at each save (every `N / 2,000 × 2` s it was, so a twentieth as often here)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

EVERY = 2000


def _ids(n: int) -> list[str]:
    return [f"agents/agent_{i % 100:03d}/agent_{i % 100:03d}.evalset.json::case_{i:07d}" for i in range(n)]


def _ours(folder: Path, ids: list[str]) -> tuple[float, int, list[tuple[str, str, str]]]:
    from agentdiff.core.scoring.results import CaseResult, CaseStatus
    from agentdiff.core.workbench.history import History

    result = CaseResult(id="x", source="s", eval_set_id=None, eval_id="x", agent=None, mode="live", status=CaseStatus.PASSED)
    read = {"agents/agent_000/agent.py": "ab" * 32}
    history = History(folder / "history.sqlite")
    tracemalloc.start()
    start = time.perf_counter()
    for i, case_id in enumerate(ids):
        history.add(case_id, result, 0.0, seconds=0.02, tools=0, batch=1e9, read=read)  # `when` 0: saved below, not by the clock
        if i % EVERY == EVERY - 1:
            history.save(wait=True)  # a run's saves are 2 s apart: each written before the next
    history.save(wait=True)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    history.close()
    rows = []
    again = History(folder / "history.sqlite")
    for what, call in (("one case's entries (`p`)", lambda: again.entries(ids[len(ids) // 2])),
                       ("every case's last seconds (the ETA), read from the table", lambda: again.last_seconds(ids)),
                       ("the suite's pass rate per batch (`S`)", again.pass_rates),
                       ("the digests `W` keeps", again.digests)):
        began = time.perf_counter()
        call()
        rows.append((what, f"{(time.perf_counter() - began) * 1000:.1f} ms", ""))
    again.read_last_seconds()
    again.save(wait=True)
    again._writer_thread().submit(lambda: None).result()
    began = time.perf_counter()
    again.last_seconds(ids)
    rows.append(("every case's last seconds, read ahead (the TUI's)", f"{(time.perf_counter() - began) * 1000:.1f} ms", ""))
    again.close()
    return seconds, peak, rows


def _json_table(folder: Path, ids: list[str]) -> tuple[float, int]:
    """The earlier history's way: the entries held, the whole table encoded and written at a save."""
    table: dict[str, list[dict]] = {}
    read = {"agents/agent_000/agent.py": "ab" * 32}
    saves = max(1, len(ids) // (EVERY * 20))
    tracemalloc.start()
    start = time.perf_counter()
    for i, case_id in enumerate(ids):
        table.setdefault(case_id, []).append({"time": 1e9 + i, "status": "passed", "score": 1.0, "mode": "live", "seconds": 0.02,
                                              "tools": 0, "batch": 1e9, "read": read})
        if i % (len(ids) // saves) == len(ids) // saves - 1:
            (folder / "history.json").write_text(json.dumps(table, sort_keys=True, separators=(",", ":")))
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak


def history_benchmark() -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    for n in [int(size) for size in os.environ.get("AGENTDIFF_HISTORY_SIZES", "50000").split(",")]:
        ids = _ids(n)
        folder = Path(tempfile.mkdtemp(prefix="agentdiff-bench-history-"))
        try:
            seconds, peak, reads = _ours(folder, ids)
            size = (folder / "history.sqlite").stat().st_size
            theirs, their_peak = _json_table(folder, ids)
            json_size = (folder / "history.json").stat().st_size
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        rows.append((f"history {n:,}: a run's entries added and written", f"{seconds:.2f} s",
                     f"the JSON table, held and written {max(1, n // (EVERY * 20))} time(s): {theirs:.2f} s"))
        rows.append((f"history {n:,}: memory the writing took (peak, tracemalloc)", f"{peak / 1e6:.1f} MB",
                     f"the JSON table: {their_peak / 1e6:.0f} MB ({their_peak / max(peak, 1):.0f}x)"))
        rows.append((f"history {n:,}: the file", f"{size / 1e6:.0f} MB", f"history.json: {json_size / 1e6:.0f} MB"))
        rows.extend((f"history {n:,}: {what}", value, note) for what, value, note in reads)
    return rows
