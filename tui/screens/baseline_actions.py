"""The workbench screen's baseline keys: accept (a / A) with a preview, re-record live (ctrl+r),
undo (z). Planning and writing run in the workbench's thread; the screen waits in workers, so the
UI never blocks on a file."""

from __future__ import annotations

import asyncio
from typing import Callable, Optional

from agentdiff.core.baselines.accept import AcceptPlan
from agentdiff.core.run.grid import majority_to_accept
from textual import work

from ..widgets.case_detail import ACCEPTED_LAYERS
from .accept_modal import AcceptModal
from .dialog import open_dialog
from .review_screen import ReviewScreen


class BaselineActions:
    """Mixed into WorkbenchScreen: uses its `workbench`, `view`, `current` and `tree`."""

    _accept_dialog: Optional[AcceptModal] = None

    async def _plan(self, case_id: str, repeat: Optional[int] = None) -> AcceptPlan:
        view, run = self.view, self.workbench.cases[case_id].run
        if repeat is None:
            repeat = run.shown if run is not None and len(run.outputs) > 1 and run.restage is not None else None  # the run shown (o)
        if view.layer in ACCEPTED_LAYERS:
            return await self.workbench.plan_accept(case_id, "layer", view.turn, view.layer, repeat=repeat)
        if view.turn_focused or view.layer:
            return await self.workbench.plan_accept(case_id, "turn", view.turn, repeat=repeat)
        return await self.workbench.plan_accept(case_id, "case", repeat=repeat)

    _accept_opening = False

    async def _confirm(self, done: Callable[[Optional[bool]], None], description: str, preview: str, alternative: str = "") -> None:
        """Ask with the accept dialog, which is made once per screen and opened again for each change;
        a change asked about while it is open (or opening) gets a dialog of its own over it."""
        dialog = self._accept_dialog
        if self._accept_opening or (dialog is not None and dialog in self.app.screen_stack):
            await open_dialog(self.app, AcceptModal(description, preview, alternative=alternative), done)
            return
        if dialog is None:
            dialog = self._accept_dialog = AcceptModal(description, preview, alternative=alternative)
            self.app.install_screen(dialog, f"accept-{id(self)}")
        else:
            dialog.show(description, preview, alternative=alternative)
        self._accept_opening = True
        try:
            await open_dialog(self.app, dialog, done)
        finally:
            self._accept_opening = False

    def action_accept(self) -> None:
        state = self.current
        if state is not None:
            self.preview_accept(state.ref.id)

    @work(exclusive=True, group="accept", name="plan an accept")
    async def preview_accept(self, case_id: str, repeat: Optional[int] = None) -> None:
        """The accept of the run shown (or run `repeat`); a case whose runs disagree is offered its majority
        run too (`m`), the one whose whole trajectory the most runs share."""
        run = self.workbench.cases[case_id].run
        majority = None
        if run is not None and run.result.disagreeing and run.restage is not None:
            made = await asyncio.to_thread(majority_to_accept, run)
            chosen = repeat if repeat is not None else run.shown
            if made is not None and chosen not in made.majority_runs:
                majority = made
        try:
            plan = await self._plan(case_id, repeat)
        except Exception as exc:
            self.notify(f"cannot accept: {exc}", severity="error")
            return
        alternative = f"Majority: run {majority.majority + 1}" if majority is not None else ""
        description = plan.description + (f" · m: the majority run instead (run {majority.majority + 1}, as "
                                           f"{len(majority.majority_runs)} of {majority.runs} runs did)" if majority is not None else "")

        def done(confirmed: Optional[bool]) -> None:
            if confirmed:
                self.write_plans([plan], replan=False)
            elif confirmed is None and majority is not None:
                self.preview_accept(case_id, majority.majority)

        await self._confirm(done, description, plan.preview, alternative)

    def action_accept_all(self) -> None:
        self.preview_accept_all()

    @work(exclusive=True, group="accept", name="plan accepting every visible failure")
    async def preview_accept_all(self) -> None:
        failing = [case_id for case_id in self.tree.visible_ids if self.workbench.cases[case_id].failing]
        flaky = [case_id for case_id in failing if (run := self.workbench.cases[case_id].run) is not None and run.result.disagreeing]
        failing = [case_id for case_id in failing if case_id not in flaky]
        if flaky:
            self.notify(f"{len(flaky)} flaky case(s) left out: review them (V) to choose which run to accept", severity="warning")
        if not failing:
            self.notify("no failing case to accept", severity="warning")
            return
        try:
            plan = await self.workbench.plan_accept_all(failing)
        except Exception as exc:
            self.notify(f"cannot accept: {exc}", severity="error")
            return

        def done(confirmed: Optional[bool]) -> None:
            if confirmed:
                self.write_plans([plan], replan=False)

        await self._confirm(done, f"{plan.description} (one undo)", plan.preview)

    @work(exclusive=True, group="write", name="write baselines")
    async def write_plans(self, plans: list[AcceptPlan], replan: bool) -> None:
        """Write each plan (a batch is one plan: one journal entry, undone by one z)."""
        for plan in plans:
            try:
                await self.workbench.accept(plan)
            except Exception as exc:
                self.notify(f"not written: {exc}", severity="error")
                return
            self.notify(f"written: {plan.description} (z undoes it)")
        if self.view.layer or self.view.turn_focused:  # written: the next accept starts from the whole case again
            self.view = self.view._replace(layer=None, turn_focused=False)

    def action_review(self) -> None:
        failing = [case_id for case_id in self.tree.visible_ids if self.workbench.cases[case_id].failing]
        if not failing:
            self.notify("no failing case to review", severity="warning")
            return
        self.app.push_screen(ReviewScreen(self.workbench, failing), lambda summary: self.notify(summary) if summary else None)

    def action_rerecord(self) -> None:
        state = self.current
        if state is None:
            return
        question = f"re-record {state.ref.id} live: run the agent with its own model and write what it does as the baseline"

        def done(confirmed: Optional[bool]) -> None:
            if confirmed:
                self.rerecord_case(state.ref.id)

        self.run_worker(self._confirm(done, question, "(the file change is made by the live run; z undoes it)\n"), group="accept")

    @work(group="record", name="re-record a case")
    async def rerecord_case(self, case_id: str) -> None:
        self.notify(f"re-recording {case_id} live…")
        outcome = await self.workbench.record(case_id)
        if outcome.error:
            self.notify(f"not recorded: {outcome.error}", severity="error")
        else:
            self.notify(f"recorded: {', '.join(outcome.written)} (z undoes it)")

    def action_undo(self) -> None:
        self.journal_step("undo")

    def action_redo(self) -> None:
        self.journal_step("redo")

    def action_drop_entry(self) -> None:
        self.journal_step("drop")

    @work(exclusive=True, group="write", name="undo, redo or drop a journal entry")
    async def journal_step(self, step: str) -> None:
        action = {"undo": self.workbench.undo, "redo": self.workbench.redo, "drop": self.workbench.drop}[step]
        try:
            entry = await action()
        except Exception as exc:
            self.notify(f"cannot {step}: {exc}", severity="error")
            return
        done = {"undo": "undone", "redo": "redone", "drop": "dropped (its files stay as they are)"}[step]
        by = f" (written by {entry.author})" if entry and entry.author else ""
        self.notify(f"{done}: {entry.reason}{by}" if entry else f"nothing to {step}")
        from agentdiff.core.formats.set_aside import take_notices

        for line in take_notices():  # an undo that kept the other changes made to a file since
            self.notify(line)
