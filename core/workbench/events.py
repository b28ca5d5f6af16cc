"""A case's state in the workbench, and the events the workbench tells its listeners (the TUI)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from agentdiff.core.project.discovery import CaseRef
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.scoring.results import CaseStatus


@dataclass
class CaseState:
    ref: CaseRef
    run: Optional[CaseRun] = None
    running: bool = False
    stale: bool = False
    reason: str = ""  # why it last ran, or is about to
    started: Optional[float] = None  # when its run started (the workbench's clock)

    @property
    def status(self) -> Optional[CaseStatus]:
        return self.run.result.status if self.run else None

    @property
    def failing(self) -> bool:
        return self.status is not None and self.status is not CaseStatus.PASSED


@dataclass(frozen=True)
class CaseUpdated:
    """One case's state or loaded content changed."""

    case_id: str


@dataclass(frozen=True)
class CasesUpdated:
    """Many cases' states changed at once (a run of `BULK_EVENT` cases or more queued): one event for
    them all, where one each cost the listeners more than the run's start itself."""

    case_ids: tuple[str, ...]


#: A run queueing this many cases or more tells its listeners in one `CasesUpdated`.
BULK_EVENT = 256


@dataclass(frozen=True)
class CasesReloaded:
    """Cases were added, removed or reordered, or the load errors changed: the list is new."""


@dataclass(frozen=True)
class Notice:
    message: str
    severity: str = "information"  # information | warning | error


Event = CaseUpdated | CasesUpdated | CasesReloaded | Notice
