"""The suite at a glance (`S`): the pass rate over batches of runs, and the slowest and most
expensive cases of the last runs. Esc, q or S goes back."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from agentdiff.core.workbench.costs import CaseCost, case_costs, most_expensive, slowest
from agentdiff.core.workbench.events import CaseState
from agentdiff.core.workbench.history import History
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual_plotext import PlotextPlot

from ..safe_text import shown
from ..widgets.plots import draw_pass_rate


def cost_table(title: str, rows: Sequence[CaseCost]) -> Table:
    """The cases' numbers are never cut (a column is as wide as its widest value); the case's name
    gives way, with an ellipsis."""
    table = Table(title=title, title_justify="left", title_style="bold", box=None, padding=(0, 1), expand=True)
    cells = [(row.status,
              f"{row.seconds:.2f}" if row.seconds is not None else "-",
              f"{row.tokens:,}" if row.tokens else "-",
              f"{row.tool_calls:g}" if row.tool_calls is not None else "-",
              f"${row.cost:.4f}" if row.cost is not None else "-") for row in rows]
    table.add_column("case", overflow="ellipsis", no_wrap=True, ratio=1, min_width=8)
    for index, column in enumerate(("verdict", "s/run", "tokens", "tools", "cost")):
        width = max([len(column), *(len(values[index]) for values in cells)])
        table.add_column(column, justify="right", no_wrap=True, min_width=width)
    for row, values in zip(rows, cells):
        table.add_row(shown(Text(row.name)), *values)
    if not rows:
        table.add_row(Text("(none yet)", style="dim"), "", "", "", "", "")
    return table


WIDE = 130  # columns from which the two tables sit side by side


class SuiteScreen(Screen[None]):
    BINDINGS = [("escape", "app.pop_screen", "Back"), ("q", "app.pop_screen", "Back"), ("S", "app.pop_screen", "Back"),
                ("j,down", "scroll_tables(1)", "Down"), ("k,up", "scroll_tables(-1)", "Up"),
                ("pagedown,space", "scroll_tables(10)", "Page down"), ("pageup", "scroll_tables(-10)", "Page up")]

    def __init__(self, states: Sequence[CaseState], history: Optional[History], prices: Optional[Mapping] = None) -> None:
        super().__init__()
        self.states, self.history, self.prices = list(states), history, prices or {}

    def compose(self) -> ComposeResult:
        yield Static(id="suite-title")
        yield PlotextPlot(id="pass-rate")
        with Horizontal(id="suite-tables"):
            yield Static(id="slowest", classes="suite-table")
            yield Static(id="expensive", classes="suite-table")
        yield Footer()

    def on_mount(self) -> None:
        ran = [state for state in self.states if state.run is not None]
        passed = sum(state.status is not None and state.status.value == "passed" for state in ran)
        rates = self.history.pass_rates() if self.history else []
        title = Text("suite", style="bold")
        title.append(f"  {len(self.states)} cases · {passed}/{len(ran)} passed in the last runs" if ran else "  no case has run yet")
        title.append(f" · {len(rates)} batch(es) of runs kept" if rates else "", style="dim")
        title.append("  (esc: back)", style="dim")
        self.query_one("#suite-title", Static).update(title)
        draw_pass_rate(self.query_one(PlotextPlot), rates)
        costs = case_costs(self.states, self.prices)
        self.slow, self.expensive = slowest(costs), most_expensive(costs)
        self.query_one("#slowest", Static).update(cost_table("slowest", self.slow))
        self.query_one("#expensive", Static).update(cost_table("most expensive (cost, else tokens)", self.expensive))
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def action_scroll_tables(self, lines: int) -> None:
        """The tables, stacked on a small terminal, scrolled from the keyboard as the mouse wheel does."""
        tables = self.query_one("#suite-tables")
        tables.scroll_to(y=tables.scroll_y + lines, animate=False)

    def fit(self) -> None:
        """Side by side where both tables fit whole; else one above the other (an 80-column terminal)."""
        tables = self.query_one("#suite-tables")
        wide = self.app.size.width >= WIDE
        tables.styles.layout = "horizontal" if wide else "vertical"
        tables.styles.overflow_y = "hidden" if wide else "auto"
