"""The header line: project, mode, counts by verdict, stale and running, watch and filter state."""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.events import CaseState
from agentdiff.core.workbench.progress import Progress, duration_text
from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from ..glyphs import GLYPH, NOT_RUN, RUNNING, STALE
from ..safe_text import shown
from . import steady

SHOWN = (CaseStatus.PASSED, CaseStatus.FAILED, CaseStatus.ERROR, CaseStatus.FLAKY, CaseStatus.INCONCLUSIVE, CaseStatus.NOT_EVALUATED,
         CaseStatus.NEW)


class HeaderBar(Static):
    def _fitted(self, project: str, mode: str, tail_width: int) -> tuple[str, str]:
        """The project part and the mode, shortened when the line would not fit: the counts come first.
        `project` may carry the agents' runtime after ` · ` (`proj · ADK 1.22.0 · .venv`)."""
        width = self.size.width or (self.app.size.width if self.is_attached else 0)
        name, _, runtime = project.partition(" · ")
        for head, shown_mode in (
            (f" agentdiff · {project} · ", f"mode {mode}"),
            (f" {project} · ", mode),
            (f" {name} · {runtime.partition(' · ')[0]} · " if runtime else f" {name} · ", mode),
            (f" {name} · ", mode),
        ):
            if not width or cell_len(head) + cell_len(shown_mode) + tail_width <= width:
                return head, shown_mode
        return head, shown_mode

    def show(self, project: str, mode: str, states: "Iterable[CaseState] | Tally", paused: bool, filter_text: str, failures_only: bool,
             errors: int, progress: Optional[Progress] = None, now: float = 0.0) -> None:
        """`states`: the cases, or their `Tally` (kept as they change: no count of every case per repaint).
        `progress`: the batch of runs in flight (a bar, done/total and ETA while runs are going)."""
        tally = states if isinstance(states, Tally) else Tally().update({i: s for i, s in enumerate(states)}, None)
        counts = {status: tally.counts.get(status, 0) for status in CaseStatus}
        running, stale, not_run = (tally.counts.get(key, 0) for key in ("running", "stale", "not run"))
        tail = Text()
        done, total = sum(counts.values()), running + stale + not_run + sum(counts.values())
        if progress is not None and progress.total:
            done, total = progress.completed, progress.total
        if running:  # runs in flight: how far the batch has come, and how long it has to go
            filled = round(10 * done / total) if total else 0
            tail.append(f" {'█' * filled}{'░' * (10 - filled)} {done}/{total}", style="cyan")
            eta = progress.eta(now) if progress is not None else None
            tail.append(f" ETA {duration_text(eta)} " if eta is not None else " ", style="cyan")
        elif total and not done and not_run == total and not paused:
            tail.append(" starting workers… ", style="cyan")
        for status in SHOWN:
            if status not in (CaseStatus.NEW, CaseStatus.INCONCLUSIVE) or counts[status]:  # only where there are any
                tail.append(f" {GLYPH[status]} {counts[status]}")
        tail.append(f"  {STALE} {stale}  {RUNNING} {running}")
        if not_run:
            tail.append(f"  {NOT_RUN} {not_run}")
        if paused:
            tail.append("  watch paused", style="yellow")
        if filter_text or failures_only:
            tail.append(f"  filter: {filter_text}{' failures only' if failures_only else ''}", style="cyan")
        if errors:
            tail.append(f"  {errors} load error(s)", style="red")
        head, shown_mode = self._fitted(project, mode, tail_width=tail.cell_len + 2)
        text = Text()
        text.append(head, style="bold")
        text.append(shown_mode)
        text.append("  ")
        text.append_text(tail)
        steady.update(self, shown(text), layout=False)  # one line, always: nothing to lay out again


class Tally:
    """How many cases are in each state (running, stale, not run, or their verdict), kept by updating
    only the cases that changed."""

    def __init__(self) -> None:
        self.counts: dict = {}
        self._of: dict = {}  # case id → the state it is counted in

    @staticmethod
    def _bucket(state: CaseState) -> object:
        return "running" if state.running else "stale" if state.stale else state.status if state.status is not None else "not run"

    def update(self, cases: Mapping, ids: Optional[Iterable]) -> "Tally":
        """`ids`: the cases that changed (None: count every case again, as after a reload)."""
        if ids is None:
            self.counts, self._of = {}, {}
            ids = cases
        for case_id in ids:
            old, state = self._of.pop(case_id, None), cases.get(case_id)
            if old is not None:
                self.counts[old] -= 1
            if state is not None:
                bucket = self._of[case_id] = self._bucket(state)
                self.counts[bucket] = self.counts.get(bucket, 0) + 1
        return self

    @property
    def running(self) -> int:
        return self.counts.get("running", 0)
