"""The workbench screen's baseline keys: accept (a / A) with a preview, re-record live (ctrl+r),
undo (z). Planning and writing run in the workbench's thread; the screen waits in workers, so the
UI never blocks on a file."""

from __future__ import annotations

from typing import Optional

from agentdiff.core.baselines.accept import AcceptPlan
from textual import work

from .accept_modal import AcceptModal


class BaselineActions:
    """Mixed into WorkbenchScreen: uses its `workbench`, `view`, `current` and `tree`."""

    async def _plan(self, case_id: str) -> AcceptPlan:
        view = self.view
        if view.layer in ("tool_calls", "response"):
            return await self.workbench.plan_accept(case_id, "layer", view.turn, view.layer)
        if view.turn_focused or view.layer:
            return await self.workbench.plan_accept(case_id, "turn", view.turn)
        return await self.workbench.plan_accept(case_id, "case")

    def action_accept(self) -> None:
        state = self.current
        if state is not None:
            self.preview_accept(state.ref.id)

    @work(exclusive=True, group="accept", name="plan an accept")
    async def preview_accept(self, case_id: str) -> None:
        try:
            plan = await self._plan(case_id)
        except Exception as exc:
            self.notify(f"cannot accept: {exc}", severity="error")
            return

        def done(confirmed: Optional[bool]) -> None:
            if confirmed:
                self.write_plans([plan], replan=False)

        self.app.push_screen(AcceptModal(plan.description, plan.preview), done)

    def action_accept_all(self) -> None:
        self.preview_accept_all()

    @work(exclusive=True, group="accept", name="plan accepting every visible failure")
    async def preview_accept_all(self) -> None:
        plans, problems = [], []
        for case_id in self.tree.visible_ids:
            state = self.workbench.cases[case_id]
            if not state.failing:
                continue
            try:
                plans.append(await self.workbench.plan_accept(case_id, "case"))
            except Exception as exc:
                problems.append(f"{case_id}: {exc}")
        if not plans:
            self.notify("no failing case to accept" + (f" ({problems[0]})" if problems else ""), severity="warning")
            return
        preview = "".join(plan.preview for plan in plans)

        def done(confirmed: Optional[bool]) -> None:
            if confirmed:
                self.write_plans(plans, replan=True)

        self.app.push_screen(AcceptModal(f"accept {len(plans)} failing case(s)", preview), done)

    @work(exclusive=True, group="write", name="write baselines")
    async def write_plans(self, plans: list[AcceptPlan], replan: bool) -> None:
        """Write each plan; with several, each is planned again so cases sharing a file see the
        previous write."""
        for plan in plans:
            try:
                if replan:
                    plan = await self.workbench.plan_accept(plan.case_id, "case")
                await self.workbench.accept(plan)
            except Exception as exc:
                self.notify(f"not written: {plan.case_id if replan else ''}{': ' if replan else ''}{exc}", severity="error")
                return
            self.notify(f"written: {plan.description} (z undoes it)")

    def action_rerecord(self) -> None:
        state = self.current
        if state is None:
            return
        question = f"re-record {state.ref.id} live: run the agent with its own model and write what it does as the baseline"

        def done(confirmed: Optional[bool]) -> None:
            if confirmed:
                self.rerecord_case(state.ref.id)

        self.app.push_screen(AcceptModal(question, "(the file change is made by the live run; z undoes it)\n"), done)

    @work(group="record", name="re-record a case")
    async def rerecord_case(self, case_id: str) -> None:
        self.notify(f"re-recording {case_id} live…")
        outcome = await self.workbench.record(case_id)
        if outcome.error:
            self.notify(f"not recorded: {outcome.error}", severity="error")
        else:
            self.notify(f"recorded: {', '.join(outcome.written)} (z undoes it)")

    def action_undo(self) -> None:
        self.undo_last_write()

    @work(exclusive=True, group="write", name="undo the last write")
    async def undo_last_write(self) -> None:
        try:
            entry = await self.workbench.undo()
        except Exception as exc:
            self.notify(f"cannot undo: {exc}", severity="error")
            return
        self.notify(f"undone: {entry.reason}" if entry else "nothing to undo")
