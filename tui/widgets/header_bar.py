"""The header line: project, mode, counts by verdict, stale and running, watch and filter state."""

from __future__ import annotations

from typing import Iterable

from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.events import CaseState
from rich.text import Text
from textual.widgets import Static

from ..glyphs import GLYPH, NOT_RUN, RUNNING, STALE

SHOWN = (CaseStatus.PASSED, CaseStatus.FAILED, CaseStatus.ERROR, CaseStatus.FLAKY, CaseStatus.NOT_EVALUATED)


class HeaderBar(Static):
    def show(self, project: str, mode: str, states: Iterable[CaseState], paused: bool, filter_text: str, failures_only: bool, errors: int) -> None:
        counts = {status: 0 for status in CaseStatus}
        running = stale = not_run = 0
        for state in states:
            if state.running:
                running += 1
            elif state.stale:
                stale += 1
            elif state.status is None:
                not_run += 1
            else:
                counts[state.status] += 1
        text = Text()
        text.append(f" agentdiff · {project} · ", style="bold")
        text.append(f"mode {mode}")
        text.append("  ")
        for status in SHOWN:
            text.append(f" {GLYPH[status]} {counts[status]}")
        text.append(f"  {STALE} {stale}  {RUNNING} {running}")
        if not_run:
            text.append(f"  {NOT_RUN} {not_run}")
        if paused:
            text.append("  watch paused", style="yellow")
        if filter_text or failures_only:
            text.append(f"  filter: {filter_text}{' failures only' if failures_only else ''}", style="cyan")
        if errors:
            text.append(f"  {errors} load error(s)", style="red")
        self.update(text)
