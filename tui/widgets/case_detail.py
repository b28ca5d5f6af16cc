"""The selected case: its header, turn tabs, and the four layers side by side (Expected | Actual).

The screen sets `state` and binds its `view` (turn, divergence, focused layer) to this widget's;
the widget renders; choosing a turn tab posts `CaseDetail.TurnChosen`."""

from __future__ import annotations

from typing import NamedTuple, Optional

from agentdiff.core.diff.model import CaseDiff, Divergence
from agentdiff.core.project.family import family_of
from agentdiff.core.reports.agents_cli_runs import score_changes
from agentdiff.core.reports.judge_text import judge_lines
from agentdiff.core.reports.text import usage_line
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.costs import run_cost
from agentdiff.core.workbench.events import CaseState
from agentdiff.core.workbench.history import History
from agentdiff.core.workbench.triage import Triage
from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static, Tab, Tabs

from ..diff_render import LayerView, layer_views
from ..glyphs import glyph, runs_line
from ..safe_text import shown
from ..text_rows import marked
from ..timeline_view import timeline_view
from ..versus import Versus
from . import steady
from .plots import CasePlots
from .side_by_side import SideBySide, Stacked
from .detail_lines import error_lines, history_line, triage_line
from .turn_tabs import TurnTabs
from .variants_grid import RunsGrid


class LayerSection(Vertical):
    def __init__(self, layer: str) -> None:
        super().__init__(id=f"layer-{layer}", classes="layer")
        self.layer_name = layer

    def compose(self) -> ComposeResult:
        yield Static(classes="layer-title")
        yield Static(classes="layer-body")

    def show(self, view: LayerView, stacked: bool = False, folded: bool = False) -> None:
        """The layer's rows side by side (each row's sides wrap on their own and the next row starts
        level), or, `stacked`, each row's expected above its actual; `folded`: its title alone."""
        title = Text(view.title, style="bold" if view.status == "changed" else "dim")
        if folded and view.status != "info":  # an informational layer (the timeline): its title says it
            title.append(f" · {'same' if view.status == 'same' else view.expected.plain.strip() or 'absent'}", style="dim")
        steady.update(self.query_one(".layer-title", Static), shown(title), layout="height")
        body = self.query_one(".layer-body", Static)
        body.display = not folded
        if folded:
            pass
        elif stacked:
            lines = [shown(line) for line in stacked_rows(view.rows)]
            steady.update(body, Stacked(lines), ("stacked", tuple(steady.fingerprint(line) for line in lines)), layout="height")
        else:
            rows = [(shown(left), shown(right)) for left, right in view.rows]
            key = ("side by side", tuple((steady.fingerprint(left), steady.fingerprint(right)) for left, right in rows))
            if not steady.shows(body, key):
                steady.update(body, SideBySide(rows), key, layout="height")
        self.set_class(view.status == "changed", "changed")
        self.set_class(view.status == "absent", "absent")


def stacked_rows(rows: list[tuple[Text, Text]]) -> list[Text]:
    """Rows for a narrow pane, as a unified diff reads: a row the same on both sides once; else its
    expected (`-`) right above its actual (`+`). A line numbered by a long text's rows keeps its hang."""
    out: list[Text] = []
    for left, right in rows:
        if left.plain == right.plain or not right.plain.strip():
            out.append(marked(Text("  "), left))
        elif not left.plain.strip():
            out.append(marked(Text("+ ", style="green"), right))
        else:
            out.append(marked(Text("- ", style="red"), left))
            out.append(marked(Text("+ ", style="green"), right))
    return out


#: The layers of an eval case `a` can write on their own.
ACCEPTED_LAYERS = ("tool_calls", "response")


class View(NamedTuple):
    """What the detail shows of the selected case, and what `a` accepts."""

    turn: int = 0
    divergence: int = -1  # index into the case's divergences; -1: none
    layer: Optional[str] = None  # focused with 1–4: accept takes that layer
    turn_focused: bool = False  # moved with t / T or a tab: accept takes that turn

    def scope(self, whole: Optional[str] = None) -> str:
        """What `a` would write, only as far as it can be written: an eval case keeps no request or
        session (their layer focuses the turn), a conformance recording is accepted whole."""
        if whole:  # its format accepts whole cases only
            return f"the whole case ({whole})"
        if self.layer in ACCEPTED_LAYERS:
            return f"the {self.layer} layer of turn {self.turn + 1}"
        if self.layer:
            return f"turn {self.turn + 1} (an eval case keeps no {self.layer}: the whole turn)"
        if self.turn_focused:
            return f"turn {self.turn + 1}"
        return "the whole case"


class CaseDetail(Vertical):
    """Attributes down: the screen sets `state` (the case, or None with a `summary` of the group
    under the cursor), `compact` (a short terminal: a one-line header, layers without divergences
    folded; `i` shows everything), `stacked` (a narrow one: expected above actual) and binds `view`
    to its own; the triage file and the run history are given at construction. A change of `view`
    redraws. The header stays put; the layers scroll under it."""

    view: var[View] = var(View, always_update=True)

    class TurnChosen(Message):
        def __init__(self, turn: int) -> None:
            super().__init__()
            self.turn = turn

    def __init__(self, triage: Triage, history: Optional[History], prices: Optional[dict] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.triage, self.history, self.prices = triage, history, prices or {}
        self.state: Optional[CaseState] = None
        self.summary: Optional[Text] = None
        self.compact = self.stacked = self.details = False
        self.plotting = False  # `p`: the case's runs over time instead of its layers
        self.gridding = False  # `g`: a repeated case's runs side by side instead of its layers
        self.timeline_open = False  # `6`: the timeline unfolded (else its title line alone)
        self.runs_grid = RunsGrid()
        self.versus: Optional[Versus] = None  # `B`: a kept run's actual on the expected side
        self.divergence: Optional[Divergence] = None
        self.extra: Text = Text()
        self._tab_case: Optional[tuple] = None  # (case id, turns, their labels)
        self._generation = 0

    @property
    def turn(self) -> int:
        return self.view.turn

    @property
    def short_header(self) -> bool:
        return self.compact and not self.details

    def watch_view(self, view: View) -> None:
        if self.is_mounted:
            self._draw(view)

    def redraw(self) -> None:
        if self.is_mounted:
            self._draw(self.view)

    def shown_diff(self, state: Optional[CaseState]) -> Optional[CaseDiff]:
        """What the layers show: the run against its baseline, or against a kept run's actual (`B`)."""
        if state is None or state.run is None:
            return None
        compared = self.versus.diff(state) if self.versus is not None else None
        return compared if compared is not None else state.run.diff

    def _draw(self, view: View) -> None:
        state = self.state
        shown_diff = self.shown_diff(state)
        divergences = shown_diff.divergences if shown_diff else ()
        index = min(view.divergence, len(divergences) - 1)
        self.divergence = divergences[index] if index >= 0 else None
        self.extra = Text()
        if state is not None:
            if not self.short_header:
                entries = self.history.entries(state.ref.id) if self.history else []
                self.extra.append_text(history_line(entries))
                self.extra.append_text(triage_line(self.triage, state.ref.id))
            if self.divergence is not None and self.divergence.turn != self.turn:  # a turn was chosen: say what is in it
                turns = sorted({d.turn + 1 for d in divergences})
                self.extra.append(f"\nturn {self.turn + 1}: no divergence · divergences in turn{'s' if len(turns) > 1 else ''} "
                                  f"{', '.join(map(str, turns))} (]: the next)", style="dim")
            elif self.divergence is not None:
                self.extra.append(f"\ndivergence {index + 1}/{len(divergences)}: {self.divergence.summary}", style="bold")
                source, located = self.divergence.source, state.run.result.error_location if state.run else None
                if source or located:  # where `e` goes: the project's line the agent failed at, else the expected value's
                    where = located or str(source)  # the whole path where it fits the line (`+`, a wide terminal); else the file's name
                    line_width = cell_len(f"divergence {index + 1}/{len(divergences)}: {self.divergence.summary}  (e: {where})")
                    if not located and self.short_header and source.line and line_width > self.size.width - 2:
                        where = f"{source.file.rsplit('/', 1)[-1]}:{source.line}"
                    self.extra.append(f"  (e: {where})", style="dim")
            if self.versus is not None and self.versus.scores_only:
                now_scores = [(m.name, m.score) for m in state.run.result.metrics] if state.run else []
                changes = score_changes(self.versus.cases.get(state.ref.id), now_scores)
                self.extra.append(f"\nvs {self.versus.name}: " + (" · ".join(changes) if changes else
                                  "not in it" if state.ref.id not in self.versus.cases else "no score both graded"), style="cyan")
            elif self.versus is not None:
                before = (self.versus.cases.get(state.ref.id) or {}).get("status")
                now = state.status.value if state.status else None
                kept_trace = self.versus.diff(state) is not None
                self.extra.append(f"\nvs {self.versus.name}: {before or 'not in it'} → {now or '-'}"
                                  + ("" if kept_trace else " (it kept no trace of this case: the layers show the baseline)"),
                                  style="cyan")
            whole = family_of(state.ref).accepted_whole
            if not self.short_header or view.layer or view.turn_focused:
                narrowed = (view.layer or view.turn_focused) and not whole  # a case accepted whole has nothing to widen
                self.extra.append(f"\naccept scope: {view.scope(whole)}" + (" · esc: the whole case" if narrowed else ""), style="dim")
        self._render_header()
        self._render_tabs()
        self._render_layers()
        plots = self.query_one(CasePlots)
        plots.display = self.plotting and state is not None
        if plots.display:
            self.query_one("#layers").display = False
        if plots.display:
            self.query_one("#side-titles").display = self.query_one("#turn-tabs").display = False
            plots.show(self.history.entries(state.ref.id) if self.history else [], compact=self.compact)
        self.runs_grid.draw(self, state, self.gridding and not self.plotting)

    def compose(self) -> ComposeResult:
        yield Static(id="detail-header")
        yield TurnTabs(id="turn-tabs")
        with Horizontal(id="side-titles"):
            yield Static(Text("Expected", style="bold"), classes="side", id="expected-title")
            yield Static(Text("Actual", style="bold"), classes="side")
        with VerticalScroll(id="layers"):
            yield Static(id="turn-user")  # the turn's user message, above its layers
            for layer in ("nodes", "request", "tool_calls", "response", "session", "timeline"):
                yield LayerSection(layer)
        yield CasePlots(id="plots")
        with VerticalScroll(id="grid"):
            yield Static(id="grid-text")

    def _render_header(self) -> None:
        header = Text()
        state = self.state
        if state is None:
            header.append_text(self.summary or Text("No case selected.", style="dim"))
        else:
            mark, style = glyph(state.status, state.running, state.stale)
            header.append(f"{mark} ", style=style)
            short = self.short_header
            header.append(state.ref.name if short else state.ref.id, style="bold")  # the tree says where it lives
            result = state.run.result if state.run else None
            if result is not None:
                header.append(" · " if short else "\n")
                header.append(f"{result.status.value} · {result.mode}", style=style)
                graded = family_of(state.ref).scores_without_threshold  # agents-cli's metrics: a score, no threshold
                for metric in result.metrics:
                    if metric.threshold is not None and metric.score is not None and (not short or metric.status is MetricStatus.FAILED):
                        header.append(f" · {metric.name} {metric.score:.2f}/{metric.threshold:g}")
                    elif metric.threshold is None and metric.score is not None and graded and not short:
                        header.append(f" · {metric.name} {metric.score:.2f}")
                if not short:
                    header.append_text(self._spent(state))
                if len(result.runs) > 1 and state.run.restage is not None:  # repeats: each one's verdict, the one shown
                    header.append_text(runs_line(state.run))
                if result.pass_rate is not None and not short and (not result.error or result.status is CaseStatus.FLAKY):  # the rate beside the verdict
                    header.append(f"\n{result.pass_rate.line()}", style="dim")
                if result.error:
                    header.append_text(error_lines(result.located_error, short))  # the fix first; `e` opens the place
                    if result.error_trace and not short:
                        header.append("\n" + result.error_trace, style="dim")
                if result.status is CaseStatus.INCONCLUSIVE:
                    header.append("\nu: more runs until it settles · g: the runs side by side", style="yellow")
                for metric in result.metrics if not short else ():  # the judge's verdict and reasons for the turn shown
                    for line in judge_lines(result, metric, only_failing=False, turn_only=self.turn):
                        header.append(f"\njudge · {metric.name} " if not line.startswith(" ") else "\n    ", style="magenta")
                        header.append(line.strip().replace(" · judge: ", " · "))
            elif state.running:
                header.append(" · running…" if short else "\nrunning…", style="cyan")
            else:
                header.append(" · not run yet" if short else "\nnot run yet", style="dim")
            if state.reason and not short:
                header.append(f"\n{state.reason}", style="italic dim")
            errored = result is not None and result.status is CaseStatus.ERROR  # the error says it all
            first = state.run.diff.first_divergence if state.run and state.run.diff else None
            if first is not None and not errored and not (short and self.divergence is not None) and first is not self.divergence:
                header.append(f"\nfirst divergence: {first.summary}", style="yellow")
            header.append_text(self.extra)
            if short:
                header.append("  i: details", style="dim")
        steady.update(self.query_one("#detail-header", Static), shown(header), layout="height")

    def _spent(self, state: CaseState) -> Text:
        """`tokens: 296 agent · 2 tool calls · 1.3 s a run`: what the case's run took."""
        if state.run is None or not state.run.outputs:
            return Text()
        seconds, _, tools, _ = run_cost(state.run, {})
        parts = [part for part in (usage_line([state.run.result], self.prices),) if part]
        if tools is not None:
            parts.append(f"{tools:g} tool call{'s' if tools != 1 else ''}")
        if seconds is not None:
            parts.append(f"{seconds:.1f} s{' a run' if len(state.run.outputs) > 1 else ''}")
        return Text("\n" + " · ".join(parts), style="dim") if parts else Text()

    def _render_tabs(self) -> None:
        tabs = self.query_one("#turn-tabs", Tabs)
        diff = self.shown_diff(self.state)
        count = len(diff.turns) if diff else 0
        labels = [f"turn {i + 1}{' !' if diff is not None and diff.turns[i].error else ' •' if diff is not None and any(d.turn == i for d in diff.divergences) else ''}"
                  for i in range(count)]  # ! the turn where the run broke
        key = (self.state.ref.id if self.state else "", count, tuple(labels))  # a re-score relabels them (an accepted turn)
        if key != self._tab_case:
            existing = [tab for tab in tabs.query(Tab) if (tab.id or "").startswith(f"turn-{self._generation}-")]
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
            self._activate_tab(tabs, f"turn-{self._generation}-{min(self.turn, count - 1)}")
        tabs.display = count > 1 or (count == 1 and not self.short_header)

    def _activate_tab(self, tabs: Tabs, wanted: str) -> None:
        """The turn's tab active; tabs just added mount later (a burst of keys redraws before they
        have): then once they have, unless another case's tabs replaced them meanwhile."""
        if any(tab.id == wanted for tab in tabs.query(Tab)):
            tabs.active = wanted
        else:
            self.call_after_refresh(lambda: any(tab.id == wanted for tab in tabs.query(Tab)) and setattr(tabs, "active", wanted))

    def _render_layers(self) -> None:
        diff = self.shown_diff(self.state)
        *sections, timeline = list(self.query(LayerSection))
        self._render_timeline(timeline, diff)
        self.query_one("#side-titles").display = not self.stacked and diff is not None
        versus = self.versus is not None and self.state is not None and diff is not None and diff is not self.state.run.diff
        steady.update(self.query_one("#expected-title", Static), Text(f"Run {self.versus.name}" if versus else "Expected", style="bold"))
        self.query_one("#layers").display = self.state is not None
        turn = diff.turns[self.turn] if diff is not None and 0 <= self.turn < len(diff.turns) else None
        said = self.query_one("#turn-user", Static)
        said.display = bool(turn and (turn.user_text or turn.error))
        if turn is not None and (turn.user_text or turn.error):
            line = Text.assemble(("user: ", "bold"), (turn.user_text, ""))
            if turn.error:  # the turn where the run broke: what came after it never ran (its error said once)
                above = self.state is not None and self.state.run is not None and turn.error in (self.state.run.result.error or "")
                line.append("\nthe run broke in this turn (its error is above)" if above else f"\nthe run broke in this turn: {turn.error}",
                            style="red")
            steady.update(said, shown(line), layout="height")
        if diff is None:
            for section in sections:
                section.display = section.layer_name != "nodes"
                section.show(LayerView(section.layer_name, [], "absent"), folded=True)
            return
        for section, view in zip(sections, layer_views(diff, self.turn, self.divergence), strict=True):
            section.display = view is not None  # the nodes of a workflow only
            if view is None:
                continue
            # a short terminal folds what holds no divergence, unless that layer is focused (1–5)
            folded = self.compact and view.status != "changed" and self.view.layer != section.layer_name
            section.show(view, self.stacked, folded)

    def _render_timeline(self, section: "LayerSection", diff: Optional[CaseDiff]) -> None:
        """The turn's calls on a time axis (`6`), beside a kept run's (`B`); folded to its title (how many
        calls, how long) until opened."""
        state = self.state
        section.display = state is not None and state.run is not None and diff is not None
        if not section.display:
            return
        run = state.run
        expected = self.versus.trace(state) if self.versus is not None and not self.versus.scores_only else None
        view = timeline_view(expected, run.trace, self.turn)
        alone = all(left.plain == right.plain for left, right in view.rows)  # no compared side: the whole width
        section.show(view, self.stacked or alone, folded=not self.timeline_open)  # its title says what it holds; 6 opens it

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        event.stop()  # a redraw activates tabs too (and Tabs its first by itself): only the user's choice is a turn chosen

    def on_turn_tabs_chosen(self, event: TurnTabs.Chosen) -> None:
        event.stop()
        if event.tab_id.startswith(f"turn-{self._generation}-"):
            turn = int(event.tab_id.rsplit("-", 1)[1])
            if turn != self.turn:
                self.post_message(self.TurnChosen(turn))

    def scroll_to_layer(self, layer: str, top: bool = True) -> None:
        """Bring a layer into view: to the top (`]`), or only as far as needed (a case just selected)."""
        section = self.query_one(f"#layer-{layer}", LayerSection)
        if top:
            section.scroll_visible(top=True, animate=False)
        else:
            self.query_one("#layers", VerticalScroll).scroll_home(animate=False)
            section.scroll_visible(animate=False)

    def layer_in_view(self, layer: str) -> bool:
        """Whether a layer's title line is on screen in the scrolling layers."""
        section = self.query_one(f"#layer-{layer}", LayerSection)
        layers = self.query_one("#layers", VerticalScroll)
        return section.display and layers.scroll_y <= section.virtual_region.y < layers.scroll_y + layers.size.height
