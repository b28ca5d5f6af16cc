"""The workbench's baseline side, mixed into `Workbench`: accept (one case, or many as one journal
entry), re-record, undo, redo and drop; the files it wrote itself, which are not changes; and the
changes kept while watching is paused."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Callable, Optional, Sequence

from agentdiff.core.formats.source_file import display_path
from agentdiff.core.formats.source_file import resolved
from agentdiff.core.baselines.accept import AcceptPlan, AcceptRequest, Scope, apply_accept, plan_accepts
from agentdiff.core.baselines.journal import JournalEntry, drop_last, redo_last, sha256_of, undo_last
from agentdiff.core.baselines.record import RecordOutcome, record_case
from agentdiff.core.workbench.changes import ChangedPath, Selection, agent_changes, checks_code_changed
from agentdiff.core.workbench.events import CaseUpdated


class Baselines:
    """Needs the workbench's `root`, `cases`, `units`, `index`, `pool`, `options`, `paused`,
    `_paused_changes`, `_own`, and its `_lock`, `_reload`, `run`, `on_changes` and `_emit`."""

    def _request(self, case_id: str, scope: Scope = "case", turn: Optional[int] = None, layer: Optional[str] = None,
                 repeat: Optional[int] = None) -> AcceptRequest:
        state = self.cases[case_id]
        if state.run is None:
            raise ValueError(f"{case_id} has not run yet")
        return AcceptRequest(dataclasses.replace(state.run.full(), ref=state.ref), scope, turn, layer, repeat)  # the case as loaded now

    async def plan_accept(self, case_id: str, scope: Scope = "case", turn: Optional[int] = None, layer: Optional[str] = None,
                          repeat: Optional[int] = None, assistant: str = "") -> AcceptPlan:
        return await asyncio.to_thread(plan_accepts, [self._request(case_id, scope, turn, layer, repeat)], self.root, assistant)

    def mark_reviewed(self, case_id: str, reason: str) -> None:
        """A failure looked at and kept as it is (review's reject): its reason says so until it runs again."""
        state = self.cases.get(case_id)
        if state is not None:
            state.reason = reason
            self._emit(CaseUpdated(case_id))

    async def plan_accept_all(self, case_ids: Sequence[str]) -> AcceptPlan:
        """One plan (one journal entry, one undo) for every case's whole run."""
        return await asyncio.to_thread(plan_accepts, [self._request(case_id) for case_id in case_ids], self.root)

    async def accept(self, plan: AcceptPlan, author: str = "") -> JournalEntry:
        async with self._lock():
            entry = await asyncio.to_thread(apply_accept, plan, self.root, author)
            self._own_writes([write.path for write in plan.writes])
            await self._after_write([write.path for write in plan.writes], "accepted")
        return entry

    async def record(self, case_id: str) -> RecordOutcome:
        """Re-record a case live (as `agentdiff record`), then re-run it against the new baseline."""
        state = self.cases[case_id]
        outcome = await record_case(state.ref, self.pool, self.options.with_mode("live"), self.root)
        if outcome.error is None:
            async with self._lock():
                await self._reload([self.units[case_id]], "re-recorded")
            self.run([case_id], "re-run: re-recorded")
        return outcome

    async def undo(self) -> Optional[JournalEntry]:
        return await self._journal(undo_last, "undone")

    async def redo(self) -> Optional[JournalEntry]:
        return await self._journal(redo_last, "redone")

    async def drop(self, expected: Optional[str] = None) -> Optional[JournalEntry]:
        """Forget the newest journal entry (its files stay), so older ones can be undone (`expected`: only that one)."""
        return await asyncio.to_thread(drop_last, self.root, expected)

    async def _journal(self, step: Callable[[Path], Optional[JournalEntry]], done: str) -> Optional[JournalEntry]:
        async with self._lock():
            entry = await asyncio.to_thread(step, self.root)
            if entry is not None:
                paths = [self.root / file["path"] for file in entry.files]
                self._own_writes(paths)
                await self._after_write(paths, f"{done}: {entry.reason}")
        return entry

    def _own_writes(self, paths: Sequence[Path]) -> None:
        for path in paths:
            self._own[resolved(path)] = sha256_of(path)

    def _is_own(self, real: Path) -> bool:
        """A watcher event for a file this workbench wrote, which is still as it wrote it (seen once);
        `real`: the path resolved (`ChangedPath.real`)."""
        key = real
        if key not in self._own:
            return False
        if sha256_of(key) != self._own[key]:
            del self._own[key]
            return False
        return True

    def _hold(self, changed: Sequence[ChangedPath]) -> None:
        """Keep changes made while paused; mark the cases they touch stale, saying why. An editor's or
        a tool's temporary file (gone already, or one the watcher ignores) is not kept."""
        changes = [c for c in changed if c.watched and (c.present or self.index.known(c.real))]
        if not changes:
            return
        paths = [c.given for c in changes]
        self._paused_changes += paths
        checks = checks_code_changed(changes, {case_id: state.ref for case_id, state in self.cases.items()}, self.root)
        touched: set[str] = set(checks.case_ids if checks is not None else ())  # a python check's file
        for change in agent_changes(changes, checks, self.index):
            real = change.real
            touched |= self.index.affected_by(real)
            touched |= {case_id for case_id, unit in self.units.items() if unit == real or unit in real.parents}
        for case_id in sorted(touched):
            state = self.cases.get(case_id)
            if state is not None and not state.running:
                state.stale, state.reason = True, f"stale: {display_path(Path(paths[0]), self.root)} changed while watching was paused"
                self._emit(CaseUpdated(case_id))

    @property
    def held_changes(self) -> int:
        """How many changed files wait for watching to resume."""
        return len(set(self._paused_changes))

    async def set_paused(self, paused: bool) -> list[Selection]:
        """Pause or resume watching; resuming applies what changed meanwhile."""
        self.paused = paused
        if paused or not self._paused_changes:
            return []
        held, self._paused_changes = list(dict.fromkeys(self._paused_changes)), []
        return await self.on_changes(held)

    async def _after_write(self, paths: Sequence[Path], reason: str) -> None:
        """A baseline changed under us: load its files again; changed expectations re-score."""
        for selection in await self._reload(paths, reason):
            if selection.action == "run":
                self.run(selection.case_ids, selection.reason)



