"""The selected case: its header, turn tabs, and the four layers side by side (Expected | Actual).

The screen sets `state` and binds its `view` (turn, divergence, focused layer) to this widget's;
the widget renders; choosing a turn tab posts `CaseDetail.TurnChosen`."""

from __future__ import annotations

from typing import NamedTuple, Optional

from agentdiff.core.diff.model import Divergence
from agentdiff.core.project.discovery import ConformanceCaseRef
from agentdiff.core.reports.judge_text import judge_lines
from agentdiff.core.reports.text import usage_line
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.events import CaseState
from agentdiff.core.workbench.history import History
from agentdiff.core.workbench.triage import Triage

from ..safe_text import shown
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static, Tab, Tabs

from ..diff_render import layer_views
from ..glyphs import glyph, sparkline


class LayerSection(Vertical):
    def __init__(self, layer: str) -> None:
        super().__init__(id=f"layer-{layer}", classes="layer")
        self.layer_name = layer

    def compose(self) -> ComposeResult:
        yield Static(classes="layer-title")
        with Horizontal(classes="sides"):
            yield Static(classes="side expected")
            yield Static(classes="side actual")

    def show(self, title: str, expected: Text, actual: Text, status: str) -> None:
        self.query_one(".layer-title", Static).update(Text(title, style="bold" if status == "changed" else "dim"))
        self.query_one(".expected", Static).update(shown(expected))
        self.query_one(".actual", Static).update(shown(actual))
        self.set_class(status == "changed", "changed")
        self.set_class(status == "absent", "absent")


#: The layers of an eval case `a` can write on their own.
ACCEPTED_LAYERS = ("tool_calls", "response")


class View(NamedTuple):
    """What the detail shows of the selected case, and what `a` accepts."""

    turn: int = 0
    divergence: int = -1  # index into the case's divergences; -1: none
    layer: Optional[str] = None  # focused with 1–4: accept takes that layer
    turn_focused: bool = False  # moved with t / T or a tab: accept takes that turn

    def scope(self, conformance: bool = False) -> str:
        """What `a` would write, only as far as it can be written: an eval case keeps no request or
        session (their layer focuses the turn), a conformance recording is accepted whole."""
        if conformance:
            return "the whole case (a conformance recording is accepted whole)"
        if self.layer in ACCEPTED_LAYERS:
            return f"the {self.layer} layer of turn {self.turn + 1}"
        if self.layer:
            return f"turn {self.turn + 1} (an eval case keeps no {self.layer}: the whole turn)"
        if self.turn_focused:
            return f"turn {self.turn + 1}"
        return "the whole case"


class CaseDetail(VerticalScroll):
    """Attributes down: the screen sets `state` (the case) and binds `view` to its own; the triage
    file and the run history are given at construction. A change of `view` redraws."""

    view: var[View] = var(View, always_update=True)

    class TurnChosen(Message):
        def __init__(self, turn: int) -> None:
            super().__init__()
            self.turn = turn

    def __init__(self, triage: Triage, history: Optional[History], prices: Optional[dict] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.triage, self.history, self.prices = triage, history, prices or {}
        self.state: Optional[CaseState] = None
        self.divergence: Optional[Divergence] = None
        self.extra: Text = Text()
        self._tab_case: Optional[tuple[str, int]] = None
        self._generation = 0

    @property
    def turn(self) -> int:
        return self.view.turn

    def watch_view(self, view: View) -> None:
        if self.is_mounted:
            self._draw(view)

    def _draw(self, view: View) -> None:
        state = self.state
        divergences = state.run.diff.divergences if state and state.run and state.run.diff else ()
        index = min(view.divergence, len(divergences) - 1)
        self.divergence = divergences[index] if index >= 0 else None
        self.extra = Text()
        if state is not None:
            entries = self.history.entries(state.ref.id) if self.history else []
            self.extra.append_text(self.history_line([e.get("score") for e in entries], [e.get("status", "") for e in entries]))
            label, note = self.triage.label_of(state.ref.id), self.triage.note_of(state.ref.id)
            if label or note:
                self.extra.append(f"\nlabel: {label or '-'}" + (f" · note: {note}" if note else ""), style="magenta")
            if self.divergence is not None and self.divergence.turn != self.turn:  # a turn was chosen: say what is in it
                turns = sorted({d.turn + 1 for d in divergences})
                self.extra.append(f"\nturn {self.turn + 1}: no divergence · divergences in turn{'s' if len(turns) > 1 else ''} "
                                  f"{', '.join(map(str, turns))} (]: the next)", style="dim")
            elif self.divergence is not None:
                self.extra.append(f"\ndivergence {index + 1}/{len(divergences)}: {self.divergence.summary}", style="bold")
                if self.divergence.source:
                    self.extra.append(f"  (e: {self.divergence.source})", style="dim")
            conformance = isinstance(state.ref, ConformanceCaseRef)
            self.extra.append(f"\naccept scope: {view.scope(conformance)}" + (" · esc: the whole case" if view.layer or view.turn_focused else ""),
                              style="dim")
        self._render_header()
        self._render_tabs()
        self._render_layers()

    def compose(self) -> ComposeResult:
        yield Static(id="detail-header")
        yield Tabs(id="turn-tabs")
        with Horizontal(id="side-titles"):
            yield Static(Text("Expected", style="bold"), classes="side")
            yield Static(Text("Actual", style="bold"), classes="side")
        for layer in ("request", "tool_calls", "response", "session"):
            yield LayerSection(layer)


    def _render_header(self) -> None:
        header = Text()
        state = self.state
        if state is None:
            header.append("No case selected.", style="dim")
        else:
            mark, style = glyph(state.status, state.running, state.stale)
            header.append(f"{mark} ", style=style)
            header.append(state.ref.id, style="bold")
            result = state.run.result if state.run else None
            if result is not None:
                header.append(f"\n{result.status.value} · {result.mode}", style=style)
                for metric in result.metrics:
                    if metric.threshold is not None and metric.score is not None:
                        header.append(f" · {metric.name} {metric.score:.2f}/{metric.threshold:g}")
                spent = usage_line([result], self.prices)
                if spent:
                    header.append(f"\n{spent}", style="dim")
                if result.error:
                    header.append(f"\n{result.error}", style="red")
                for metric in result.metrics:  # the judge's verdict and reasons for the turn shown
                    for line in judge_lines(result, metric, only_failing=False, turn_only=self.turn):
                        header.append(f"\njudge · {metric.name} " if not line.startswith(" ") else "\n    ", style="magenta")
                        header.append(line.strip().replace(" · judge: ", " · "))
            elif state.running:
                header.append("\nrunning…", style="cyan")
            else:
                header.append("\nnot run yet", style="dim")
            if state.reason:
                header.append(f"\n{state.reason}", style="italic dim")
            errored = result is not None and result.status is CaseStatus.ERROR  # the error says it all
            if state.run and state.run.diff and state.run.diff.first_divergence and not errored:
                header.append(f"\nfirst divergence: {state.run.diff.first_divergence.summary}", style="yellow")
            header.append_text(self.extra)
        self.query_one("#detail-header", Static).update(shown(header))

    def _render_tabs(self) -> None:
        tabs = self.query_one("#turn-tabs", Tabs)
        diff = self.state.run.diff if self.state and self.state.run else None
        count = len(diff.turns) if diff else 0
        labels = [f"turn {i + 1}{' •' if diff is not None and any(d.turn == i for d in diff.divergences) else ''}" for i in range(count)]
        key = (self.state.ref.id if self.state else "", count)
        if key != self._tab_case:
            existing = list(tabs.query(Tab))
            if self._tab_case is not None and self._tab_case[1] == count and len(existing) == count:
                for tab, label in zip(existing, labels):  # as many turns: relabel, no re-layout
                    tab.label = label
            else:
                self._generation += 1  # the old tabs are removed asynchronously: new ids must not clash
                tabs.clear()
                for index, label in enumerate(labels):
                    tabs.add_tab(Tab(label, id=f"turn-{self._generation}-{index}"))
            self._tab_case = key
        if count:
            tabs.active = f"turn-{self._generation}-{min(self.turn, count - 1)}"
        tabs.display = count > 0

    def _render_layers(self) -> None:
        diff = self.state.run.diff if self.state and self.state.run else None
        sections = list(self.query(LayerSection))
        if diff is None:
            for section in sections:
                section.show(section.layer_name, Text(""), Text(""), "absent")
            return
        for section, view in zip(sections, layer_views(diff, self.turn, self.divergence), strict=True):
            section.show(view.title, view.expected, view.actual, view.status)

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        event.stop()
        if event.tab is not None and event.tab.id and event.tab.id.startswith(f"turn-{self._generation}-"):
            turn = int(event.tab.id.rsplit("-", 1)[1])
            if turn != self.turn:
                self.post_message(self.TurnChosen(turn))

    def scroll_to_layer(self, layer: str) -> None:
        self.query_one(f"#layer-{layer}", LayerSection).scroll_visible(top=True, animate=False)

    @staticmethod
    def history_line(values: list[Optional[float]], statuses: list[str]) -> Text:
        if not statuses:
            return Text()
        return Text(f"\nhistory: {sparkline(values)}  ({', '.join(statuses[-5:])})", style="dim")
