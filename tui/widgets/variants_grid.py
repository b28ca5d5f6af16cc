"""`g`: a repeated case's runs side by side, per turn and layer: each distinct thing its runs did, how
many runs did it (a bar and the run numbers), the baseline's marked; the majority run named."""

from __future__ import annotations

from typing import Optional

from agentdiff.core.diff.variants import Grid
from agentdiff.core.run.grid import run_grid
from agentdiff.core.scoring.results import PassRate
from rich.cells import cell_len
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..safe_text import one_line

LAYER_NAMES = {"tool_calls": "tool calls", "response": "response"}


def _runs(runs: tuple[int, ...], width: int) -> str:
    said = " ".join(str(run + 1) for run in runs)
    text = ("run " if len(runs) == 1 else "runs ") + said
    if cell_len(text) <= width:
        return text
    return text[: max(0, width - 1)] + "…"


def _cut(text: str, width: int) -> str:
    text = one_line(text)
    if cell_len(text) <= width:
        return text
    while text and cell_len(text) > width - 1:
        text = text[:-1]
    return text + "…"


def grid_text(made: Optional[Grid], width: int, rate: Optional[PassRate] = None) -> Text:
    """The grid for a pane `width` columns wide."""
    if made is None:
        return Text("One run: nothing to set side by side. Run the case more than once (num_runs, --num-runs).", style="dim")
    width = max(40, width)
    out = Text()
    out.append(f"{made.runs} runs side by side · {made.distinct} distinct trajector{'y' if made.distinct == 1 else 'ies'}", style="bold")
    share = len(made.majority_runs)
    out.append(f" · majority: run {made.majority + 1} ({share} of {made.runs})")
    if rate is not None:
        out.append(f"\n{rate.words}", style="dim")
    out.append("\n✓ the baseline's · a: accept the run shown or the majority · o: step through the runs · g: back", style="dim")
    count_width = len(str(made.runs))
    bar_width = min(10, made.runs)
    runs_width = 18
    text_width = max(12, width - (4 + count_width + 1 + bar_width + 2 + runs_width + 2))
    for row in made.rows:
        out.append(f"\n\nturn {row.turn + 1} · {LAYER_NAMES.get(row.layer, row.layer)}", style="bold")
        if row.agree:
            variant = row.variants[0]
            mark = "✓" if variant.baseline else " "
            out.append(f"\n  {mark} all {made.runs} runs: ", style="green" if variant.baseline else "")
            out.append(_cut(variant.text, width - 14 - count_width), style="dim")
            continue
        for variant in row.variants:
            count = len(variant.runs)
            filled = max(1, round(bar_width * count / made.runs))
            style = "green" if variant.baseline else "yellow" if variant is row.variants[0] else ""
            out.append("\n  ")
            out.append("✓" if variant.baseline else " ", style="green")
            out.append(f" {count:>{count_width}} ")
            out.append("█" * filled + " " * (bar_width - filled), style=style or "white")
            out.append("  ")
            out.append(f"{_cut(variant.text, text_width):<{text_width}}", style=style)
            out.append("  " + _runs(variant.runs, runs_width), style="dim")
    return out


class RunsGrid:
    """The detail's grid pane: shown in place of the layers, its grid made once per run."""

    def __init__(self) -> None:
        self._made: tuple[object, Optional[Grid]] = (None, None)  # (the run, its grid)

    def of(self, run) -> Optional[Grid]:
        if run is None:
            return None
        if self._made[0] is not run:
            self._made = (run, run_grid(run))
        return self._made[1]

    def draw(self, detail, state, wanted: bool) -> None:
        pane = detail.query_one("#grid", VerticalScroll)
        pane.display = wanted and state is not None
        if pane.display:
            for hidden in ("#layers", "#side-titles", "#turn-tabs"):
                detail.query_one(hidden).display = False
            rate = state.run.result.pass_rate if state.run else None
            detail.query_one("#grid-text", Static).update(grid_text(self.of(state.run), detail.size.width - 2, rate))
