"""The workbench screen: the case tree and the selected case's layers, and every key of the app.

It owns the bindings (each with its description; the footer, the `?` help and the command palette are
made from them) and the view state (turn, divergence, focused layer, accept scope) as one reactive,
bound down to the detail. The workbench's events arrive as one coalesced message (a burst of a thousand
updates is one repaint). Accept, undo, re-record and triage live in `BaselineActions` and `TriageActions`."""

from __future__ import annotations

import gc
import time
from typing import Optional

from agentdiff.core.workbench.events import CaseState, CasesUpdated, CaseUpdated, Event, Notice
from agentdiff.core.workbench.triage import Triage
from agentdiff.core.workbench.workbench import Workbench
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Static

from ..case_filter import matches
from ..case_rows import LookAlikes, case_facts, case_row, group_summary, load_error_summary, no_cases_hint, startup_notices
from ..heap import HeapSettler
from ..widgets.case_detail import CaseDetail, View
from ..widgets.case_tree import CaseRow, CaseTree
from ..widgets.filter_bar import FilterBar
from ..widgets import steady
from ..widgets.header_bar import HeaderBar, Tally
from ..widgets.key_footer import KeyFooter
from .baseline_actions import BaselineActions
from .compare_actions import CompareActions
from .help_screen import HelpScreen
from .layout_actions import LayoutActions
from .move_actions import MoveActions
from .run_actions import RunActions
from .suite_screen import SuiteScreen
from .triage_actions import TriageActions


def key(key: str, action: str, description: str, help: str, show: bool = True, key_display: Optional[str] = None) -> Binding:
    """A binding with its footer description and, as its tooltip, the line the help and palette show."""
    return Binding(key, action, description, show=show, key_display=key_display, tooltip=help)


class WorkbenchScreen(BaselineActions, CompareActions, TriageActions, LayoutActions, MoveActions, RunActions, Screen):
    BINDINGS = [
        key("n", "next_failure", "Next failure", "Next failing case"),
        key("N", "previous_failure", "Prev failure", "Previous failing case", show=False),
        key("]", "next_divergence", "Next divergence", "Next divergence inside the case"),
        key("[", "previous_divergence", "Prev divergence", "Previous divergence inside the case", show=False),
        key("t", "next_turn", "Next turn", "Next turn (and focus it for accept)", show=False),
        key("T", "previous_turn", "Prev turn", "Previous turn (and focus it for accept)", show=False),
        key("1", "layer('request')", "Request", "Jump to the request layer (and focus it for accept)", show=False),
        key("2", "layer('tool_calls')", "Tool calls", "Jump to the tool_calls layer (and focus it for accept)", show=False),
        key("3", "layer('response')", "Response", "Jump to the response layer (and focus it for accept)", show=False),
        key("4", "layer('session')", "Session", "Jump to the session layer (and focus it for accept)", show=False),
        key("5", "layer('nodes')", "Nodes", "Jump to the nodes layer: what ran in an ADK 2 workflow", show=False),
        key("ctrl+d", "scroll_detail(1)", "Detail down", "Scroll the detail half a page down, wherever the focus is (ctrl+u: up)", show=False),
        key("ctrl+u", "scroll_detail(-1)", "Detail up", "Scroll the detail half a page up", show=False),
        key("6", "timeline", "Timeline", "The turn's model and tool calls on a time axis: latency, tokens, who made each", show=False),
        key("o", "next_run", "Next run", "A case run more than once: show its next run (its actual side, diff and accept)", show=False),
        key("O", "next_run(-1)", "Prev run", "A case run more than once: show its previous run", show=False),
        key("r", "rerun", "Re-run", "Re-run the selected case"),
        key("R", "rerun_all", "Re-run all", "Re-run all visible cases", show=False),
        key("m", "toggle_mode", "Mode", "Switch the mode: each case's default (conformance replays, eval sets live) / everything live"),
        key("a", "accept", "Accept", "Accept the actual run as baseline: the case, or the focused turn or layer; preview first"),
        key("A", "accept_all", "Accept all", "Accept all visible failures (flaky ones left to review); preview first; one z undoes it", show=False),
        key("V", "review", "Review", "Review the visible failures one by one: a accept, x reject, s skip, z back", show=False),
        key("z", "undo", "Undo", "Undo the last accept, re-record, label or note (A batch: all of it)"),
        key("Z", "redo", "Redo", "Redo what z undid", show=False),
        key("D", "drop_entry", "Drop undo entry", "Drop the newest undo entry (when a hand edit blocks it), so older ones can be undone", show=False),
        key("ctrl+r", "rerecord", "Re-record live", "Re-record the case live: runs the agent with its own model and writes its baseline (confirm first)", show=False),
        key("e", "edit", "Edit", "Open the file holding the expected value at its line in $VISUAL / $EDITOR"),
        key("slash", "filter", "Filter", 'Filter cases: words, status:failed, agent:x, label:"flaky model", mode:live, layer:request; ! inverts a token', key_display="/"),
        key("f", "failures_only", "Failures", "Show failures only"),
        key("l", "label", "Label", "Label the failure (kept in agentdiff-triage.yaml); on a group or cluster row, all its cases", show=False),
        key("W", "since_pass", "Since pass", "What changed since the case last passed: the files its agent read then that differ now, as diffs", show=False),
        key("B", "compare_with", "Compare", "Compare with a kept run (or a trace file, scored first): regressions marked in the tree, that run's actual beside the current one", show=False),
        key("C", "clusters", "Clusters", "Group the tree by failure cluster (the first divergence's signature), or back by agent", show=False),
        key("c", "comment", "Comment", "Comment on the case (kept in agentdiff-triage.yaml)", show=False),
        key("j", "tree_down", "Down", CaseTree.BINDINGS[0].tooltip, show=False),  # the tree's keys, when it is hidden
        key("k", "tree_up", "Up", CaseTree.BINDINGS[1].tooltip, show=False),
        key("i", "details", "Details", "Show or fold the case's details (history, usage, judge, scope) in a short terminal", show=False),
        key("plus", "maximise", "Maximise", "Maximise the detail (no tree, no header bar); again to restore", show=False, key_display="+"),
        key("backslash", "toggle_tree", "Hide tree", "Hide or show the case tree", show=False, key_display="\\"),
        key("g", "grid", "Runs grid", "A case run more than once: its runs side by side, per turn and layer: what each did, how many "
            "runs did it, the baseline's marked; again for the diff", show=False),
        key("u", "until_confident", "Until confident", "Inconclusive cases (the one selected, or those under a group): more runs, "
            "doubling, until each verdict settles (at most 100 runs each; the cost is shown first)", show=False),
        key("p", "plots", "Plots", "Plot the case's runs over time: score, seconds and tokens per run; again for the diff", show=False),
        key("S", "suite", "Suite", "The suite at a glance: pass rate over runs, the slowest and most expensive cases", show=False),
        key("w", "toggle_watch", "Pause watch", "Pause / resume watching", show=False),
        key("escape", "whole_case", "Whole case", "Reset the accept scope (a focused turn or layer) to the whole case; else clear the filter", show=False),
        key("question_mark", "help", "Help", "Help: keys and modes", key_display="?"),
    ]

    view: var[View] = var(View, always_update=True)  # bound down to the detail; a var: no repaint of the screen

    class WorkbenchChanged(Message):
        """Something in the workbench changed; many of these waiting collapse into one."""

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, WorkbenchScreen.WorkbenchChanged)

    def __init__(self, workbench: Workbench, services, project: str, triage: Triage, stacked_below: int = 100,
                 confirm_live_above: int = 50) -> None:
        super().__init__()
        self.confirm_live_above, self.stacked_below = confirm_live_above, stacked_below  # stacked_below: columns under which expected is above actual
        self.workbench, self.services, self.project, self.triage = workbench, services, project, triage
        self.alikes, self.filter_text, self.failures_only = LookAlikes(), "", False
        self.first_paint_at: Optional[float] = None
        self.heap = HeapSettler()
        self._dirty: set[str] = set()
        self.tally = Tally().update(workbench.cases, None)  # the header's counts, kept as cases change
        self._detail_timer = self._repaint_timer = self._move_timer = None
        self._busy, self._repainted_at = 0, float("-inf")  # runs in flight at the last repaint, and when it was

    REPAINT_EVERY = 0.05  # seconds
    ROWS_AT_ONCE = 1000  # rows made in one repaint (at 50,000, all at once stalled the app 0.8 s; 1,000: ~17 ms)
    MOVE_EVERY = 1.0  # seconds: cases that belong under another group (the cluster view's first run) move this often at most
    FREEZE_AFTER = 500  # runs settled in a burst, after which what is loaded leaves the collector (its passes stalled 0.5 s)

    # --- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield HeaderBar(id="header")
        with Horizontal(id="body"):
            yield CaseTree(id="tree")
            yield CaseDetail(self.triage, self.workbench.history, self.workbench.options.prices, id="detail").data_bind(WorkbenchScreen.view)
        yield FilterBar(self.filter_values, id="filter-bar")
        yield Static(id="status-line")
        yield KeyFooter()

    @property
    def tree(self) -> CaseTree:
        return self.query_one(CaseTree)

    @property
    def detail(self) -> CaseDetail:
        return self.query_one(CaseDetail)

    @property
    def filter_bar(self) -> FilterBar:
        return self.query_one(FilterBar)

    def on_mount(self) -> None:
        self.workbench.subscribe(self._on_workbench_event)
        self.set_interval(self.TICK, self._tick)
        self.heap.settle(len(self.workbench.cases))  # the cases as loaded, before the first paint and the run
        self._rebuild_tree()
        self.call_after_refresh(self._painted)
        self.tree.focus()
        self.fit_layout()
        self._refresh_header()
        self.call_after_refresh(self.run_all_cases, "run as the app started")  # paint first, then run
        if not self.workbench.cases:  # nothing to select: the detail says what is read, and how cases come
            self.call_after_refresh(self._show_selected)
        if self.services.changes is not None:
            self.watch_files()
        if self.workbench.errors:
            self.notify(f"{len(self.workbench.errors)} file(s) failed to load: see the tree", severity="warning")
        for notice in startup_notices(self.triage, self.alikes.notes, () if self.workbench.cases else self.workbench.notes):
            self.notify(notice, severity="warning", timeout=8)

    def on_unmount(self) -> None:
        self.workbench.unsubscribe(self._on_workbench_event)
        self.heap.release()

    # --- rows and filtering -----------------------------------------------------------------------

    by_cluster = False  # `C`: the tree grouped by failure cluster

    versus = None  # `B`: the kept run compared with (its report and traces), else None: the baselines

    def _row(self, state: CaseState) -> CaseRow:
        files = self.workbench.index.get(state.ref.id)
        return case_row(state, self.triage, self.workbench.clock(), self.by_cluster, self.versus.verdicts if self.versus else None,
                        files.agent_label if files is not None else None, self.alikes.notes.get(state.ref.id))

    def action_clusters(self) -> None:
        self.by_cluster = not self.by_cluster
        self._rebuild_tree()
        self.notify("grouped by failure cluster (the first divergence's layer, kind, tool and path); l on a cluster labels its cases"
                    if self.by_cluster else "grouped by agent", timeout=3)

    TICK = 1.0  # seconds: running cases' elapsed time and the ETA move on

    def _painted(self) -> None:
        self.first_paint_at = time.perf_counter()
        self.heap.painted(len(self.workbench.cases))

    def _tick(self) -> None:
        running = self.workbench.running()
        if running:
            self.tree.update_cases([self._row(state) for state in running])
            self._refresh_header()
            self.heap.settling(len(self.workbench.cases), self.workbench.progress.completed)  # the verdicts so far
        elif self.heap.times == 1 and all(state.run is not None for state in self.workbench.cases.values()):
            self.heap.settle(len(self.workbench.cases))  # and their first verdicts

    def _visible(self, row: CaseRow) -> bool:
        if self.failures_only and not (row.state.failing or row.state.running or row.state.stale):
            return False
        return matches(self.filter_text, case_facts(row)) if self.filter_text else True

    def _rebuild_tree(self, keep_if_same: bool = False) -> None:
        self.alikes.update(self.workbench.cases)  # once a rebuild, never a row
        rows = [self._row(state) for state in self.workbench.cases.values()]
        self.tree.set_cases(rows, self._visible, self.workbench.errors, keep_if_same)
        self._show_selected()

    # --- workbench events, coalesced --------------------------------------------------------------

    def _on_workbench_event(self, event: Event) -> None:
        if isinstance(event, Notice):
            self.notify(event.message, severity=event.severity)  # type: ignore[arg-type]
            return
        ids = event.case_ids if isinstance(event, CasesUpdated) else [event.case_id if isinstance(event, CaseUpdated) else "*"]
        self._dirty.update(ids)
        self.post_message(self.WorkbenchChanged())

    def on_workbench_screen_workbench_changed(self, message: WorkbenchChanged) -> None:
        """At most one repaint every REPAINT_EVERY seconds, however fast the verdicts come."""
        wait = self._repainted_at + self.REPAINT_EVERY - time.monotonic()
        if wait <= 0:
            self._repaint()
        elif self._repaint_timer is None:
            self._repaint_timer = self.set_timer(wait, self._repaint)

    def _moved(self) -> None:
        self._move_timer = None
        if self.is_attached:
            self._rebuild_tree()

    def _repaint(self) -> None:
        self._repaint_timer = None
        if not self.is_attached:
            return
        self._repainted_at = time.monotonic()
        dirty, self._dirty = self._dirty, set()
        if "*" not in dirty and len(dirty) > self.ROWS_AT_ONCE:  # a bulk change (all queued): the rows on screen first, the rest later
            self._dirty, dirty = dirty, self.tree.rows_first(dirty, self.ROWS_AT_ONCE)
            self._dirty -= dirty
            self._repaint_timer = self.set_timer(self.REPAINT_EVERY, self._repaint)
        self.tally.update(self.workbench.cases, None if "*" in dirty else dirty)
        rows = [] if "*" in dirty else [self._row(self.workbench.cases[i]) for i in dirty if i in self.workbench.cases]
        if "*" in dirty:
            self._rebuild_tree()
        else:
            # under another agent or group now, or newly matching the filter: rebuilt, and relabelled where they are until then
            moving = self._move_timer is None and (self.tree.moved(rows) or self.tree.appearing(rows, self._visible))
            self.tree.update_cases(rows)
            if moving:
                self._move_timer = self.set_timer(self.MOVE_EVERY, self._moved)  # at most once a MOVE_EVERY
            if self.tree.current_case_id in dirty:
                self._show_selected(keep_position=True)
        self._refresh_header()
        running = self.tally.running
        if running == 0 and self._busy >= self.FREEZE_AFTER:
            gc.freeze()
        self._busy = max(self._busy, running) if running else 0

    def _refresh_header(self) -> None:
        wb = self.workbench
        self.query_one(HeaderBar).show(
            self.project, self.mode_label(), self.tally, wb.paused, self.filter_text, self.failures_only, len(wb.errors),
            wb.progress, wb.clock(),
        )
        self._refresh_status_line()

    def _refresh_status_line(self) -> None:
        """Below the tree: why the filter being typed cannot match, else the first load errors."""
        errors = self.workbench.errors
        status_line = self.query_one("#status-line", Static)
        if self.filter_problem:
            steady.update(status_line, Text(self.filter_problem, style="bold red"))
        else:
            steady.update(status_line, Text("  ".join(str(e) for e in errors[:2]), style="red") if errors else "")
        status_line.display = bool(errors or self.filter_problem)

    # --- the detail -------------------------------------------------------------------------------

    @property
    def current(self) -> Optional[CaseState]:
        case_id = self.tree.current_case_id
        return self.workbench.cases.get(case_id) if case_id else None

    def _divergences(self):
        diff = self.detail.shown_diff(self.current)
        return diff.divergences if diff else ()

    def _show_selected(self, keep_position: bool = False) -> None:
        view = self.view
        divergences = self._divergences()
        if keep_position and view.divergence < 0 and divergences and not view.turn_focused and view.layer is None:
            keep_position = False  # the case shown had no divergence (not run yet): its run's are shown as on arrival
        if not keep_position:
            view = View(divergences[0].turn, 0) if divergences else View()
        self.view = view
        if not keep_position:  # the first divergence in sight, however short the terminal
            layer = divergences[0].layer if divergences else "request"
            self.call_after_refresh(self.detail.scroll_to_layer, layer, False)

    def watch_view(self, view: View) -> None:
        """The detail draws the view (bound to it); it is told which case first."""
        if self.is_mounted:
            detail = self.detail
            detail.state = self.current
            detail.summary = self._group_summary() if detail.state is None else None
            if detail.state is None and detail.summary is None and not self.tree.visible_ids and self.workbench.cases:
                detail.summary = Text("No case matches the filter.", style="dim") + Text("\nesc clears it · / changes it", style="dim")
            elif detail.state is None and detail.summary is None and not self.workbench.cases and not self.workbench.errors:
                detail.summary = no_cases_hint()

    def _group_summary(self) -> Optional[Text]:
        if self.tree.current_load_error() is not None:  # where, and why (the row is cut at the tree's width)
            return load_error_summary(self.tree.current_load_error())
        node = self.tree.cursor_node
        if node is None or node.data or not node.children:
            return None
        ids = self.tree.cases_under(node)
        states = [self.workbench.cases[i] for i in ids if i in self.workbench.cases]
        return group_summary(str(node.label), states, folded=not node.is_expanded) if states else None

    def on_case_detail_turn_chosen(self, message: CaseDetail.TurnChosen) -> None:
        self.view = self.view_at_turn(message.turn)

    # --- running and watching ---------------------------------------------------------------------

    def run_all_cases(self, reason: str) -> None:
        self.workbench.run(list(self.workbench.cases), reason)

    @work(exclusive=True, group="watch", name="watch files")
    async def watch_files(self) -> None:
        async for batch in self.services.changes():
            for selection in await self.workbench.on_changes(self.triage_read_again(batch)):
                if selection.action == "run":
                    count = len(selection.case_ids)
                    self.notify(f"{selection.reason} ({count} case{'s' if count != 1 else ''})", timeout=2)

    def action_toggle_watch(self) -> None:
        self.toggle_watch()

    @work(exclusive=True, group="watch-toggle", name="pause or resume watching")
    async def toggle_watch(self) -> None:
        held = self.workbench.held_changes
        await self.workbench.set_paused(not self.workbench.paused)
        if self.workbench.paused:
            self.notify("watching paused: changes are kept and shown stale")
        else:
            self.notify("watching resumed" + (f": applying {held} change(s) made meanwhile" if held else ""))
        self._refresh_header()

    def action_whole_case(self) -> None:
        """Esc: the accept scope back to the whole case; when it already is, the filter cleared."""
        if self.view.layer or self.view.turn_focused or not self.clear_filter():
            self.view = self.view._replace(layer=None, turn_focused=False)

    def action_suite(self) -> None:
        wb = self.workbench
        self.app.push_screen(SuiteScreen(list(wb.cases.values()), wb.history, wb.options.prices))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.help_rows()))

    def help_rows(self) -> list[tuple[str, str]]:
        """The keys, from the bindings: the tree's, this screen's, then the app's."""
        bindings = (*CaseTree.BINDINGS, *[b for b in self.BINDINGS if b.action not in ("tree_down", "tree_up")], *self.app.BINDINGS)
        rows = [(b.key_display or b.key, b.tooltip) for b in bindings if isinstance(b, Binding) and b.tooltip]
        return [*rows, ("ctrl+p", "Command palette: every action")]
