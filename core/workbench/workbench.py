"""The workbench: every case's current state, runs and re-scores as files change, accept and undo.

Headless and UI-agnostic: the TUI (or a test) subscribes to its events and drives it from one
asyncio loop. Runs go to the worker pool; a change that lands while a case is running cancels that
run and schedules a new one, so nothing is dropped and a verdict never comes from stale code.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from agentdiff.core.baselines.accept import AcceptPlan, Scope, apply_accept, plan_accept
from agentdiff.core.project.agents import resolve_agent
from agentdiff.core.baselines.journal import JournalEntry, undo_last
from agentdiff.core.formats.conformance import recordings_file, session_file
from agentdiff.core.project.discovery import CaseRef, ConformanceCaseRef, EvalCaseRef, discover
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.rescore import rescore_case
from agentdiff.core.run.runner import run_case
from agentdiff.core.workbench.history import History
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.changes import CaseFiles, Selection, classify


#: Cases whose runs are being prepared or are in flight at once; the worker pool has its own limit.
PREPARING = 256


@dataclass
class CaseState:
    ref: CaseRef
    run: Optional[CaseRun] = None
    running: bool = False
    stale: bool = False
    reason: str = ""  # why it last ran, or is about to

    @property
    def status(self) -> Optional[CaseStatus]:
        return self.run.result.status if self.run else None

    @property
    def failing(self) -> bool:
        return self.status is not None and self.status is not CaseStatus.PASSED


@dataclass(frozen=True)
class CaseUpdated:
    case_id: str


@dataclass(frozen=True)
class CasesReloaded:
    pass


@dataclass(frozen=True)
class Notice:
    message: str
    severity: str = "information"  # information | warning | error


Event = CaseUpdated | CasesReloaded | Notice


@dataclass
class Workbench:
    root: Path
    paths: Sequence[Path]
    pool: object  # WorkerPool, or a fake with `async run(job, timeout)`
    options: RunOptions = field(default_factory=RunOptions)
    clock: Callable[[], float] = time.time
    history: Optional[History] = None

    def __post_init__(self) -> None:
        self.cases: dict[str, CaseState] = {}
        self.errors: list[LoadError] = []
        self._listeners: list[Callable[[Event], None]] = []
        self._tasks: dict[str, asyncio.Task] = {}
        self.paused = False
        self._slots: Optional[asyncio.Semaphore] = None
        self.load()

    # --- events -----------------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[Event], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def cancel(self) -> None:
        """Stop every run in progress (the app is closing)."""
        for task in self._tasks.values():
            task.cancel()

    def _emit(self, event: Event) -> None:
        for listener in self._listeners:
            listener(event)

    # --- discovery --------------------------------------------------------------------------------

    def load(self) -> None:
        found = discover(list(self.paths), self.root)
        previous = self.cases
        self.cases = {ref.id: previous.get(ref.id, CaseState(ref)) for ref in found.cases}
        for ref in found.cases:
            self.cases[ref.id].ref = ref
        self.errors = found.errors

    @property
    def mode(self) -> str:
        return self.options.mode or "default"

    def toggle_mode(self) -> str:
        """replay ↔ live for the cases that have a choice (conformance cases)."""
        new = "live" if self.options.mode != "live" else "replay"
        self.options = RunOptions(**{**self.options.__dict__, "mode": new})
        return new

    # --- running ----------------------------------------------------------------------------------

    def run(self, case_ids: Iterable[str], reason: str) -> list[asyncio.Task]:
        """Start (or restart) runs; a run already going for a case is cancelled and replaced.

        Replays go first: they are quick and need no model, so their verdicts show while the live
        runs of the same change wait for them."""
        ids = [case_id for case_id in case_ids if case_id in self.cases]
        replays = [i for i in ids if self._replays(i)]
        tasks = []
        for case_id in replays + [i for i in ids if i not in replays]:
            state = self.cases[case_id]
            old = self._tasks.pop(case_id, None)
            if old is not None and not old.done():
                old.cancel()
            state.stale, state.running, state.reason = True, True, reason
            self._emit(CaseUpdated(case_id))
            after = [self._tasks[i] for i in replays if i in self._tasks] if case_id not in replays else []
            task = asyncio.get_running_loop().create_task(self._run_one(case_id, reason, after))
            self._tasks[case_id] = task
            tasks.append(task)
        return tasks

    def _replays(self, case_id: str) -> bool:
        ref = self.cases[case_id].ref
        return isinstance(ref, ConformanceCaseRef) and self.options.mode != "live" and ref.case.recorded

    async def _run_one(self, case_id: str, reason: str, after: Sequence[asyncio.Task] = ()) -> None:
        if after:
            await asyncio.wait(after)
        state = self.cases[case_id]
        if self._slots is None:
            self._slots = asyncio.Semaphore(PREPARING)
        try:
            async with self._slots:  # a few cases at a time prepare their runs: the loop stays responsive
                run = await run_case(state.ref, self.pool, self.options, self.root)  # type: ignore[arg-type]
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an engine failure is shown on the case, never raised into the UI
            self._emit(Notice(f"{case_id}: {type(exc).__name__}: {exc}", "error"))
            state.running = False
            self._emit(CaseUpdated(case_id))
            return
        if self.cases.get(case_id) is not state:
            return  # the case was removed or reloaded meanwhile
        self._settle(state, run, reason)

    def _settle(self, state: CaseState, run: CaseRun, reason: str) -> None:
        state.run, state.running, state.stale, state.reason = run, False, False, reason
        if self.history is not None:
            self.history.add(state.ref.id, run.result, self.clock())
        self._emit(CaseUpdated(state.ref.id))

    async def wait(self) -> None:
        """Until every run started so far has finished (tests and the CLI)."""
        while True:
            pending = [t for t in self._tasks.values() if not t.done()]
            if not pending:
                return
            await asyncio.gather(*pending, return_exceptions=True)

    def rescore(self, case_ids: Iterable[str], reason: str) -> None:
        for case_id in case_ids:
            state = self.cases.get(case_id)
            if state is None:
                continue
            if state.run is None or not state.run.outputs:
                self.run([case_id], reason.replace("re-score", "run"))
                continue
            try:
                run = rescore_case(state.ref, state.run, self.options)
            except Exception as exc:
                self._emit(Notice(f"{case_id}: could not re-score: {exc}", "error"))
                continue
            self._settle(state, run, reason)

    # --- changes ----------------------------------------------------------------------------------

    def case_files(self) -> list[CaseFiles]:
        out = []
        for case_id, state in self.cases.items():
            ref = state.ref
            if isinstance(ref, EvalCaseRef):
                sources = frozenset({ref.eval_set.source.path.resolve()})
                config = ref.eval_set.source.path.resolve().parent / "test_config.json"
            else:
                folder = ref.case.dir.resolve()
                names = ["spec.yaml", *(f(m) for m in ("none", "sse") for f in (recordings_file, session_file))]
                sources = frozenset(folder / name for name in names)
                config = None
            agent = resolve_agent(ref, self.root, self.options.agents_dirs, self.options.mapping).agent
            agent_dir = (Path(agent.agents_dir) / agent.name).resolve() if agent else None
            read = frozenset(Path(p) for p in (state.run.files_read if state.run else ()))
            out.append(CaseFiles(case_id, sources, config, agent_dir, read))
        return out

    def on_changes(self, paths: Iterable[Path]) -> list[Selection]:
        """What a batch of changed files means; starts the runs and re-scores it calls for."""
        if self.paused:
            return []
        selections = classify(paths, self.case_files(), self.root)
        for selection in selections:
            if selection.action == "reload":
                self._reload(selection)
        for selection in selections:
            if selection.action == "run":
                self.run(selection.case_ids, selection.reason)
        return selections

    def _reload(self, selection: Selection) -> None:
        before = {case_id: _content(state.ref) for case_id, state in self.cases.items()}
        self.load()
        self._emit(CasesReloaded())
        changed_files = {p.resolve() for p in selection.paths}
        for case_id, state in self.cases.items():
            if case_id not in before:
                self.run([case_id], f"new case: {selection.reason}")
            elif before[case_id] != _content(state.ref):
                if isinstance(state.ref, ConformanceCaseRef) and state.ref.case.dir.resolve() / "spec.yaml" in changed_files:
                    self.run([case_id], f"re-run: {selection.reason}")
                else:
                    self.rescore([case_id], f"re-score: {selection.reason}")

    # --- accept and undo --------------------------------------------------------------------------

    def plan_accept(self, case_id: str, scope: Scope = "case", turn: Optional[int] = None, layer: Optional[str] = None) -> AcceptPlan:
        state = self.cases[case_id]
        if state.run is None:
            raise ValueError("this case has not run yet")
        run = dataclasses.replace(state.run, ref=state.ref)  # the case as loaded now, not as when it ran
        return plan_accept(run, self.root, scope, turn, layer)

    def accept(self, plan: AcceptPlan) -> JournalEntry:
        entry = apply_accept(plan, self.root)
        self._after_write(f"accepted: {plan.description}")
        return entry

    async def record(self, case_id: str):
        """Re-record a case live (as `agentdiff record`), then re-run it against the new baseline."""
        from agentdiff.core.baselines.record import record_case

        state = self.cases[case_id]
        options = RunOptions(**{**self.options.__dict__, "mode": "live"})
        outcome = await record_case(state.ref, self.pool, options, self.root)  # type: ignore[arg-type]
        if outcome.error is None:
            self.load()
            self._emit(CasesReloaded())
            self.run([case_id], "re-run: re-recorded")
        return outcome

    def undo(self) -> Optional[JournalEntry]:
        entry = undo_last(self.root)
        if entry is not None:
            self._after_write(f"undone: {entry.reason}")
        return entry

    def _after_write(self, reason: str) -> None:
        """The baseline changed under us: reload and re-score against the cached runs."""
        before = {case_id: _content(state.ref) for case_id, state in self.cases.items()}
        self.load()
        self._emit(CasesReloaded())
        for case_id, state in self.cases.items():
            if before.get(case_id) != _content(state.ref):
                self.rescore([case_id], reason)


def _content(ref: CaseRef) -> object:
    """What a case's expectations are, to tell whether a reload changed them."""
    if isinstance(ref, EvalCaseRef):
        return (ref.case.model_dump_json(), ref.config.config.model_dump_json())
    return (ref.case.spec_source.sha256, tuple(sorted((m, b.recordings_source.sha256, b.session_source.sha256) for m, b in ref.case.baselines.items())))
