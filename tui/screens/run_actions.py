"""The workbench screen's run keys: re-run the case (r) or the visible cases (R), switch the mode
(m); many live runs at once are asked about first, with what they took the last time."""

from __future__ import annotations

from typing import Callable

from agentdiff.core.project.family import family_of
from agentdiff.core.reports.estimate import from_results

from textual import work

from .accept_modal import AcceptModal


class RunActions:
    """Mixed into WorkbenchScreen: uses its `workbench`, `tree`, `current`, `notify` and `_refresh_header`."""

    confirm_live_above = 50  # more live runs than this at once: their last cost is shown and asked about first

    def action_rerun(self) -> None:
        state = self.current
        if state is not None:
            self.workbench.run([state.ref.id], "re-run: r pressed")

    def action_rerun_all(self) -> None:
        ids = list(self.tree.visible_ids)
        live = [i for i in ids if not self.workbench.replays(i)]
        self.confirm_live(live, f"Re-run {len(live)} cases live?", lambda: self.workbench.run(ids, "re-run: R pressed"))

    def confirm_live(self, live: list[str], question: str, go: Callable[[], object]) -> None:
        """`go` at once for a few live runs; for more than `confirm_live_above`, after a yes to what
        they took the last time they ran live (model calls, tokens, cost)."""
        if len(live) <= self.confirm_live_above:
            go()
            return
        wb = self.workbench
        line = from_results([wb.cases[i].run.result if wb.cases[i].run else None for i in live], wb.options.prices).line()
        self.app.push_screen(AcceptModal(question, line + "\n(confirm_live_above in the configuration sets when this asks)\n",
                                         "Run them? Each live run calls its model.", "Run"), lambda yes: go() if yes else None)

    def action_until_confident(self) -> None:
        """The inconclusive cases selected (the case, or those under the group row): their cost at the most
        shown and asked about first, then more runs until each settles."""
        from agentdiff.core.run.until_confident import plan
        from agentdiff.core.scoring.confidence import MAX_RUNS
        from agentdiff.core.scoring.results import CaseStatus

        node = self.tree.cursor_node
        ids = [node.data] if node is not None and node.data else (self.tree.cases_under(node) if node is not None else [])
        wb = self.workbench
        runs = [wb.cases[i].run for i in ids if i in wb.cases and wb.cases[i].run is not None and not wb.cases[i].running]
        unsettled = [run for run in runs if run.result.status is CaseStatus.INCONCLUSIVE]
        if not unsettled:
            self.notify("no inconclusive case here: u gives more runs to cases held to a minimum pass rate their runs "
                        "did not settle (min_pass_rate)", severity="warning")
            return
        line = plan(unsettled, MAX_RUNS, wb.options.prices).line()
        chosen = [run.ref.id for run in unsettled]

        def go(yes: "bool | None") -> None:
            if yes:
                self.notify(f"until confident: {len(chosen)} case(s)", timeout=2)
                self.settle_cases(chosen)

        self.app.push_screen(AcceptModal(f"Run {len(chosen)} inconclusive case(s) until confident?", line + "\n",
                                         "Run them? Each live run calls its model.", "Run"), go)

    @work(group="until-confident", name="run until confident")
    async def settle_cases(self, case_ids: list[str]) -> None:
        from agentdiff.core.workbench.until_confident import until_confident

        await until_confident(self.workbench, case_ids)

    def action_toggle_mode(self) -> None:
        ids = [case_id for case_id, s in self.workbench.cases.items() if family_of(s.ref).replays]
        if not ids:
            self.notify("every case here runs live: only conformance cases have recordings to replay")
            return

        def switch() -> None:
            mode = self.workbench.toggle_mode()
            said = "live: every case runs its model" if mode == "live" else "each case's default: conformance cases replay, eval sets run live"
            self.notify(f"mode {self.mode_label()} ({said}); re-running the conformance cases")
            self.workbench.run(ids, f"re-run: switched to {mode}")
            self._refresh_header()

        if self.workbench.options.mode == "live":
            switch()
        else:  # to live: the conformance cases run their models
            self.confirm_live(ids, f"Switch to live and re-run {len(ids)} conformance cases live?", switch)

    def mode_label(self) -> str:
        """The header's mode: what the cases will actually do (eval sets have no recordings: live)."""
        if self.workbench.options.mode == "live":
            return "live"
        cases = self.workbench.cases
        key = (id(cases), len(cases))  # the header asks at every repaint: the kinds are found once per load
        if getattr(self, "_kinds_of", None) != key:
            self._kinds_of, self._kinds = key, {family_of(state.ref).replays for state in cases.values()}
        kinds = self._kinds
        return "replay/live" if len(kinds) == 2 else "replay" if kinds == {True} else "live"
