"""`agentdiff list` and `agentdiff run --json` as a user runs them, over generated suites of one-turn echo
cases (~1.1 KB each), at several sizes and in two layouts — one eval set holding every case, and 50
eval sets of 50 agents — each size in its own process, measured from outside: wall time, peak memory
(the largest process's, from the kernel's accounting of waited-for children), and the growth per case
against the smallest size of the same run.

    AGENTDIFF_SCALE_SIZES=1000,5000,20000,50000 .venv/bin/python benchmarks/run.py scale

`AGENTDIFF_SCALE_TINY=1000000` adds the tiny-case probe: `list` over that many cases of ~150 bytes in 100
eval sets (twice: first with an empty cache, every case validated; then again, the files read before), and `run --json` over `AGENTDIFF_SCALE_TINY_RUN` of them (default all), its rate and memory
read at each tenth of the way (the rate should hold and the memory stay flat to the end).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

AGENTDIFF = str(Path(sys.executable).parent / "agentdiff")
ECHO = "async def run_turn(ctx):\n    return ctx.message\n"


def _suite(root: Path, cases: int, sets: int, tiny: bool = False) -> None:
    """`cases` one-turn echo cases in `sets` eval sets of one agent each: of about 1.1 KB (`tiny`: 150 bytes)."""
    per_set = -(-cases // sets)
    for s in range(sets):
        folder = root / "agents" / f"agent_{s:03d}"
        folder.mkdir(parents=True)
        (folder / "agent.py").write_text(ECHO)
        count = min(per_set, cases - s * per_set)
        text = (lambda i: f"hi {i}") if tiny else (lambda i: f"hello there, this is case number {i} of set {s}, " * 9)  # noqa: E731
        rows = [{"eval_id": f"case_{i:07d}", "conversation": [{"invocation_id": f"i{i}",
                 "user_content": {"role": "user", "parts": [{"text": text(i)}]},
                 "final_response": {"role": "model", "parts": [{"text": text(i)}]}, "intermediate_data": {"tool_uses": []}}]}
                for i in range(count)]
        (folder / f"agent_{s:03d}.evalset.json").write_text(json.dumps({"eval_set_id": f"set_{s:03d}", "eval_cases": rows}))


@contextlib.contextmanager
def _fresh_cache() -> Iterator[None]:
    """An empty cache of read eval set files (`core.formats.read_cache`) for the commands measured: the
    generated suites are the same bytes every time, and a `list` must not find them read in an earlier
    benchmark."""
    folder, before = tempfile.mkdtemp(prefix="agentdiff-bench-cache-"), os.environ.get("AGENTDIFF_CACHE_DIR")
    os.environ["AGENTDIFF_CACHE_DIR"] = folder
    try:
        yield
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if before is None:
            os.environ.pop("AGENTDIFF_CACHE_DIR", None)
        else:
            os.environ["AGENTDIFF_CACHE_DIR"] = before


def _streamed(argv: list[str], cwd: Path, total: int) -> list[tuple[int, float, float]]:
    """(cases done, seconds, RSS in MB of the process) at each tenth of a run, read off its progress lines."""
    import re
    import time

    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    start, marks, step = time.perf_counter(), [], max(1, total // 10)
    assert process.stderr is not None
    for line in process.stderr:
        found = re.match(r"\[(\d+)/\d+\]", line)
        if found and int(found.group(1)) % step == 0:
            with open(f"/proc/{process.pid}/status") as status:
                rss = next(int(row.split()[1]) for row in status if row.startswith("VmRSS:")) / 1024
            marks.append((int(found.group(1)), time.perf_counter() - start, rss))
    process.wait()
    return marks


def tiny_probe(total: int, ran: int) -> list[tuple[str, str, str]]:
    with _fresh_cache():
        return _tiny_probe(total, ran)


def _tiny_probe(total: int, ran: int) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    root = Path(tempfile.mkdtemp(prefix="agentdiff-tiny-"))
    try:
        _suite(root, total, 100, tiny=True)
        for when in ("first, every case validated", "again, the files read before (`read_cache`)"):
            wall, rss, code = _measured([AGENTDIFF, "list"], root)
            rows.append((f"scale: list, {total:,} tiny cases in 100 eval sets, {when}: wall / peak memory", f"{wall:.1f} s / {rss:.0f} MB",
                         "target ≤ 10 s"))
        paths = [str(p.parent) for p in sorted((root / "agents").glob("*/*.evalset.json"))][: max(1, -(-ran * 100 // total))]
        marks = _streamed([AGENTDIFF, "run", "--json", *paths], root, min(ran, total))
        last = (0, 0.0, 0.0)
        for done, seconds, memory in marks:
            rate = (done - last[0]) / max(seconds - last[1], 1e-9)
            rows.append((f"scale: run, tiny cases, at {done:,}", f"{rate:.0f} cases/s, {memory:.0f} MB", "steady rate, flat memory"))
            last = (done, seconds, memory)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return rows


def _measured(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB of the process or its largest child, exit code) of one command."""
    script = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
              "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode; "
              "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)")
    out = subprocess.run([sys.executable, "-c", script, *argv], cwd=cwd, capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]) / 1024, int(out[2])


def scale_benchmark() -> list[tuple[str, str, str]]:
    sizes = [int(n) for n in os.environ.get("AGENTDIFF_SCALE_SIZES", "1000,5000").split(",") if n.strip()]
    rows: list[tuple[str, str, str]] = []
    for layout, sets in (("one eval set", 1), ("50 eval sets", 50)):
        base: dict[str, float] = {}
        for size in sizes:
            root = Path(tempfile.mkdtemp(prefix="agentdiff-scale-"))
            try:
                _suite(root, size, sets)
                measured = _one_size(root, size, layout, sizes[0], base)
            finally:
                shutil.rmtree(root, ignore_errors=True)
            rows += measured
    tiny = int(os.environ.get("AGENTDIFF_SCALE_TINY", "0") or 0)
    if tiny:
        rows += tiny_probe(tiny, int(os.environ.get("AGENTDIFF_SCALE_TINY_RUN", "0") or 0) or tiny)
    return rows


def _one_size(root: Path, size: int, layout: str, smallest: int, base: dict[str, float]) -> list[tuple[str, str, str]]:
    """`list`, then `run`, over one generated suite: `list` with an empty cache reads every file; `run`
    after it finds them read, as a user's would."""
    rows: list[tuple[str, str, str]] = []
    with _fresh_cache():
        for name, argv in (("list", [AGENTDIFF, "list"]), ("run", [AGENTDIFF, "run", "--json"])):
            wall, rss, code = _measured(argv, root)
            if code not in (0, 1):  # 1: a case failed; anything else is not a measure (a file over the size limit, say)
                rows.append((f"scale: {name}, {size:,} cases, {layout}", f"exit {code}", "not measured: the command failed"))
                continue
            per_case = wall / size
            base.setdefault(name, per_case)
            rows.append((f"scale: {name}, {size:,} cases, {layout}: wall / peak memory", f"{wall:.1f} s / {rss:.0f} MB",
                         f"{per_case * 1000:.2f} ms a case, {per_case / base[name]:.2f}× the {smallest:,}'s (target ≤ 1.3×)"))
    return rows
