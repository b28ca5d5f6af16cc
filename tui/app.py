"""The agentdiff TUI: watch mode, the case tree, layers side by side, triage, accept and undo.

`create_app` is the one factory: the CLI calls it with the real worker pool and file watcher, tests
with fakes (a scripted change source, a fake editor, a frozen clock).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult, SuspendNotSupported, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static

from agentdiff.core.baselines.accept import AcceptPlan
from agentdiff.core.project.discovery import ConformanceCaseRef, EvalCaseRef
from agentdiff.core.run.options import RunOptions
from agentdiff.core.workbench.history import History
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.triage import Triage
from agentdiff.core.workbench.changes import ChangeSource, watchfiles_source
from agentdiff.core.workbench.workbench import CasesReloaded, CaseState, CaseUpdated, Event, Notice, Workbench

from .case_filter import CaseFacts, matches, parse_error
from .glyphs import GLYPH, NOT_RUN, RUNNING, STALE
from .screens.accept_modal import AcceptModal
from .screens.help_screen import HelpScreen
from .screens.prompt_modal import PromptModal
from .widgets.case_detail import CaseDetail
from .widgets.case_tree import CaseRow, CaseTree

LAYERS = ("request", "tool_calls", "response", "session")
Editor = Callable[[Path, Optional[int]], None]


def default_editor(path: Path, line: Optional[int]) -> None:
    """`$VISUAL` / `$EDITOR` (else vi) at `line`, in the spelling each common editor understands."""
    args = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
    name = os.path.basename(args[0])
    if line and name in ("code", "codium"):
        args += ["--goto", f"{path}:{line}"]
    elif line and name in ("subl", "zed"):
        args.append(f"{path}:{line}")
    else:
        if line and name in ("vi", "vim", "nvim", "nano", "emacs", "micro", "kak", "hx", "helix"):
            args.append(f"+{line}")
        args.append(str(path))
    subprocess.call(args)


@dataclass
class Services:
    """Everything the app does to the outside world, injectable."""

    pool: object
    changes: Optional[ChangeSource]
    editor: Editor = default_editor
    clock: Callable[[], float] = time.time


class AgentdiffApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "agentdiff"

    BINDINGS = [
        Binding("n", "next_failure", "Next failure"),
        Binding("N", "previous_failure", "Prev failure", show=False),
        Binding("]", "next_divergence", "Next divergence"),
        Binding("[", "previous_divergence", "Prev divergence", show=False),
        Binding("t", "next_turn", "Next turn", show=False),
        Binding("T", "previous_turn", "Prev turn", show=False),
        Binding("1", "layer('request')", "Request", show=False),
        Binding("2", "layer('tool_calls')", "Tool calls", show=False),
        Binding("3", "layer('response')", "Response", show=False),
        Binding("4", "layer('session')", "Session", show=False),
        Binding("r", "rerun", "Re-run"),
        Binding("R", "rerun_all", "Re-run all", show=False),
        Binding("m", "toggle_mode", "Replay/live"),
        Binding("a", "accept", "Accept"),
        Binding("A", "accept_all", "Accept all", show=False),
        Binding("z", "undo", "Undo"),
        Binding("ctrl+r", "rerecord", "Re-record live", show=False),
        Binding("e", "edit", "Edit"),
        Binding("slash", "filter", "Filter"),
        Binding("f", "failures_only", "Failures"),
        Binding("l", "label", "Label", show=False),
        Binding("c", "comment", "Comment", show=False),
        Binding("w", "toggle_watch", "Pause watch", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, workbench: Workbench, services: Services, project: str, triage: Triage) -> None:
        super().__init__()
        self.workbench = workbench
        self.services = services
        self.project = project
        self.triage = triage
        self.filter_text = ""
        self.failures_only = False
        self.turn = 0
        self.divergence_index = -1
        self.focus_layer: Optional[str] = None
        self.focus_turn = False
        self._dirty: set[str] = set()
        self._detail_timer = None
        self._flush_pending = False
        self.workbench.subscribe(self._on_workbench_event)

    # --- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        self._header, self._status_line = Static(id="header"), Static(id="status-line")
        self._tree, self._detail = CaseTree(id="tree"), CaseDetail(id="detail")
        yield self._header
        with Horizontal(id="body"):
            yield self._tree
            yield self._detail
        yield self._status_line
        yield Footer()

    def on_unmount(self) -> None:
        self.workbench.unsubscribe(self._on_workbench_event)
        self.workbench.cancel()
        if self.workbench.history is not None:
            self.workbench.history.save()

    def on_mount(self) -> None:
        self._first_paint()

    def _first_paint(self) -> None:
        self.first_paint_at: Optional[float] = None
        self._rebuild_tree()
        self.call_after_refresh(lambda: setattr(self, "first_paint_at", time.perf_counter()))
        self.query_one(CaseTree).focus()
        self._refresh_header()
        self.call_after_refresh(self.run_all_cases, "first run")  # paint first, then run
        if self.services.changes is not None:
            self.watch_files()
        if self.workbench.errors:
            self.notify(f"{len(self.workbench.errors)} file(s) failed to load: see the tree", severity="warning")

    @property
    def tree(self) -> CaseTree:
        return self._tree

    @property
    def detail(self) -> CaseDetail:
        return self._detail

    # --- rows and filtering -----------------------------------------------------------------------

    def _row(self, state: CaseState) -> CaseRow:
        ref = state.ref
        agent = state.run.result.agent if state.run and state.run.result.agent else (
            ref.case.spec.agent if isinstance(ref, ConformanceCaseRef) else _guess_agent(ref)
        )
        group = ref.eval_set.source.path.name if isinstance(ref, EvalCaseRef) else ref.case.category
        return CaseRow(state, agent or "", group, self.triage.label_of(ref.id))

    def _facts(self, row: CaseRow) -> CaseFacts:
        state = row.state
        status = "running" if state.running else "stale" if state.stale else (state.status.value if state.status else "not run")
        layers = tuple(s.layer for s in state.run.diff.layers if s.status == "changed") if state.run and state.run.diff else ()
        mode = state.run.result.mode if state.run else ""
        return CaseFacts(state.ref.id, status, row.agent, row.label or "", mode, layers)

    def _visible(self, row: CaseRow) -> bool:
        if self.failures_only and not (row.state.failing or row.state.running or row.state.stale):
            return False
        return matches(self.filter_text, self._facts(row)) if self.filter_text else True

    def _rebuild_tree(self) -> None:
        rows = [self._row(state) for state in self.workbench.cases.values()]
        self.tree.set_cases(rows, self._visible, self.workbench.errors)
        self._show_selected()

    # --- workbench events (coalesced: a burst of updates repaints a few times a second) -------------

    def _on_workbench_event(self, event: Event) -> None:
        if isinstance(event, CaseUpdated):
            self._dirty.add(event.case_id)
        elif isinstance(event, CasesReloaded):
            self._dirty.add("*")
        elif isinstance(event, Notice):
            self.notify(event.message, severity=event.severity)  # type: ignore[arg-type]
            return
        if not self._flush_pending:
            self._flush_pending = True
            self.set_timer(0.02, self._flush)

    def _flush(self) -> None:
        self._flush_pending = False
        if not self.is_running:
            return
        dirty, self._dirty = self._dirty, set()
        if "*" in dirty:
            self._rebuild_tree()
        else:
            states = [self.workbench.cases[case_id] for case_id in dirty if case_id in self.workbench.cases]
            self.tree.update_cases([self._row(state) for state in states])
            if self.tree.current_case_id in dirty:
                self._show_selected(keep_position=True)
        self._refresh_header()

    def _refresh_header(self) -> None:
        counts = {status: 0 for status in CaseStatus}
        running = stale = not_run = 0
        for state in self.workbench.cases.values():
            if state.running:
                running += 1
            elif state.stale:
                stale += 1
            elif state.status is None:
                not_run += 1
            else:
                counts[state.status] += 1
        text = Text()
        text.append(f" agentdiff · {self.project} · ", style="bold")
        text.append(f"mode {self.workbench.options.mode or 'replay/live'}")
        text.append("  ")
        for status in (CaseStatus.PASSED, CaseStatus.FAILED, CaseStatus.ERROR, CaseStatus.FLAKY, CaseStatus.NOT_EVALUATED):
            text.append(f" {GLYPH[status]} {counts[status]}")
        text.append(f"  {STALE} {stale}  {RUNNING} {running}")
        if not_run:
            text.append(f"  {NOT_RUN} {not_run}")
        if self.workbench.paused:
            text.append("  watch paused", style="yellow")
        if self.filter_text or self.failures_only:
            text.append(f"  filter: {self.filter_text or ''}{' failures only' if self.failures_only else ''}", style="cyan")
        if self.workbench.errors:
            text.append(f"  {len(self.workbench.errors)} load error(s)", style="red")
        self._header.update(text)
        status = self._status_line
        status.update(Text("  ".join(str(e) for e in self.workbench.errors[:2]), style="red") if self.workbench.errors else "")

    # --- the detail -------------------------------------------------------------------------------

    @property
    def current(self) -> Optional[CaseState]:
        case_id = self.tree.current_case_id
        return self.workbench.cases.get(case_id) if case_id else None

    def _divergences(self):
        state = self.current
        return state.run.diff.divergences if state and state.run and state.run.diff else ()

    def _show_selected(self, keep_position: bool = False) -> None:
        if not self._detail.is_attached:
            return  # the app is closing
        state = self.current
        divergences = self._divergences()
        if not keep_position:
            self.turn, self.divergence_index, self.focus_layer, self.focus_turn = 0, -1, None, False
            if divergences:
                self.divergence_index = 0
                self.turn = divergences[0].turn
        if self.divergence_index >= len(divergences):
            self.divergence_index = len(divergences) - 1
        current = divergences[self.divergence_index] if 0 <= self.divergence_index < len(divergences) else None
        extra = Text()
        if state is not None:
            entries = self.workbench.history.entries(state.ref.id) if self.workbench.history else []
            extra.append_text(CaseDetail.history_line([e.get("score") for e in entries], [e.get("status", "") for e in entries]))
            label, note = self.triage.label_of(state.ref.id), self.triage.note_of(state.ref.id)
            if label or note:
                extra.append(f"\nlabel: {label or '-'}" + (f" · note: {note}" if note else ""), style="magenta")
            if current is not None:
                extra.append(f"\ndivergence {self.divergence_index + 1}/{len(divergences)}: {current.summary}", style="bold")
                if current.source:
                    extra.append(f"  (e: {current.source})", style="dim")
            extra.append(f"\naccept scope: {self._scope_text()}", style="dim")
        self.detail.show(state, self.turn, current, extra)

    def _scope_text(self) -> str:
        if self.focus_layer:
            return f"the {self.focus_layer} layer of turn {self.turn + 1}"
        if self.focus_turn:
            return f"turn {self.turn + 1}"
        return "the whole case"

    def on_case_tree_case_selected(self, message: CaseTree.CaseSelected) -> None:
        # while keys repeat, the tree moves at once and the detail follows when they stop
        if self._detail_timer is not None:
            self._detail_timer.stop()
        self._detail_timer = self.set_timer(0.03, self._show_selected)

    def on_case_detail_turn_chosen(self, message: CaseDetail.TurnChosen) -> None:
        self.turn, self.focus_turn = message.turn, True
        self._show_selected(keep_position=True)

    # --- running ----------------------------------------------------------------------------------

    def run_all_cases(self, reason: str) -> None:
        self.workbench.run(list(self.workbench.cases), reason)

    @work(exclusive=True, group="watch", name="watch files")
    async def watch_files(self) -> None:
        assert self.services.changes is not None
        async for batch in self.services.changes():
            selections = self.workbench.on_changes(batch)
            for selection in selections:
                if selection.action == "run":
                    self.notify(f"{selection.reason} ({len(selection.case_ids)} case{'s' if len(selection.case_ids) != 1 else ''})", timeout=2)

    # --- actions: moving --------------------------------------------------------------------------

    def _move_to_failure(self, step: int) -> None:
        ids = self.tree.visible_ids
        if not ids:
            return
        current = self.tree.current_case_id
        start = ids.index(current) if current in ids else -1
        for offset in range(1, len(ids) + 1):
            case_id = ids[(start + step * offset) % len(ids)]
            state = self.workbench.cases.get(case_id)
            if state is not None and state.failing:
                self.tree.select_case(case_id)
                return
        self.notify("no failing case")

    def action_next_failure(self) -> None:
        self._move_to_failure(1)

    def action_previous_failure(self) -> None:
        self._move_to_failure(-1)

    def _move_divergence(self, step: int) -> None:
        divergences = self._divergences()
        if not divergences:
            self.notify("no divergences in this case")
            return
        self.divergence_index = (self.divergence_index + step) % len(divergences)
        current = divergences[self.divergence_index]
        self.turn = current.turn
        self._show_selected(keep_position=True)
        self.detail.scroll_to_layer(current.layer)

    def action_next_divergence(self) -> None:
        self._move_divergence(1)

    def action_previous_divergence(self) -> None:
        self._move_divergence(-1)

    def _move_turn(self, step: int) -> None:
        state = self.current
        turns = len(state.run.diff.turns) if state and state.run and state.run.diff else 0
        if not turns:
            return
        self.turn = (self.turn + step) % turns
        self.focus_turn = True
        self._show_selected(keep_position=True)

    def action_next_turn(self) -> None:
        self._move_turn(1)

    def action_previous_turn(self) -> None:
        self._move_turn(-1)

    def action_layer(self, layer: str) -> None:
        self.focus_layer = layer
        self._show_selected(keep_position=True)
        self.detail.scroll_to_layer(layer)

    # --- actions: running -------------------------------------------------------------------------

    def action_rerun(self) -> None:
        state = self.current
        if state is not None:
            self.workbench.run([state.ref.id], "re-run: r pressed")

    def action_rerun_all(self) -> None:
        self.workbench.run(list(self.tree.visible_ids), "re-run: R pressed")

    def action_toggle_mode(self) -> None:
        mode = self.workbench.toggle_mode()
        self.notify(f"mode: {mode}; re-running the conformance cases")
        ids = [case_id for case_id, s in self.workbench.cases.items() if isinstance(s.ref, ConformanceCaseRef)]
        self.workbench.run(ids, f"re-run: switched to {mode}")
        self._refresh_header()

    def action_toggle_watch(self) -> None:
        self.workbench.paused = not self.workbench.paused
        self.notify("watching paused" if self.workbench.paused else "watching resumed")
        self._refresh_header()

    # --- actions: accept and undo -----------------------------------------------------------------

    def _plan(self, state: CaseState) -> AcceptPlan:
        if self.focus_layer in ("tool_calls", "response"):
            return self.workbench.plan_accept(state.ref.id, "layer", self.turn, self.focus_layer)
        if self.focus_turn or self.focus_layer:
            return self.workbench.plan_accept(state.ref.id, "turn", self.turn)
        return self.workbench.plan_accept(state.ref.id, "case")

    def action_accept(self) -> None:
        state = self.current
        if state is None:
            return
        try:
            plan = self._plan(state)
        except Exception as exc:
            self.notify(f"cannot accept: {exc}", severity="error")
            return

        def done(confirmed: Optional[bool]) -> None:
            if confirmed:
                self._write(plan)

        self.push_screen(AcceptModal(plan.description, plan.preview), done)

    def action_accept_all(self) -> None:
        plans, problems = [], []
        for case_id in self.tree.visible_ids:
            state = self.workbench.cases[case_id]
            if not state.failing:
                continue
            try:
                plans.append(self.workbench.plan_accept(case_id, "case"))
            except Exception as exc:
                problems.append(f"{case_id}: {exc}")
        if not plans:
            self.notify("no failing case to accept" + (f" ({problems[0]})" if problems else ""), severity="warning")
            return
        preview = "".join(plan.preview for plan in plans)

        def done(confirmed: Optional[bool]) -> None:
            if not confirmed:
                return
            for plan in plans:  # planned again one by one: cases sharing a file see the previous write
                try:
                    fresh = self.workbench.plan_accept(plan.case_id, "case")
                except Exception as exc:
                    self.notify(f"not written: {plan.case_id}: {exc}", severity="error")
                    break
                if not self._write(fresh):
                    break

        self.push_screen(AcceptModal(f"accept {len(plans)} failing case(s)", preview), done)

    def _write(self, plan: AcceptPlan) -> bool:
        try:
            self.workbench.accept(plan)
        except Exception as exc:
            self.notify(f"not written: {exc}", severity="error")
            return False
        self.notify(f"written: {plan.description} (z undoes it)")
        return True

    def action_rerecord(self) -> None:
        state = self.current
        if state is None:
            return
        question = (
            f"re-record {state.ref.id} live: run the agent with its own model and write what it does as the baseline"
        )

        def done(confirmed: Optional[bool]) -> None:
            if confirmed:
                self.rerecord_case(state.ref.id)

        self.push_screen(AcceptModal(question, "(the file change is made by the live run; z undoes it)\n"), done)

    @work(group="record", name="re-record a case")
    async def rerecord_case(self, case_id: str) -> None:
        self.notify(f"re-recording {case_id} live…")
        outcome = await self.workbench.record(case_id)
        if outcome.error:
            self.notify(f"not recorded: {outcome.error}", severity="error")
        else:
            self.notify(f"recorded: {', '.join(outcome.written)} (z undoes it)")

    def action_undo(self) -> None:
        try:
            entry = self.workbench.undo()
        except Exception as exc:
            self.notify(f"cannot undo: {exc}", severity="error")
            return
        self.notify(f"undone: {entry.reason}" if entry else "nothing to undo")

    # --- actions: editor, filter, triage, help ----------------------------------------------------

    def action_edit(self) -> None:
        state = self.current
        if state is None:
            return
        divergences = self._divergences()
        current = divergences[self.divergence_index] if 0 <= self.divergence_index < len(divergences) else None
        if current is not None and current.source is not None:
            path, line = self.workbench.root / current.source.file, current.source.line
        elif isinstance(state.ref, EvalCaseRef):
            path, line = state.ref.eval_set.source.path, None
        else:
            path, line = state.ref.case.dir / "spec.yaml", None
        try:
            with self.suspend():
                self.services.editor(path, line)
        except SuspendNotSupported:  # no terminal to hand over (headless): the editor still gets the file
            self.services.editor(path, line)
        self.refresh()

    def action_filter(self) -> None:
        def done(value: Optional[str]) -> None:
            if value is None:
                return
            problem = parse_error(value)
            if problem:
                self.notify(problem, severity="warning")
            self.filter_text = value.strip()
            self._rebuild_tree()
            self._refresh_header()

        self.push_screen(
            PromptModal("Filter cases", self.filter_text, "refund status:failed !agent:x", "words, status:, agent:, label:, mode:, layer:; ! inverts; empty clears"),
            done,
        )

    def action_failures_only(self) -> None:
        self.failures_only = not self.failures_only
        self._rebuild_tree()
        self._refresh_header()

    def _ask_triage(self, field: str, question: str, current: Optional[str], placeholder: str, hint: str = "") -> None:
        state = self.current
        if state is None:
            return

        def done(value: Optional[str]) -> None:
            if value is None:
                return
            self.triage.set(state.ref.id, **{field: value.strip()})
            self.tree.update_case(self._row(state))
            self._show_selected(keep_position=True)

        self.push_screen(PromptModal(question, current or "", placeholder, hint), done)

    def action_label(self) -> None:
        case_id = self.tree.current_case_id or ""
        known = ", ".join(self.triage.labels)
        self._ask_triage("label", "Label this failure", self.triage.label_of(case_id), "a label", f"known: {known}; empty removes")

    def action_comment(self) -> None:
        case_id = self.tree.current_case_id or ""
        self._ask_triage("note", "Note on this case", self.triage.note_of(case_id), "what you found")

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for binding in self.BINDINGS:
            if not isinstance(binding, Binding) or binding.action in ("quit",):
                continue
            description = _PALETTE.get(binding.action, binding.description)
            yield SystemCommand(description, f"{description} ({binding.key})", _runner(self, binding.action))


_PALETTE = {
    "next_failure": "Next failing case",
    "previous_failure": "Previous failing case",
    "next_divergence": "Next divergence",
    "previous_divergence": "Previous divergence",
    "next_turn": "Next turn",
    "previous_turn": "Previous turn",
    "layer('request')": "Jump to the request layer",
    "layer('tool_calls')": "Jump to the tool_calls layer",
    "layer('response')": "Jump to the response layer",
    "layer('session')": "Jump to the session layer",
    "rerun": "Re-run the selected case",
    "rerun_all": "Re-run all visible cases",
    "toggle_mode": "Switch replay / live",
    "accept": "Accept the actual run as baseline",
    "accept_all": "Accept all visible failures",
    "undo": "Undo the last accept",
    "rerecord": "Re-record the case live (writes its baseline)",
    "edit": "Open the expected value in the editor",
    "filter": "Filter cases",
    "failures_only": "Show failures only",
    "label": "Label the failure",
    "comment": "Comment on the case",
    "toggle_watch": "Pause / resume watching",
    "help": "Help: keys and modes",
}


def _runner(app: App, action: str) -> Callable[[], object]:
    return lambda: app.run_action(action)


def _guess_agent(ref: EvalCaseRef) -> str:
    folder = ref.eval_set.source.path.parent
    return folder.name


def create_app(
    root: Path,
    paths: Sequence[Path],
    *,
    pool: Optional[object] = None,
    changes: Optional[ChangeSource] = None,
    watch: bool = True,
    editor: Editor = default_editor,
    clock: Callable[[], float] = time.time,
    options: Optional[RunOptions] = None,
    project: Optional[str] = None,
) -> AgentdiffApp:
    """The app, wired: real pool and watcher by default; tests pass fakes."""
    if pool is None:
        from agentdiff.core.worker.pool import WorkerPool

        pool = WorkerPool()
    if changes is None and watch:
        changes = watchfiles_source([*paths, *(options.agents_dirs if options else ())])
    state_dir = root / ".agentdiff"
    workbench = Workbench(root, list(paths), pool, options or RunOptions(), clock, History(state_dir / "history.json"))
    return AgentdiffApp(workbench, Services(pool, changes, editor, clock), project or root.name, Triage.load(root))
