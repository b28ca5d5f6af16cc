"""Review mode, as `cargo insta review` does it: the failing cases one by one, each with the exact file
change accepting it would make. `a` accepts, `x` rejects (the baseline stays; the case is marked
reviewed), `s` skips, each moving on; `z` takes back the previous decision (undoing its write); a
summary at the end. A flaky case first asks which of its runs to accept (`1`–`9`)."""

from __future__ import annotations

import asyncio

from typing import Optional

from agentdiff.core.baselines.accept import AcceptPlan, run_summaries
from agentdiff.core.run.grid import majority_to_accept
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from ..diff_render import diff_preview
from ..safe_text import pictured, shown
from .dialog import Dialog

KEYS = "a accept · x reject · s skip · z back · j/k/g/G/space scroll · q quit"


def verdict_text(run) -> Text:
    """Under the case's title, as its header in the workbench says them: its metrics against their
    thresholds (the failing ones red), then its first divergence, or its error."""
    from agentdiff.core.scoring.metrics import MetricStatus

    out = Text()
    if run is None:
        return out
    scored = [(f"{m.name} {m.score:.2f} {'<' if m.status is MetricStatus.FAILED else '≥'} {m.threshold:g}", m.status is MetricStatus.FAILED)
              for m in run.result.metrics if m.score is not None and m.threshold is not None]
    if scored:
        out.append("\n")
        for n, (said, failed) in enumerate(scored):
            out.append((" · " if n else "") + said, style="red" if failed else "dim")
    first = run.diff.first_divergence if run.diff is not None else None
    if first is not None:
        out.append(f"\nfirst divergence: {first.summary}", style="yellow")
    elif run.result.error:
        out.append("\n" + run.result.located_error.splitlines()[0], style="red")
    return out


class ReviewScreen(Dialog[str]):
    """Returns the summary line."""

    BINDINGS = [
        ("a", "decide('accepted')", "Accept"), ("x", "decide('rejected')", "Reject"), ("s", "decide('skipped')", "Skip"),
        ("z", "back", "Back"), ("q", "quit", "Quit"), ("escape", "quit", "Quit"),
        ("j", "scroll(1)", "Down"), ("k", "scroll(-1)", "Up"), ("space", "scroll(10)", "Page down"),
        ("g", "edge(0)", "Top"), ("G", "edge(1)", "Bottom"),
        *[(str(n), f"choose({n})", f"Run {n}") for n in range(1, 10)],
        ("m", "majority", "The majority run"),
    ]

    def __init__(self, workbench, case_ids: list[str]) -> None:
        super().__init__()
        self.workbench = workbench
        self.case_ids = case_ids
        self.index = 0
        self.decisions: list[tuple[str, str]] = []  # (case id, accepted | rejected | skipped)
        self.plan: Optional[AcceptPlan] = None
        self.repeat: Optional[int] = None
        self.majority: Optional[int] = None  # a case whose runs disagree: the run most of them did as
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical(id="review-dialog"):
            yield Static(id="review-title")
            with VerticalScroll(id="review-preview"):
                yield Static(id="review-body")
            yield Static(Text(KEYS, style="dim"), id="review-keys")

    def on_mount(self) -> None:
        self.show_case()

    @property
    def current(self) -> Optional[str]:
        return self.case_ids[self.index] if self.index < len(self.case_ids) else None

    @work(exclusive=True, group="review", name="plan the reviewed case")
    async def show_case(self) -> None:
        case_id = self.current
        if case_id is None:
            self.dismiss(self.summary())
            return
        self.plan, self.majority = None, None
        title = self.query_one("#review-title", Static)
        body = self.query_one("#review-body", Static)
        title.update(shown(Text(f"{self.index + 1}/{len(self.case_ids)}  {case_id}", style="bold")))
        state = self.workbench.cases[case_id]
        if self.repeat is None and state.run is not None and state.run.result.disagreeing:
            made = await asyncio.to_thread(majority_to_accept, state.run)
            self.majority = made.majority if made is not None else None
            lead = "its runs disagree: which one is the new baseline? press its number"
            if made is not None:
                lead += f", or m for the majority run (run {made.majority + 1}, as {len(made.majority_runs)} of {made.runs} runs did)"
            body.update(shown(Text(lead + "\n\n" + "\n".join(run_summaries(state.run, answers=True)))))
            return
        try:
            self.plan = await self.workbench.plan_accept(case_id, repeat=self.repeat)
            body.update(diff_preview(pictured(self.plan.preview)))
            title.update(shown(Text(f"{self.index + 1}/{len(self.case_ids)}  {self.plan.description}", style="bold")
                               + verdict_text(state.run)))
        except Exception as exc:  # nothing to accept, a failed run: say so; x or s moves on
            body.update(shown(Text(f"cannot accept: {exc}")))
        self.query_one("#review-preview", VerticalScroll).scroll_home(animate=False)

    def action_choose(self, number: int) -> None:
        state = self.workbench.cases.get(self.current or "")
        if state is not None and state.run is not None and number <= len(state.run.outputs) and state.run.result.disagreeing:
            self.repeat = number - 1
            self.show_case()

    def action_majority(self) -> None:
        if self.repeat is None and self.majority is not None:
            self.repeat = self.majority
            self.show_case()

    def action_decide(self, decision: str) -> None:
        if self.current is not None and not self.busy:
            self.record_decision(decision)

    @work(exclusive=True, group="review-write", name="write a review decision")
    async def record_decision(self, decision: str) -> None:
        case_id = self.current
        if case_id is None:
            return
        self.busy = True
        try:
            if decision == "accepted":
                if self.plan is None:
                    self.notify("nothing to accept here: x keeps the baseline, s skips", severity="warning")
                    return
                try:
                    await self.workbench.accept(self.plan)
                except Exception as exc:
                    self.notify(f"not written: {exc}", severity="error")
                    return
            elif decision == "rejected":
                self.workbench.mark_reviewed(case_id, "reviewed: the baseline was kept")
            self.decisions.append((case_id, decision))
            self.plan, self.index, self.repeat = None, self.index + 1, None
            self.show_case()
        finally:
            self.busy = False

    @work(exclusive=True, group="review-write", name="take back a review decision")
    async def action_back(self) -> None:
        if not self.decisions or self.busy:
            return
        case_id, decision = self.decisions.pop()
        if decision == "accepted":
            try:
                await self.workbench.undo()
            except Exception as exc:
                self.decisions.append((case_id, decision))
                self.notify(f"cannot take it back: {exc}", severity="error")
                return
        self.plan, self.index, self.repeat = None, self.case_ids.index(case_id), None
        self.show_case()

    def action_scroll(self, lines: int) -> None:
        self.query_one("#review-preview", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_edge(self, end: int) -> None:
        preview = self.query_one("#review-preview", VerticalScroll)
        preview.scroll_end(animate=False) if end else preview.scroll_home(animate=False)

    def action_quit(self) -> None:
        self.dismiss(self.summary())

    def summary(self) -> str:
        counts = {kind: sum(1 for _, d in self.decisions if d == kind) for kind in ("accepted", "rejected", "skipped")}
        left = len(self.case_ids) - len(self.decisions)
        return (f"reviewed {len(self.decisions)} of {len(self.case_ids)}: {counts['accepted']} accepted, "
                f"{counts['rejected']} rejected, {counts['skipped']} skipped" + (f", {left} not reviewed" if left else ""))
