"""What a coding agent can ask of the workbench (`agentdiff mcp`'s tools), as JSON-able answers: the
same workbench as the TUI's (warm workers, the watcher, the journal), without a screen.

Every answer is bounded: long texts are cut (`MAX_TEXT`), a diff comes a few turns at a time
(`diff(page=…)`), lists stop at `limit`. A request that cannot be met raises `ToolError` with what
to do instead, which the server turns into a tool error the model reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional, Sequence

from agentdiff.core.baselines.accept import AcceptPlan
from agentdiff.core.project.discovery import Discovery
from agentdiff.core.project.family import family_of
from agentdiff.core.workbench.events import CaseState, CasesUpdated, CaseUpdated
from agentdiff.core.workbench.triage import Triage
from agentdiff.core.workbench.workbench import Workbench

from ..case_filter import CaseFacts, matches, parse_error
from .activity import Activity
from .answers import ToolError, cut, status_of
from .case_answers import CaseAnswers
from .current import CurrentState
from .kept import Kept, KeptVerdict, read_kept
from .writes import Writes

SETTLE = 0.03  # seconds the watcher is given to see an edit made just before `run("affected")`
UNSEEN_WAIT = 1.5  # at most this much longer when a file changed since the last look and no case went stale yet
WHICH = ("affected", "failed", "all")
PROGRESS_EVERY = 2.0  # seconds between a run's progress notifications
Progress = Callable[[int, int, str], Awaitable[None]]  # (done, of, message)


def _costs(state: CaseState) -> Optional[tuple[Optional[float], dict]]:
    result = state.run.result if state.run is not None else None
    return (result.model_calls, result.usage) if result is not None and result.mode == "live" and result.model_calls is not None else None


@dataclass
class AssistSession(CaseAnswers, Writes, CurrentState):
    workbench: Workbench
    triage: Triage
    client: Callable[[], str] = lambda: "assistant"  # the MCP client's name, once it has said it
    confirm_live_above: int = 50
    activity: Optional[Activity] = None
    watching: bool = True
    _seen: dict[str, tuple[str, Any]] = field(default_factory=dict)  # case → (status, its run) at the last `status`
    _ran: dict[str, Any] = field(default_factory=dict)  # case → its run when `run` last looked (the object: an id could be reused)
    _plans: dict[str, tuple[AcceptPlan, str, object]] = field(default_factory=dict)  # digest → (plan, case, the run it is of)
    _mark: float = field(default_factory=time.time)  # when `run` last looked for edits
    _notices: list[str] = field(default_factory=list)  # the engine's notices since they were last said
    kept: Kept = field(default_factory=lambda: Kept({}, {}))  # the kept runs' verdicts (`load_kept`)
    _kept_loading: Optional[asyncio.Future] = None

    def __post_init__(self) -> None:
        self.workbench.subscribe(self._on_event)
        self.workbench.hold_runs = self._hold_live  # type: ignore[method-assign]
        self._ran = {i: s.run for i, s in self.workbench.cases.items()}

    def _on_event(self, event: Any) -> None:
        message = getattr(event, "message", None)
        if isinstance(message, str):  # a Notice: an engine failure on a case, a write's news
            self._notices = [*self._notices[-19:], cut(message, 500)]
        elif isinstance(event, (CaseUpdated, CasesUpdated)):
            self.note_first([event.case_id] if isinstance(event, CaseUpdated) else event.case_ids)

    def _said(self) -> dict[str, Any]:
        from agentdiff.core.formats.set_aside import take_notices

        notices, self._notices = [*self._notices, *take_notices()], []
        return {"notices": notices[-20:]} if notices else {}

    def load_kept(self) -> None:
        """Read the kept runs' verdicts in a thread; the first answer that needs them waits for them."""
        sources = {case_id: state.ref.source for case_id, state in self.workbench.cases.items()}
        self._kept_loading = asyncio.ensure_future(asyncio.to_thread(read_kept, self.workbench.root, sources))

    async def ready(self) -> None:
        loading = self._kept_loading
        if loading is None:
            return
        try:
            kept = await asyncio.shield(loading)  # a call cancelled while it waits leaves the reading to the next one
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - unreadable kept runs: the session starts from nothing
            kept = Kept({}, {})
            self._notices.append(f"the kept runs could not be read ({type(exc).__name__}: {cut(str(exc), 200)})")
        if self._kept_loading is not loading:
            return  # another call took it meanwhile
        self._kept_loading, self.kept = None, kept
        for case_id, verdict in self.kept.verdicts.items():  # changed since: stale, for run(which="affected") to run
            state = self.workbench.cases.get(case_id)
            if verdict.changed and state is not None and state.run is None and not state.running and not self.workbench.busy(case_id):
                state.stale, state.reason = True, f"{verdict.changed} changed since its kept run ({verdict.run})"
                self.workbench._emit(CaseUpdated(case_id))

    def _free(self, case_id: str, mode: Optional[str]) -> bool:
        """Whether running the case in `mode` (None: the session's) costs no model call."""
        ref = self.workbench.cases[case_id].ref
        return family_of(ref).free(ref, mode or self.workbench.options.mode)

    def _live(self, ids: Sequence[str], mode: Optional[str] = None) -> list[str]:
        if mode is None:
            return [i for i in ids if not self.workbench.replays(i) and (self.workbench.options.mode or "live") != "replay"]
        return [i for i in ids if not self._free(i, mode) and mode != "replay"]

    def _estimate(self, live: Sequence[str]) -> str:
        session = {i: cost for i in live if (cost := _costs(self.workbench.cases[i])) is not None}
        return self.kept.estimate(live, session, self.workbench.options.prices).line()

    def _word(self, state: CaseState) -> tuple[str, Optional[KeptVerdict]]:
        """The case's status word (this session's; where it has not run in this session, its kept
        verdict's), and the kept verdict it came from."""
        word = status_of(state)
        kept = self.kept.verdicts.get(state.ref.id) if state.run is None else None
        return (kept.status if word == "not run" and kept is not None and not kept.changed else word), kept

    def _failing(self, state: CaseState) -> bool:
        word, _ = self._word(state)
        return word not in ("passed", "running", "stale", "not run", "new")

    def _hold_live(self, case_ids: list[str], reason: str) -> list[str]:
        """A change's runs: live ones over `confirm_live_above` wait, stale, for `run(which="affected", confirm=…)`."""
        live = self._live(case_ids)
        if len(live) <= self.confirm_live_above:
            return case_ids
        held = set(live)
        for case_id in live:
            state = self.workbench.cases[case_id]
            state.stale, state.reason = True, f"held: {reason}; {len(live)} live runs wait for run(which='affected', confirm=…)"
            self.workbench._emit(CaseUpdated(case_id))
        self._say(f"held {len(live)} live re-runs for confirmation")
        return [i for i in case_ids if i not in held]

    def _say(self, what: str) -> None:
        if self.activity is not None:
            self.activity.add(self.client(), what)

    # --- finding cases ----------------------------------------------------------------------------

    def _resolve(self, query: str) -> str:
        if not isinstance(query, str) or not query.strip() or len(query) > 2000 or "\x00" in query:
            raise ToolError("a case is named by its id (as `list_cases` gives it), its end after a `/` or `::`, or its eval_id")
        found = Discovery(cases=[s.ref for s in self.workbench.cases.values()]).resolve(query.strip())
        if not found:
            near = [i for i in self.workbench.cases if query.strip().lower() in i.lower()][:5]
            raise ToolError(f"no case {query!r} here" + (f"; ids that hold it: {', '.join(near)}" if near else
                            ": `list_cases` lists them, and a filter narrows them (`list_cases(\"part of an id\")`)"))
        if len(found) > 1:
            shown = ", ".join(ref.id for ref in found[:5])
            raise ToolError(f"{query!r} names {len(found)} cases ({shown}{'…' if len(found) > 5 else ''}): give the whole id")
        return found[0].id

    def _facts(self, state: CaseState) -> CaseFacts:
        run = state.run
        files = self.workbench.index.get(state.ref.id)
        agent = run.agent.label if run is not None and run.agent is not None else (
            family_of(state.ref).named_agent(state.ref) or (files.agent_label if files else "") or "")
        layers = tuple(s.layer for s in run.diff.layers if s.status == "changed") if run is not None and run.diff else ()
        return CaseFacts(state.ref.id, self._word(state)[0], agent, self.triage.label_of(state.ref.id) or "",
                         run.result.mode if run is not None else "", layers)

    def _line(self, state: CaseState) -> dict[str, Any]:
        """One case in a list: id, status, why it last ran, and what diverged first (a kept verdict: from
        which run, and when)."""
        run = state.run
        word, kept = self._word(state)
        item: dict[str, Any] = {"id": state.ref.id, "status": word}
        if state.reason:
            item["why"] = cut(state.reason, 300)
        if run is not None:
            if run.agent is not None:
                item["agent"] = run.agent.label
            if run.result.error:
                item["error"] = cut(run.result.located_error, 600)
            lead = run.diff.first_divergence if run.diff is not None else None
            if lead is not None and state.failing:
                item["first_divergence"] = cut(lead.summary, 300)
            if run.result.seconds is not None:
                item["seconds"] = round(run.result.seconds, 3)
        elif kept is not None:
            item["kept"] = kept.said()
            if word != kept.status:
                item["was"] = kept.status
            if kept.error:
                item["error"] = cut(kept.error, 600)
            elif kept.first_divergence and kept.status != "passed":
                item["first_divergence"] = cut(kept.first_divergence, 300)
        return item

    # --- the tools --------------------------------------------------------------------------------

    async def status(self) -> dict[str, Any]:
        await self.ready()
        states = list(self.workbench.cases.values())
        counts: dict[str, int] = {}
        changed, reran = [], 0
        for state in states:
            word, _ = self._word(state)
            counts[word] = counts.get(word, 0) + 1
            now = (word, state.run)
            before = self._seen.get(state.ref.id)
            if before is not None and (before[0] != word or before[1] is not state.run) and word not in ("running", "stale"):
                if before[0] != word:
                    changed.append({"id": state.ref.id, "was": before[0], "now": word, "why": cut(state.reason, 300)})
                else:
                    reran += 1
            if word not in ("running", "stale"):
                self._seen[state.ref.id] = now
        unrun = [s.ref.id for s in states if s.run is None and not s.running]
        kept = [self.kept.verdicts[i] for i in unrun if i in self.kept.verdicts]
        answer: dict[str, Any] = {
            "cases": len(states),
            "counts": dict(sorted(counts.items())),
            "mode": self.workbench.options.mode or "per case (eval sets live, recorded conformance cases replay)",
            "watching": self.watching and not self.workbench.paused,
            "running": [s.ref.id for s in states if s.running][:50],
            "stale": [s.ref.id for s in states if s.stale and not s.running][:50],
            "changed_since_last_status": changed[:100],  # a verdict that is not what it was at the last call
            "reran_unchanged_since_last_status": reran,
        }
        if unrun:
            newest = max(kept, key=lambda k: k.run) if kept else None  # kept runs are named by when they started
            answer["not_run_in_this_session"] = {
                "cases": len(unrun),
                **({"kept_verdicts": len(kept), "newest_kept_run": newest.said()} if newest is not None else {}),
                "never_run": len(unrun) - len(kept),
                "run_all_would_take": self._cost_of(list(self.workbench.cases)),
                "note": ("their counts above are the kept runs' verdicts (list_cases shows each one's run and time); "
                         if kept else "") + "run(which='all') runs every case now",
            }
        if self.workbench.errors:
            answer["load_errors"] = [{"file": e.file, "line": e.line, "message": cut(e.message, 300)} for e in self.workbench.errors[:20]]
        if not states:
            answer["hint"] = (f"no eval cases under {', '.join(self._shown(p) for p in self.workbench.paths)}: agentdiff reads EvalSet files "
                              "(*.evalset.json, *.test.json), conformance cases (spec.yaml), `adk test` fixtures and agents-cli datasets; "
                              "start the server in the project (or give it the project's folder: `agentdiff mcp PATH`)")
            if self.workbench.notes:
                answer["notes"] = self.workbench.notes[:5]
        return {**answer, **self._said()}

    def _shown(self, path: Path) -> str:
        try:
            return str(path.resolve().relative_to(self.workbench.root.resolve())) or "."
        except ValueError:
            return str(path)

    def _cost_of(self, ids: Sequence[str], mode: Optional[str] = None) -> str:
        free = [i for i in ids if self._free(i, mode)]
        live = self._live(ids, mode)
        said = f"{len(free)} without a model call (replays, traced conversations); " if free else ""
        return said + (self._estimate(live) if live else "no live run")

    async def list_cases(self, filter: str = "", limit: int = 200, offset: int = 0) -> dict[str, Any]:
        await self.ready()
        error = parse_error(filter) if filter else None
        if error:
            raise ToolError(error)
        picked = [s for s in self.workbench.cases.values() if not filter or matches(filter, self._facts(s))]
        limit = max(1, min(int(limit), 1000))
        offset = max(0, int(offset))
        page = picked[offset:offset + limit]
        answer = {"total": len(picked), "cases": [self._line(s) for s in page],
                  **({"offset": offset} if offset else {}), **({"next_offset": offset + limit} if offset + limit < len(picked) else {})}
        if not picked and self.workbench.cases and any(s.run is None and not s.running for s in self.workbench.cases.values()):
            answer["note"] = "some cases have not run in this session and have no kept verdict: run(which='all') runs them"
        return answer

    async def run(self, cases: Optional[Sequence[str]] = None, which: Optional[str] = None, mode: Optional[str] = None,
                  timeout: float = 50.0, confirm: Optional[str] = None, progress: Optional[Progress] = None) -> dict[str, Any]:
        """Run cases, in `mode` for this call only (None: each case's own: recorded ones replay, others live)."""
        await self.ready()
        if (cases is None) == (which is None):
            raise ToolError(f"give either `cases` (ids) or `which` ({', '.join(WHICH)})")
        if which is not None and which not in WHICH:
            raise ToolError(f"`which` is one of {', '.join(WHICH)}")
        if mode is not None and mode not in ("replay", "live"):
            raise ToolError("`mode` is replay or live (or leave it out: each case's own)")
        ids, waiting, why = await self._selection(cases, which)
        unrecorded = [i for i in ids if mode == "replay" and not self._free(i, "replay")]
        if unrecorded and len(unrecorded) == len(ids) and not waiting:
            raise ToolError(f"nothing to replay: {len(unrecorded)} of these cases have no recordings (EvalSet and agents-cli cases run "
                            "live); leave `mode` out to run each case its own way")
        ids = [i for i in ids if i not in set(unrecorded)]
        live = self._live(ids, mode)
        if len(live) > self.confirm_live_above:
            estimate = self._estimate(live)
            if confirm != estimate:
                raise ToolError(f"{len(live)} cases would run live, over confirm_live_above ({self.confirm_live_above}): {estimate}. "
                                f"Ask the user; to run them, call run again with confirm={json.dumps(estimate)}; or run fewer, "
                                "or only the recorded ones (mode='replay')")
        reason = f"re-run by {self.client()}: {why}" + (f" ({mode})" if mode else "")
        if ids:
            self.workbench.run(ids, reason, mode)
            self._say(f"re-ran {len(ids)} case{'s' if len(ids) != 1 else ''}")
        everything = list(dict.fromkeys([*waiting, *ids]))
        started = time.monotonic()
        await self._wait(everything, max(0.1, min(float(timeout), 3600.0)), progress)
        self._ran = {i: s.run for i, s in self.workbench.cases.items()}
        states = [self.workbench.cases[i] for i in everything if i in self.workbench.cases]
        still = {s.ref.id for s in states if s.running or s.stale}
        shown = [s for s in states if s.ref.id not in still]
        return {
            "ran": len(everything),
            "done": len(everything) - len(still),
            "seconds": round(time.monotonic() - started, 3),
            "passed": sum(1 for s in states if status_of(s) == "passed"),
            "failing": sum(1 for s in states if s.failing and not s.running and not s.stale),
            **({"still_running": [i for i in everything if i in still][:100],
                "next": "what still runs goes on: status() or run(which='affected') later gives its verdicts"} if still else {}),
            "cases": [{k: v for k, v in self._line(s).items() if not (k == "why" and v == reason)} for s in shown[:100]],  # this call's: said once
            **({"why": reason} if ids else {}),
            **({"more_cases": len(shown) - 100} if len(shown) > 100 else {}),
            **({"not_replayed": {"cases": len(unrecorded), "why": "no recordings to replay: leave `mode` out to run them live"}}
               if unrecorded else {}),
            **({"note": "nothing was affected: no case ran or went stale since the last run call"} if which == "affected" and not everything else {}),
            **self._said(),
        }

    async def _wait(self, ids: list[str], timeout: float, progress: Optional[Progress]) -> None:
        """Until `ids` are done or `timeout` has passed; every `PROGRESS_EVERY` seconds meanwhile, how
        many are done (a client's request timeout starts again at each)."""
        deadline, sent = time.monotonic() + timeout, 0.0
        while True:
            left = deadline - time.monotonic()
            step = left if progress is None else min(left, PROGRESS_EVERY)
            if await self.workbench.wait_for(ids, max(0.0, step)) or deadline - time.monotonic() <= 0:
                return
            states = [self.workbench.cases[i] for i in ids if i in self.workbench.cases]
            done = sum(1 for s in states if not s.running and not s.stale)
            running = [s.ref.id.rsplit("/", 1)[-1] for s in states if s.running][:3]
            sent = max(sent + 0.001, float(done))  # MCP's progress only grows: a case queued again never takes it back
            with contextlib.suppress(Exception):  # a client gone, or one that asked for no progress
                await progress(sent, len(ids), f"{done} of {len(ids)} done" + (f"; running {', '.join(running)}" if running else ""))

    async def _selection(self, cases: Optional[Sequence[str]], which: Optional[str]) -> tuple[list[str], list[str], str]:
        """(the cases to start, those already running or run since the last look that are waited for, why)."""
        states = self.workbench.cases
        if which == "affected":  # what an edit touched: already re-run, re-running, or stale (held, or while paused)
            await self._edits_seen()
            busy = self.workbench.busy
            waiting = [i for i, s in states.items() if s.running or busy(i)
                       or (s.run is not None and s.run is not self._ran.get(i) and not s.stale)]
            start = [i for i, s in states.items() if s.stale and not s.running and i not in waiting]
            return start, waiting, "affected by a change"
        if which == "failed":  # this session's failures, and kept ones of cases not run since
            return [i for i, s in states.items() if self._failing(s) and not s.running], [], "failing"
        if which == "all":
            return list(states), [], "all"
        return list(dict.fromkeys(self._resolve(c) for c in cases or ())), [], "asked for"

    async def _edits_seen(self) -> None:
        """An edit saved just before `run("affected")`: the watcher's turn to see it. When a file some
        case depends on changed since the last look and no case is stale or running yet, wait (a
        little) for the watcher to deliver it."""
        mark, self._mark = self._mark, time.time()
        await asyncio.sleep(SETTLE)
        if not self.watching:  # nothing watches: the files edited since the last look are the changes
            await self.workbench.on_changes(await asyncio.to_thread(self._edited_since, mark, True))
        if self.workbench.paused or any(s.stale or s.running or s.run is not self._ran.get(i) for i, s in self.workbench.cases.items()):
            return
        edited = bool(self._edited_since(mark))
        deadline = time.monotonic() + (UNSEEN_WAIT if edited else 0)
        while time.monotonic() < deadline and not any(s.stale or s.running or s.run is not self._ran.get(i)
                                                      for i, s in self.workbench.cases.items()):
            await asyncio.sleep(0.02)

    def owns(self, path: Path) -> bool:
        """Whether `path` is inside the project (the only place any answer reads)."""
        try:
            path.resolve().relative_to(self.workbench.root.resolve())
        except ValueError:
            return False
        return True
