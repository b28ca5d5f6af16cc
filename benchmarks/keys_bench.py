"""Key → repaint in the real app against a bare Textual app with the same widgets, in the same run.

The bare app is what a plain Textual program of this shape costs: a list of N rows on the left; on the
right a header, turn tabs, the two side titles and a scrolling column of five layers (a title and a
two-column grid each), all redrawn from the highlighted row on every cursor move. Both are driven by
Pilot at the same size with the same keys (`j` × 20, then `k` × 20, a 50 ms pause after each: the
detail follows the cursor 30 ms after the keys stop), and both are measured by the process's CPU per
key (time.process_time: the app's own work, not the machine's other load) and wall time less the pause.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

SIZE = (200, 50)
KEYS = ["j"] * 20 + ["k"] * 20
PAUSE = 0.05


def _p95(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(0.95 * len(values)))]


async def press_keys(pilot: Any) -> tuple[list[float], list[float]]:
    """Wall (less the pause) and CPU of each key."""
    walls, cpus = [], []
    for key in KEYS:
        tick, tock = time.perf_counter(), time.process_time()
        await pilot.press(key)
        await pilot.pause(PAUSE)
        walls.append(time.perf_counter() - tick - PAUSE)
        cpus.append(time.process_time() - tock)
    return walls, cpus


def bare_app(rows: int) -> Any:
    """The plain Textual app of the same shape (see the module's docstring)."""
    from rich.table import Table
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import Horizontal, Vertical, VerticalScroll
    from textual.widgets import OptionList, Static, Tab, Tabs

    rng = random.Random(7)
    words = "the weather in paris is sunny today kitchen light turned on at fifty percent refund order".split()

    def sentence() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(4, 30)))

    details = [[[(sentence(), sentence()) for _ in range(rng.randint(1, 6))] for _ in range(5)] for _ in range(rows)]

    class Cases(OptionList):
        BINDINGS = [Binding("j", "cursor_down"), Binding("k", "cursor_up")]

    class Bare(App):
        CSS = """
        Cases { width: 48; }
        #header { height: auto; }
        .row { height: 1; }
        .side { width: 1fr; }
        .layer-title { height: 1; }
        .layer-body { height: auto; }
        .layer { height: auto; }
        """

        def compose(self) -> ComposeResult:
            with Horizontal():
                yield Cases(*(f"agents/set_{i // 10}.evalset.json::case_{i}" for i in range(rows)))
                with Vertical():
                    yield Static(id="header")
                    yield Tabs(Tab("turn 1", id="t1"), Tab("turn 2", id="t2"))
                    with Horizontal(classes="row"):
                        yield Static("Expected", classes="side")
                        yield Static("Actual", classes="side")
                    with VerticalScroll():
                        for layer in range(5):
                            with Vertical(classes="layer"):
                                yield Static(f"layer {layer}", classes="layer-title")
                                yield Static(classes="layer-body", id=f"body{layer}")

        def on_mount(self) -> None:
            self.query_one(Cases).focus()

        def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
            index = event.option_index
            self.query_one("#header", Static).update(Text(f"✗ case_{index}\nfailed · replay · response_match_score 0.41/0.8\n"
                                                          f"first divergence: turn 1 · response changed", style="bold"))
            for layer, pairs in enumerate(details[index]):
                table = Table.grid(expand=True, padding=(0, 1, 0, 0))
                table.add_column(ratio=1, overflow="fold")
                table.add_column(ratio=1, overflow="fold")
                for left, right in pairs:
                    table.add_row(Text(left), Text(right, style="green"))
                self.query_one(f"#body{layer}", Static).update(table)

    return Bare()


async def bare_keys(rows: int) -> tuple[list[float], list[float]]:
    app = bare_app(rows)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        return await press_keys(pilot)


async def agentdiff_keys(root: Path, paths: list[Path], pool: Any = None, settle: bool = True) -> tuple[list[float], list[float]]:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import _all_settled, _until

    from agentdiff.tui.app import create_app

    app = create_app(root, paths, pool=pool, watch=False, project="bench")
    async with app.run_test(size=SIZE) as pilot:
        if settle:
            await _until("every case has a verdict", lambda: _all_settled(app.workbench), 180)
        while app.main.first_paint_at is None:
            await asyncio.sleep(0.005)
        await pilot.pause(1.0)
        try:
            return await press_keys(pilot)
        finally:
            app.workbench.cancel()


def keys_rows(samples: Path, many: Path, many_paths: list[Path], never_pool: Any) -> list[tuple[str, str, str]]:
    """The table: each app's CPU and wall per key (median, p95), and agentdiff's ratio to the bare app's."""
    rows: list[tuple[str, str, str]] = []
    measured = {
        "samples (29 cases, every one run in replay)": (asyncio.run(agentdiff_keys(samples, [samples])), asyncio.run(bare_keys(29))),
        "5,000 cases": (asyncio.run(agentdiff_keys(many, many_paths, never_pool, settle=False)), asyncio.run(bare_keys(5000))),
    }
    for name, ((walls, cpus), (bare_walls, bare_cpus)) in measured.items():
        rows.append((f"keys, {name}: agentdiff CPU per key, median / p95", f"{statistics.median(cpus) * 1000:.1f} / {_p95(cpus) * 1000:.1f} ms",
                     "target p95 <= 50 ms"))
        rows.append((f"keys, {name}: bare Textual app CPU per key, median / p95",
                     f"{statistics.median(bare_cpus) * 1000:.1f} / {_p95(bare_cpus) * 1000:.1f} ms", "the reference"))
        rows.append((f"keys, {name}: ratio of p95 CPU (agentdiff ÷ bare)", f"{_p95(cpus) / _p95(bare_cpus):.2f}×", "target <= 1.5×"))
        rows.append((f"keys, {name}: wall per key less the pause, median (agentdiff / bare)",
                     f"{statistics.median(walls) * 1000:.0f} / {statistics.median(bare_walls) * 1000:.0f} ms", ""))
    return rows


def copy_samples(source: Path) -> Path:
    root = Path(tempfile.mkdtemp(prefix="agentdiff-keys-")) / "samples"
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__", ".agentdiff"))
    return root
