"""The workbench: every case's current state, runs and re-scores as files change, accept and undo.

Headless and UI-agnostic: the TUI (or a test) subscribes to its events and drives it from one
asyncio loop. Nothing slow runs on that loop: loading changed files, re-scoring and writing
baselines happen in a thread, and only their results are applied on the loop. A change reloads
only the files it touched; what each case depends on is kept in a `CaseIndex`, so a save is mapped
to its cases by lookups. Runs go to the worker pool; a change that lands while a case is running
cancels that run and schedules a new one, so nothing is dropped and a verdict never comes from
stale code.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.project.agent_memo import AgentMemo
from agentdiff.core.project.discovery import CaseRef, discover
from agentdiff.core.project.family import family_of
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.rescore import judge_again, rescore_case
from agentdiff.core.run.runner import run_case
from agentdiff.core.run.cpu import ON_LOOP as on_loop, Pacer
from agentdiff.core.workbench.baselines import Baselines
from agentdiff.core.workbench.case_index import CaseIndex, case_files, forget_resolved, listed_order, units_of
from agentdiff.core.workbench.changes import (
    Selection,
    after_reload,
    agents_may_have_moved,
    checks_code_changed,
    decide,
    plan_changes,
    resolve_changes,
    static_dependents,
)
from agentdiff.core.workbench.events import (
    BULK_EVENT,
    CasesReloaded,
    CasesUpdated,
    CaseState,
    CaseUpdated,
    Event,
    Notice,
)
from agentdiff.core.workbench.history import History
from agentdiff.core.workbench.progress import Progress
from agentdiff.core.workbench.snapshots import Snapshots
from agentdiff.core.workbench import spill as spills
from agentdiff.core.workbench.reload import Reload, load_units, units_to_reload
from agentdiff.core.workbench.run_queue import RunQueue

#: Cases whose runs are being prepared or are in flight at once; the worker pool has its own limit.
PREPARING = 256


@dataclass
class Workbench(Baselines):
    root: Path
    paths: Sequence[Path]
    pool: object  # WorkerPool, or a fake with `async run(job, timeout)`
    options: RunOptions = field(default_factory=RunOptions)
    clock: Callable[[], float] = time.time
    history: Optional[History] = None

    def __post_init__(self) -> None:
        self.cases: dict[str, CaseState] = {}
        self.errors: list[LoadError] = []
        self.notes: list[str] = []  # discovery's: files that look like cases and are not read as ones
        self.index = CaseIndex()
        self.progress = Progress()  # of the runs in flight
        self.snapshots = Snapshots(self.root)
        self.units: dict[str, Path] = {}  # case id → the file or folder it loads from
        self.paused = False
        self._paused_changes: list[Path] = []  # changed while watching was paused: applied on resume
        self._own: dict[Path, Optional[str]] = {}  # files this workbench wrote, with what it wrote
        self._agents = AgentMemo(self.root)
        self._listeners: list[Callable[[Event], None]] = []
        self._runs = RunQueue(self._run_one, PREPARING)
        self._pace = Pacer()  # runs that end together settle over several passes of the loop
        self._serial: Optional[asyncio.Lock] = None  # one change, accept or undo applied at a time
        self.spill = spills.Spill()  # a big session's older runs, on disk
        self._spiller = spills.Spiller(self.spill, self._may_spill)
        self._whole: OrderedDict[str, None] = OrderedDict()  # the cases settled last, whose runs stay whole
        self._rescoring: list[set[str]] = []  # the cases of the re-scores under way
        self._modes: dict[str, str] = {}  # case → the mode its queued run was asked in (that run's, not the session's)
        self.load()

    # --- events -----------------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[Event], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def cancel(self) -> None:
        """Stop every run in progress (the app is closing)."""
        self._runs.cancel()

    def _emit(self, event: Event) -> None:
        for listener in self._listeners:
            listener(event)

    # --- loading ----------------------------------------------------------------------------------

    def load(self) -> None:
        """Discover every case under the paths (at start); states of known cases are kept."""
        found = discover(list(self.paths), self.root)
        previous = self.cases
        self.cases = {}
        for ref in found.cases:
            state = previous.get(ref.id) or CaseState(ref)
            state.ref = ref
            self.cases[ref.id] = state
        self.errors, self.notes = found.errors, found.notes
        self.units, self.standing = units_of(found.cases), set(found.standing)  # standing: loaded again with any other file
        forget_resolved()
        self.index = CaseIndex()
        for state in self.cases.values():
            self._index(state)

    def _index(self, state: CaseState) -> None:
        run, ref = state.run, state.ref
        agent = run.agent if run is not None and run.agent is not None else self._agents.resolve(ref, self.options.agents_dirs, self.options.mapping).agent
        self.index.put(case_files(ref, self.units[ref.id], agent, run.files_read if run else ()))

    def _apply(self, reload: Reload) -> bool:
        """Put what a reload loaded in place of what its files held; True when the list changed."""
        old_ids = [case_id for case_id in self.cases if self.units[case_id] in reload.units]
        errors = reload.merge_errors(self.errors)
        reload.mark_held([self.cases[case_id] for case_id in old_ids])
        if old_ids == [ref.id for ref in reload.cases]:  # the same cases in the same order: new content only
            for ref in reload.cases:
                self.cases[ref.id].ref = ref
                self._index(self.cases[ref.id])
            changed, self.errors = errors != self.errors, errors
            return changed
        kept = {ref.id for ref in reload.cases}
        for case_id in old_ids:
            if case_id not in kept:
                self.index.remove(case_id)
                del self.units[case_id]
                self._runs.drop(case_id)
        replaced = set(old_ids)
        listed = [state for case_id, state in self.cases.items() if case_id not in replaced]
        for ref in reload.cases:
            state = self.cases.get(ref.id) or CaseState(ref)
            state.ref = ref
            self.units[ref.id] = reload.unit[ref.id]
            listed.append(state)
            self._index(state)
        listed.sort(key=lambda s: listed_order(s.ref, self.units[s.ref.id]))
        self.cases = {state.ref.id: state for state in listed}
        self.errors = errors
        return True

    def toggle_mode(self) -> str:
        """replay ↔ live for the cases that have a choice (conformance cases). Back from live, every
        case takes its default again: EvalSet cases, which have no recordings, stay live."""
        new = "live" if self.options.mode != "live" else "replay"
        self.options = self.options.with_mode("live" if new == "live" else None)
        return new

    # --- running ----------------------------------------------------------------------------------

    def run(self, case_ids: Iterable[str], reason: str, mode: Optional[str] = None) -> None:
        """Start (or restart) runs, in `mode` for these runs only (None: the session's); a run already
        going or queued for a case is cancelled and queued again, at the back.

        The affected cases are scheduled together: replays are queued first (quick, no model: their
        verdicts show first) and the live runs of the same change start beside them, never waiting for
        them. The cases queue in a `RunQueue`, and `PREPARING` of them at a time are tasks."""
        ids = [case_id for case_id in case_ids if case_id in self.cases]
        for case_id in ids:
            self._modes.pop(case_id, None) if mode is None else self._modes.update({case_id: mode})
        replays = [i for i in ids if self.replays(i)]
        jobs = getattr(self.pool, "jobs", None)
        self.progress.jobs = jobs if isinstance(jobs, int) and jobs > 0 else 1
        self.progress.queued(ids, self.busy(), self.clock(), self.history.last_seconds(ids) if self.history is not None else None)
        first = frozenset(replays)
        order = replays + [i for i in ids if i not in first] if replays else ids  # replays start first
        bulk = len(order) >= BULK_EVENT
        for case_id in order:
            state = self.cases[case_id]
            state.stale, state.running, state.reason = True, False, reason  # queued (○) until its run starts (⟳)
            if not bulk:
                self._emit(CaseUpdated(case_id))
        self._runs.put_many(order, reason)
        if bulk:
            self._emit(CasesUpdated(tuple(order)))

    def busy(self, case_id: Optional[str] = None) -> bool:
        """Whether a run is queued or in flight (for the case, or for any)."""
        return self._runs.busy(case_id)

    def running(self) -> list[CaseState]:
        """The cases whose runs have started and not finished (a window of them: never a walk of the suite)."""
        return [state for i in self._runs.in_flight if (state := self.cases.get(i)) is not None and state.running]

    def replays(self, case_id: str) -> bool:
        ref = self.cases[case_id].ref
        return family_of(ref).free(ref, self._modes.get(case_id, self.options.mode))

    async def _run_one(self, case_id: str, reason: str) -> None:
        on_loop.set(self._pace)  # this task's small runs are scored here, not in a thread (`core.run.cpu`)
        await self._pace.turn()  # runs whose slots freed together start over several passes too
        state = self.cases.get(case_id)
        if state is None:
            return  # removed meanwhile
        ref = state.ref
        try:
            state.running, state.started = True, self.clock()
            self.progress.started_case(case_id, state.started)
            self._emit(CaseUpdated(case_id))
            options = self.options if (mode := self._modes.pop(case_id, None)) is None else self.options.with_mode(mode)  # type: ignore[arg-type]
            run = await run_case(ref, self.pool, options, self.root, self._agents)
            if state.ref is not ref and run.outputs:  # its expectations changed while it ran
                judged = await judge_again(state.ref, run, self.pool, options)
                run = rescore_case(state.ref, run, options, judged)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an engine failure is shown on the case, never raised into the UI
            self._emit(Notice(f"{case_id}: {type(exc).__name__}: {exc}", "error"))
            state.running = False
            self.progress.finished(case_id)
            self._emit(CaseUpdated(case_id))
            return
        await self._pace.turn()
        if self.cases.get(case_id) is not state:
            return  # the case was removed meanwhile
        self._settle(state, run, reason)

    def _settle(self, state: CaseState, run: CaseRun, reason: str) -> None:
        state.run, state.running, state.stale, state.reason = run, False, False, reason
        self.progress.finished(state.ref.id)
        self._index(state)  # what its agent read this time
        if self.history is not None:
            self.history.record(run, self.clock(), self.progress.started or None, self.snapshots)
        self._emit(CaseUpdated(state.ref.id))
        self._spill_older(state)

    def _spill_older(self, state: CaseState) -> None:
        """Past `SPILL_FROM` cases, the runs settled before the last `KEEP_WHOLE` are kept on disk."""
        if len(self.cases) < spills.SPILL_FROM:
            return
        self._whole[state.ref.id] = None
        self._whole.move_to_end(state.ref.id)
        while len(self._whole) > spills.KEEP_WHOLE:
            older = self.cases.get(self._whole.popitem(last=False)[0])
            if older is not None and isinstance(older.run, CaseRun) and self._may_spill(older, older.run):
                self._spiller.add(older, older.run)

    def _may_spill(self, state: CaseState, run: CaseRun) -> bool:
        return state.run is run and not state.running and not any(state.ref.id in held for held in self._rescoring)

    async def wait(self) -> None:
        """Until every run started so far has finished (tests and the CLI), and older runs are spilled."""
        await self._runs.wait_for(None)
        await self._spiller.settled()

    async def wait_for(self, case_ids: Optional[Iterable[str]], timeout: Optional[float] = None) -> bool:
        """Until none of these cases is queued or running, or `timeout` seconds have passed; whether
        they all finished."""
        return await self._runs.wait_for(case_ids, timeout)

    async def rescore(self, case_ids: Iterable[str], reason: str) -> None:
        """Score cached runs again against the cases as loaded now (in a thread); no agent call."""
        cached, unrun = [], []
        for case_id in case_ids:
            state = self.cases.get(case_id)
            if state is None:
                continue
            if state.run is None or not state.run.has_outputs or state.running:
                unrun.append(case_id)
            else:
                cached.append((state, state.ref, state.run))
        if unrun:
            self.run(unrun, reason.replace("re-score", "run"))
        if not cached:
            return
        options = self.options
        held = {state.ref.id for state, _, _ in cached}
        self._rescoring.append(held)  # their runs stay as they are until their new scores are in
        judged = await asyncio.gather(*(judge_again(ref, run, self.pool, options) for _, ref, run in cached), return_exceptions=True)

        def score_all() -> list[tuple[CaseState, CaseRef, CaseRun, object]]:
            out = []
            for (state, ref, run), judgement in zip(cached, judged):
                try:
                    if isinstance(judgement, BaseException):
                        raise judgement
                    out.append((state, ref, run, rescore_case(ref, run, options, judgement)))
                except Exception as exc:
                    out.append((state, ref, run, exc))
            return out

        try:
            scored = await asyncio.to_thread(score_all)
        finally:
            self._rescoring.remove(held)
        for state, ref, run, fresh in scored:
            if state.ref is not ref or state.run is not run or self.cases.get(ref.id) is not state or state.running:
                continue  # loaded again, or run again (or running again), meanwhile
            if isinstance(fresh, Exception):
                self._emit(Notice(f"{ref.id}: could not re-score: {fresh}", "error"))
            else:
                self._settle(state, fresh, reason)

    # --- changes ----------------------------------------------------------------------------------

    def _lock(self) -> asyncio.Lock:
        if self._serial is None:
            self._serial = asyncio.Lock()
        return self._serial

    async def on_changes(self, paths: Iterable[Path]) -> list[Selection]:
        """What a batch of changed files means; starts the runs and re-scores it calls for. Files this workbench
        wrote itself (still as written) are not changes. Paused, they wait (stale) for `set_paused(False)`."""
        changes = [c for c in resolve_changes(paths) if not self._is_own(c.real)]  # resolved once: every step reads these
        if not changes:
            return []
        if self.paused:
            self._hold(changes)
            return []
        async with self._lock():
            changes = [change.now() for change in changes]  # as the files are once the change before it is done
            if agents_may_have_moved(changes, self.index, self.root):
                await self._resolve_agents_again()
            plan = plan_changes(changes, self.index, {i: s.ref for i, s in self.cases.items()}, self.root)
            static = await asyncio.to_thread(static_dependents, plan.asked, list(self.index.agent_dirs()), self.root,
                                             self.options.agents_dirs) if plan.asked else {}  # a walk: off the loop
            selections, notes = decide(plan, self.index, self.root, static)
            for note in notes:
                self._emit(Notice(note))
            done: set[str] = set()  # re-scored or to run again: checked by the new code anyway
            for selection in [s for s in selections if s.action == "reload"]:
                reloaded = await self._reload(selection.paths, selection.reason)
                selections += [s for s in reloaded if s.action in ("run", "drop")]
                done |= {i for s in reloaded if s.action == "rescore" for i in s.case_ids}
            done |= {i for s in selections if s.action == "run" for i in s.case_ids}
            checks = checks_code_changed(changes, {i: s.ref for i, s in self.cases.items()}, self.root)  # the cases as reloaded
            if checks is not None and (ids := [i for i in checks.case_ids if i not in done and not self.cases[i].running]):
                checks.case_ids = ids
                await self.rescore(ids, checks.reason)
                selections.append(checks)
            for selection in selections:
                if selection.action == "run":
                    self.run(self.hold_runs(selection.case_ids, selection.reason), selection.reason)
        return selections

    def hold_runs(self, case_ids: list[str], reason: str) -> list[str]:
        """The runs a change may start by itself (all of them; `agentdiff mcp` keeps back live runs over
        its limit, marked stale, until they are confirmed)."""
        return case_ids

    async def _reload(self, paths: Sequence[Path], reason: str) -> list[Selection]:
        """Load the changed files again (in a thread), put them in place, and say what that means for
        each of their cases; the re-scores are done here (and returned, done), the runs left to the caller."""
        units = units_to_reload(paths, self.units, self.index, self.standing, self.paths)
        if not units:
            return []
        before = {case_id: self.cases[case_id].ref for case_id, unit in self.units.items() if unit in units}
        elsewhere = [s.ref for i, s in self.cases.items() if self.units.get(i) not in units] if self.standing else None
        reload = await asyncio.to_thread(load_units, units, before, self.root, {i: self.units[i] for i in before}, elsewhere)
        self.standing = (self.standing - units) | set(reload.standing)
        if self._apply(reload):
            self._emit(CasesReloaded())
        selections = after_reload(reload.before, reload.after, reason)
        changed = {i for s in selections for i in s.case_ids}
        for case_id in (i for i in reload.after if i in self.cases and i not in changed):
            self._emit(CaseUpdated(case_id))  # its file was loaded again: what it shows may have moved
        for selection in selections:
            if selection.action == "rescore":
                await self.rescore(selection.case_ids, selection.reason)
        return selections

    async def _resolve_agents_again(self) -> None:
        """Which folder is which case's agent may have changed: resolve every case's agent again (in a thread)."""
        self._agents = AgentMemo(self.root)
        forget_resolved()  # the agents' folders, resolved anew
        states = list(self.cases.values())
        memo, options = self._agents, self.options
        units = dict(self.units)
        entries = await asyncio.to_thread(
            lambda: [case_files(s.ref, units[s.ref.id], memo.resolve(s.ref, options.agents_dirs, options.mapping).agent, s.run.files_read if s.run else ()) for s in states]
        )
        for files in entries:
            if files.case_id in self.cases and self.index.get(files.case_id) != files:
                self.index.put(files)
        found = {files.case_id for files in entries if files.agent_dir is not None}
        orphans = [s.ref.id for s in states if s.run is not None and s.run.agent is None and s.ref.id in found]
        if orphans:
            self.run(orphans, "re-run: its agent was found")
