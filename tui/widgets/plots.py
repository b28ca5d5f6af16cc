"""Plots, drawn with plotext in the terminal: a case's runs over time (its score; its seconds and
tokens per run) and the suite's pass rate over batches of runs."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual_plotext import PlotextPlot


def _draw(plot: PlotextPlot, title: str, series: Sequence[tuple[str, Sequence[Optional[float]], str]], ylim: Optional[tuple[float, float]] = None) -> None:
    """Each series (label, values by run, side "left"/"right") as a line over runs 1…n; runs without a
    value are left out of their line."""
    plt = plot.plt
    plt.clear_figure()
    plt.title(title)
    plt.xlabel("run")
    for label, values, side in series:
        points = [(i + 1, v) for i, v in enumerate(values) if v is not None]
        if points:
            plt.plot([x for x, _ in points], [y for _, y in points], label=label, yside=side, marker="braille")
    if ylim:
        plt.ylim(*ylim)
        ticks = 5 if plot.size.height >= 12 else 3  # a short plot: fewer ticks, so none of them collapse onto another
        plt.yticks([ylim[0] + (ylim[1] - ylim[0]) * i / (ticks - 1) for i in range(ticks)])
    runs = max((len(values) for _, values, _ in series), default=0)
    if runs:
        step = max(1, -(-runs // 8))  # whole runs, at most about eight ticks
        plt.xticks(list(range(1, runs + 1, step)))
    plot.refresh()


class CasePlots(Vertical):
    """The selected case's runs (kept in `.agentdiff/history.sqlite`): score, seconds and tokens."""

    def compose(self) -> ComposeResult:
        yield Static(id="plots-note")
        yield PlotextPlot(id="plot-score")
        yield PlotextPlot(id="plot-cost")

    def show(self, entries: list[dict[str, Any]], compact: bool = False) -> None:
        """The case's kept runs plotted; `compact` (a short terminal): the score alone, with every row."""
        self.query_one("#plot-cost").display = not compact
        note = self.query_one("#plots-note", Static)
        if not entries:
            note.update(Text("No runs kept for this case yet (p: back to the diff).", style="dim"))
            return
        last = entries[-1]
        said = []
        if last.get("seconds") is not None:
            said.append(f"{last['seconds']:.2f} s")
        if last.get("tokens"):
            said.append(f"{last['tokens']:,} tokens")
        if last.get("tools") is not None:
            said.append(f"{last['tools']:g} tool call{'s' if last['tools'] != 1 else ''}")
        scored = any(e.get("score") is not None for e in entries)
        note.update(Text(f"{len(entries)} run(s) kept" + (f" · the last: {', '.join(said)}" if said else "")
                         + ("" if scored else " · no score to plot: no kept run was scored (they errored, or nothing gates)")
                         + "  (p: back to the diff)", style="dim"))
        _draw(self.query_one("#plot-score", PlotextPlot), "score (as in the tree)", [("score", [e.get("score") for e in entries], "left")], (0, 1))
        _draw(self.query_one("#plot-cost", PlotextPlot), "seconds (left) and tokens (right) per run",
              [("seconds", [e.get("seconds") for e in entries], "left"), ("tokens", [e.get("tokens") for e in entries], "right")])


def draw_pass_rate(plot: PlotextPlot, rates: list[tuple[float, int, int]]) -> None:
    _draw(plot, "pass rate of the suite after each batch of runs (%)", [("pass rate", [100 * passed / total if total else None for _, passed, total in rates], "left")], (0, 100))
