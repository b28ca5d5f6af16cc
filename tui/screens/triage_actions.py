"""The workbench screen's triage keys: open the expected value in the editor (e), filter (/),
failures only (f), label (l) and comment (c)."""

from __future__ import annotations

import time
from pathlib import Path
from collections import Counter
from typing import Optional

from agentdiff.core.baselines.journal import BaselineWriteError
from agentdiff.core.project.family import family_of
from agentdiff.core.workbench.triage import TRIAGE_FILE, TriageUnreadable
from textual.app import SuspendNotSupported

from ..case_filter import LAYERS, STATUSES, parse_error
from ..widgets.filter_bar import FilterBar
from ..editor import under_web_driver
from .prompt_modal import PromptModal
from .text_modal import TextModal


class TriageActions:
    """Mixed into WorkbenchScreen: uses its `workbench`, `services`, `triage`, `view`, `current`,
    `tree` and `filter_bar`."""

    _filter_timer = None
    _before_filter = None  # the case under the cursor when `/` was pressed
    filter_problem = None  # why the filter being typed cannot match, shown below it

    def triage_read_again(self, batch) -> list:
        """The triage file changed elsewhere (another terminal's undo, a hand edit, a `git pull`):
        read again, its labels shown; the batch's other paths, for the workbench."""
        if any(Path(path).name == TRIAGE_FILE for path in batch) and self.triage.reload():
            for state in self.workbench.cases.values():
                self.tree.update_case(self._row(state))
            self._show_selected(keep_position=True)
        return [path for path in batch if Path(path).name != TRIAGE_FILE]

    def action_edit(self) -> None:
        state = self.current
        error = self.tree.current_load_error() if state is None else None
        if error is not None:  # a file that failed to load: open it where it broke
            self._open_in_editor(self.workbench.root / error.file, error.line or 1, error.column or 1)
            return
        if state is None:
            return
        divergences = self._divergences()
        index = self.view.divergence
        current = divergences[index] if 0 <= index < len(divergences) else None
        failed_at = next((out for out in state.run.outputs if out.error and out.error_file), None) if state.run else None
        if failed_at is not None and state.run.result.error_location:  # the agent's failure, in the project's code
            path, line, col = Path(failed_at.error_file), failed_at.error_line, 1
        elif current is not None and current.source is not None:
            path, line, col = self.workbench.root / current.source.file, current.source.line, current.source.column
        else:  # no divergence shown: the case's own id in its file
            path, line, col = family_of(state.ref).editor_place(state.ref)
        self._open_in_editor(path, line, col)

    def _open_in_editor(self, path: Path, line: Optional[int], col: Optional[int]) -> None:
        editor = self.services.editor
        if under_web_driver() and getattr(editor, "runs_a_program", False):
            # in a browser (agentdiff serve) there is no terminal to lend an editor: say where instead
            self.notify(f"open {path}:{line or 1}:{col or 1} in your editor (the browser has no terminal to lend one)", timeout=10)
            return
        try:
            with self.app.suspend():
                editor(path, line, col)
        except SuspendNotSupported:  # no terminal to hand over (headless): the editor still gets the file
            editor(path, line, col)
        self.app.refresh()

    def on_key(self, event) -> None:
        """Keys that came in one burst with `/` (a paste, a script's send-keys) were queued for the
        widget focused before the filter opened: they are the filter's text, never the screen's keys."""
        bar = self.filter_bar
        field = bar.input
        if event.key == "slash" and not bar.display and self.focused is not field:
            self.action_filter()  # opened now, before the keys queued behind it reach the screen
            event.stop()
            event.prevent_default()
            return
        # a key the input has not taken (it takes characters and edits, and stops them) was queued
        # for another widget: typed now, in order (Enter reaches the input's binding as it is focused)
        if not (bar.display and self.focused is field):
            return
        edit = field.EDITS.get(event.key)
        if edit is not None:
            getattr(field, f"action_{edit}")()
        elif event.is_printable and event.character:
            field.insert_text_at_cursor(event.character)
        else:
            return
        event.stop()
        event.prevent_default()

    def action_filter(self) -> None:
        self._before_filter = self.tree.current_case_id
        self.filter_bar.open(self.filter_text)
        self._apply_filter(self.filter_text)

    FILTER_SETTLES = 0.08  # seconds of no typing before a large tree is filtered again

    def on_filter_bar_changed(self, message: FilterBar.Changed) -> None:
        if self._filter_timer is not None:
            self._filter_timer.stop()
        if len(self.workbench.cases) <= 500:
            self._apply_filter(message.value)
        else:
            self._filter_timer = self.set_timer(self.FILTER_SETTLES, lambda: self._apply_filter(message.value))

    def _apply_filter(self, value: str) -> None:
        problem = parse_error(value)
        self.filter_text = value.strip()
        self._rebuild_tree(keep_if_same=True)
        self._refresh_header()
        self.filter_bar.show_count(len(self.tree.visible_ids), len(self.workbench.cases), problem)
        self.filter_problem = problem
        self._refresh_status_line()
        if self._before_filter in self.tree.visible_ids and self.tree.current_case_id != self._before_filter:
            self.call_after_refresh(self.tree.select_case, self._before_filter)  # where the user was, when it shows

    def on_filter_bar_closed(self, message: FilterBar.Closed) -> None:
        if self._filter_timer is not None:
            self._filter_timer.stop()
        problem = parse_error(message.value)
        self._apply_filter(message.value)
        self.filter_problem = None
        self._refresh_status_line()
        visible = self.tree.visible_ids
        if self.filter_text and visible and self._before_filter not in visible:  # on the first match, as fzf leaves it
            self.call_after_refresh(self.tree.select_case, visible[0])
        if not self.filter_bar.display:  # not opened again by a `/` typed right after: it keeps the keys
            self.set_focus(self.tree)  # now, not after the keys queued behind the Enter or Esc
        if problem and not message.cleared:
            self.notify(problem, severity="warning")

    def filter_values(self, key: str) -> list[str]:
        """What the filter line completes after `key:`."""
        if key == "status":
            return list(STATUSES)
        if key == "layer":
            return list(LAYERS)
        if key == "mode":
            return ["replay", "live"]
        if key == "label":  # the labels cases carry, the most used first: a dictionary entry no case uses matches nothing
            used = Counter(label for label in map(self.triage.label_of, self.workbench.cases) if label)
            return [label for label, _ in used.most_common()]
        if key == "agent":
            return sorted({self._row(state).agent for state in self.workbench.cases.values()})
        return []

    def clear_filter(self) -> bool:
        """Esc in the tree: drop the filter and failures-only, if any."""
        if not (self.filter_text or self.failures_only):
            return False
        self.filter_text, self.failures_only = "", False
        self._rebuild_tree()
        self._refresh_header()
        self.notify("filter cleared", timeout=2)
        return True

    def action_failures_only(self) -> None:
        self.failures_only = not self.failures_only
        self._rebuild_tree()
        self._refresh_header()

    def _ask_triage(self, field: str, question: str, current: Optional[str], placeholder: str, hint: str = "", suggestions=()) -> None:
        state = self.current
        if state is None:
            return

        def done(value: Optional[str]) -> None:
            if value is None:
                return
            try:
                if field == "label":  # pinned to the divergence shown, when there is one
                    self.triage.set_many([state.ref.id], label=value.strip(), element=self._element())
                else:
                    self.triage.set(state.ref.id, **{field: value.strip()})
            except (TriageUnreadable, BaselineWriteError) as exc:
                self.notify(f"not saved: {exc}", severity="error")
                return
            self.tree.update_case(self._row(state))
            self._show_selected(keep_position=True)

        self.app.push_screen(PromptModal(question, current or "", placeholder, hint, suggestions), done)

    def action_label(self) -> None:
        node = self.tree.cursor_node
        if self.tree.current_case_id is None and node is not None and node.children:
            self._label_group(str(node.label), self.tree.cases_under(node))
            return
        case_id = self.tree.current_case_id or ""
        known = ", ".join(self.triage.labels)
        self._ask_triage("label", "Label this failure", self.triage.label_of(case_id), "a label",
                         f"known: {known}; tab completes; empty removes", suggestions=self.triage.labels)

    def _element(self) -> Optional[str]:
        """The trace element a label is pinned to: the divergence shown (`turn 2 · tool_calls · call 3`)."""
        divergences = self._divergences()
        index = self.view.divergence
        if not 0 <= index < len(divergences):
            return None
        found = divergences[index]
        where = f"turn {found.turn + 1} · {found.layer}"
        if found.layer == "tool_calls" and found.index is not None:
            where += f" · call {found.index + 1}"
        return where

    def _label_group(self, title: str, case_ids: list[str]) -> None:
        """A label for every case of a group or failure cluster: one write, one undo step."""
        def done(value: Optional[str]) -> None:
            if value is None:
                return
            try:
                self.triage.set_many(case_ids, label=value.strip())
            except (TriageUnreadable, BaselineWriteError) as exc:
                self.notify(f"not saved: {exc}", severity="error")
                return
            self.tree.update_cases([self._row(self.workbench.cases[i]) for i in case_ids if i in self.workbench.cases])
            self.notify(f"labelled {len(case_ids)} case(s) {value.strip()!r}" if value.strip() else f"label removed from {len(case_ids)} case(s)")

        self.app.push_screen(PromptModal(f"Label the {len(case_ids)} case(s) of {title}", "", "a label",
                                         "tab completes; empty removes", self.triage.labels), done)

    def action_since_pass(self) -> None:
        """W: the files the case's agent read when it last passed that differ now, each as a diff."""
        state = self.current
        history = self.workbench.history
        if state is None or history is None:
            return
        entry = history.last_passed(state.ref.id)
        if entry is None:
            self.notify("no passing run of this case is kept (its history holds what its agent read when it passes)")
            return
        changes = self.workbench.snapshots.changed_since(entry["read"])
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.get("time", 0)))
        if not changes:
            self.notify(f"none of the {len(entry['read'])} files its agent read changed since it last passed ({when})")
            return
        body = "\n".join(change.diff for change in changes)
        title = f"{len(changes)} of the {len(entry['read'])} files its agent read changed since it last passed ({when})"
        self.app.push_screen(TextModal(title, body))

    def action_comment(self) -> None:
        case_id = self.tree.current_case_id or ""
        self._ask_triage("note", "Note on this case", self.triage.note_of(case_id), "what you found")
