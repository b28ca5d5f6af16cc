"""What a coding agent can ask of the workbench (`agentdiff mcp`'s tools), as JSON-able answers: the
same workbench as the TUI's (warm workers, the watcher, the journal), without a screen.

Every answer is bounded: long texts are cut (`MAX_TEXT`), a diff comes a few turns at a time
(`diff(page=…)`), lists stop at `limit`. A request that cannot be met raises `ToolError` with what
to do instead, which the server turns into a tool error the model reads.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from agentdiff.core.baselines.accept import AcceptPlan
from agentdiff.core.baselines.documents import RecordError
from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError, sha256_of
from agentdiff.core.diff.case import CaseDiff
from agentdiff.core.formats.source_file import display_path
from agentdiff.core.project.discovery import Discovery
from agentdiff.core.project.family import family_of
from agentdiff.core.diff.variants import grid_dict
from agentdiff.core.reports.diff_json import diff_to_dict, divergence_to_dict
from agentdiff.core.reports.json_report import pass_rate_dict
from agentdiff.core.run.grid import run_grid
from agentdiff.core.reports.estimate import from_results
from agentdiff.core.workbench.events import CaseState, CaseUpdated
from agentdiff.core.workbench.triage import Triage
from agentdiff.core.workbench.workbench import Workbench

from ..case_filter import CaseFacts, matches, parse_error
from .activity import Activity
from .answers import TURNS_PER_PAGE, ToolError, bounded, cut, status_of

SETTLE = 0.03  # seconds the watcher is given to see an edit made just before `run("affected")`
UNSEEN_WAIT = 1.5  # at most this much longer when a file changed since the last look and no case went stale yet
WHICH = ("affected", "failed", "all")


@dataclass
class AssistSession:
    workbench: Workbench
    triage: Triage
    client: Callable[[], str] = lambda: "assistant"  # the MCP client's name, once it has said it
    confirm_live_above: int = 50
    activity: Optional[Activity] = None
    watching: bool = True
    _seen: dict[str, tuple[str, int]] = field(default_factory=dict)  # case → (status, id of its run) at the last `status`
    _ran: dict[str, int] = field(default_factory=dict)  # case → id of its run when `run` last looked
    _plans: dict[str, tuple[AcceptPlan, str, object]] = field(default_factory=dict)  # digest → (plan, case, the run it is of)
    _mark: float = field(default_factory=time.time)  # when `run` last looked for edits
    _notices: list[str] = field(default_factory=list)  # the engine's notices since they were last said

    def __post_init__(self) -> None:
        self.workbench.subscribe(self._on_event)
        self.workbench.hold_runs = self._hold_live  # type: ignore[method-assign]
        self._ran = {i: id(s.run) for i, s in self.workbench.cases.items()}

    def _on_event(self, event: Any) -> None:
        message = getattr(event, "message", None)
        if isinstance(message, str):  # a Notice: an engine failure on a case, a write's news
            self._notices = [*self._notices[-19:], cut(message, 500)]

    def _said(self) -> dict[str, Any]:
        from agentdiff.core.formats.set_aside import take_notices

        notices, self._notices = [*self._notices, *take_notices()], []
        return {"notices": notices[-20:]} if notices else {}

    def _live(self, ids: Sequence[str]) -> list[str]:
        return [i for i in ids if not self.workbench.replays(i) and (self.workbench.options.mode or "live") != "replay"]

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
            raise ToolError(f"no case {query!r} here: `list_cases` lists them (a filter narrows them: `list_cases(\"refund\")`)")
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
        return CaseFacts(state.ref.id, status_of(state), agent, self.triage.label_of(state.ref.id) or "",
                         run.result.mode if run is not None else "", layers)

    def _line(self, state: CaseState) -> dict[str, Any]:
        """One case in a list: id, status, why it last ran, and what diverged first."""
        run = state.run
        item: dict[str, Any] = {"id": state.ref.id, "status": status_of(state)}
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
            item["seconds"] = round(run.result.seconds, 3) if run.result.seconds is not None else None
        return item

    # --- the tools --------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        states = list(self.workbench.cases.values())
        counts: dict[str, int] = {}
        for state in states:
            counts[status_of(state)] = counts.get(status_of(state), 0) + 1
        changed, reran = [], 0
        for state in states:
            now = (status_of(state), id(state.run))
            before = self._seen.get(state.ref.id)
            if before is not None and before != now and now[0] not in ("running", "stale"):
                if before[0] != now[0]:
                    changed.append({"id": state.ref.id, "was": before[0], "now": now[0], "why": cut(state.reason, 300)})
                else:
                    reran += 1
            if now[0] not in ("running", "stale"):
                self._seen[state.ref.id] = now
        return {
            "cases": len(states),
            "counts": dict(sorted(counts.items())),
            "mode": self.workbench.options.mode or "per case (eval sets live, recorded conformance cases replay)",
            "watching": self.watching and not self.workbench.paused,
            "running": [s.ref.id for s in states if s.running][:50],
            "stale": [s.ref.id for s in states if s.stale and not s.running][:50],
            "changed_since_last_status": changed[:100],  # a verdict that is not what it was at the last call
            "reran_unchanged_since_last_status": reran,
            "load_errors": [{"file": e.file, "line": e.line, "message": cut(e.message, 300)} for e in self.workbench.errors[:20]],
            **({"notes": self.workbench.notes[:5]} if not states and self.workbench.notes else {}),
            **self._said(),
        }

    def list_cases(self, filter: str = "", limit: int = 200, offset: int = 0) -> dict[str, Any]:
        error = parse_error(filter) if filter else None
        if error:
            raise ToolError(error)
        picked = [s for s in self.workbench.cases.values() if not filter or matches(filter, self._facts(s))]
        limit = max(1, min(int(limit), 1000))
        offset = max(0, int(offset))
        page = picked[offset:offset + limit]
        return {"total": len(picked), "offset": offset, "cases": [self._line(s) for s in page],
                **({"next_offset": offset + limit} if offset + limit < len(picked) else {})}

    async def run(self, cases: Optional[Sequence[str]] = None, which: Optional[str] = None, mode: Optional[str] = None,
                  timeout: float = 50.0, confirm: Optional[str] = None) -> dict[str, Any]:
        if (cases is None) == (which is None):
            raise ToolError(f"give either `cases` (ids) or `which` ({', '.join(WHICH)})")
        if which is not None and which not in WHICH:
            raise ToolError(f"`which` is one of {', '.join(WHICH)}")
        if mode is not None and mode not in ("replay", "live"):
            raise ToolError("`mode` is replay or live")
        before = self.workbench.options
        if mode is not None and mode != (before.mode or None):
            self.workbench.options = before.with_mode(mode)  # for the checks below; put back when refused
        try:
            ids, waiting, why = await self._selection(cases, which)
            live = self._live(ids)
            if len(live) > self.confirm_live_above:
                results = ((self.workbench.cases[i].run.result if self.workbench.cases[i].run else None) for i in live)
                estimate = from_results(results, self.workbench.options.prices).line()
                if confirm != estimate:
                    raise ToolError(f"{len(live)} cases would run live, over confirm_live_above ({self.confirm_live_above}): {estimate}. "
                                    f"Ask the user; to run them, call run again with confirm={json.dumps(estimate)}; or run fewer, "
                                    "or mode='replay'")
        except ToolError:
            self.workbench.options = before
            raise
        if ids:
            self.workbench.run(ids, f"re-run by {self.client()}: {why}")
            self._say(f"re-ran {len(ids)} case{'s' if len(ids) != 1 else ''}")
        everything = list(dict.fromkeys([*waiting, *ids]))
        started = time.monotonic()
        await self.workbench.wait_for(everything, max(0.1, min(float(timeout), 3600.0)))  # a case re-run meanwhile too
        self._ran = {i: id(s.run) for i, s in self.workbench.cases.items()}
        states = [self.workbench.cases[i] for i in everything if i in self.workbench.cases]
        still = [s.ref.id for s in states if s.running or s.stale]
        return {
            "ran": len(everything),
            "seconds": round(time.monotonic() - started, 3),
            "passed": sum(1 for s in states if status_of(s) == "passed"),
            "failing": sum(1 for s in states if s.failing and not s.running and not s.stale),
            "still_running": still[:100],
            "cases": [self._line(s) for s in states[:100]],
            **({"more_cases": len(states) - 100} if len(states) > 100 else {}),
            **({"note": "nothing was affected: no case ran or went stale since the last run call"} if which == "affected" and not everything else {}),
            **self._said(),
        }

    async def _selection(self, cases: Optional[Sequence[str]], which: Optional[str]) -> tuple[list[str], list[str], str]:
        """(the cases to start, those already running or run since the last look that are waited for, why)."""
        states = self.workbench.cases
        if which == "affected":  # what an edit touched: already re-run, re-running, or stale (held, or while paused)
            await self._edits_seen()
            busy = self.workbench.busy
            waiting = [i for i, s in states.items() if s.running or busy(i)
                       or (s.run is not None and id(s.run) != self._ran.get(i) and not s.stale)]
            start = [i for i, s in states.items() if s.stale and not s.running and i not in waiting]
            return start, waiting, "affected by a change"
        if which == "failed":
            return [i for i, s in states.items() if s.failing and not s.running], [], "failing"
        if which == "all":
            return list(states), [], "all"
        return list(dict.fromkeys(self._resolve(c) for c in cases or ())), [], "asked for"

    async def _edits_seen(self) -> None:
        """An edit saved just before `run("affected")`: the watcher's turn to see it. When a file some
        case depends on changed since the last look and no case is stale or running yet, wait (a
        little) for the watcher to deliver it."""
        mark, self._mark = self._mark, time.time()
        await asyncio.sleep(SETTLE)
        if self.workbench.paused or any(s.stale or s.running or id(s.run) != self._ran.get(i) for i, s in self.workbench.cases.items()):
            return
        edited = False
        for path in self.workbench.index.paths():
            try:
                if path.stat().st_mtime >= mark:
                    edited = True
                    break
            except OSError:
                continue
        deadline = time.monotonic() + (UNSEEN_WAIT if edited else 0)
        while time.monotonic() < deadline and not any(s.stale or s.running or id(s.run) != self._ran.get(i)
                                                      for i, s in self.workbench.cases.items()):
            await asyncio.sleep(0.02)

    def _run_of(self, case_id: str):
        state = self.workbench.cases[case_id]
        if state.run is None:
            raise ToolError(f"{case_id} has not run yet: `run(cases=[{case_id!r}])` runs it")
        return state, state.run

    def diff(self, case: str, turn: Optional[int] = None, layer: Optional[str] = None, page: int = 0) -> dict[str, Any]:
        case_id = self._resolve(case)
        state, run = self._run_of(case_id)
        if run.diff is None:
            raise ToolError(f"{case_id} has no diff: its run failed ({cut(run.result.located_error, 500)})")
        document = diff_to_dict(run.diff, {"id": case_id, "source": state.ref.source, "status": status_of(state)},
                                f"its {run.result.mode} run in this session")
        turns = document.pop("turns")
        if turn is not None:  # 1-based, as the CLI's --turn and every summary ("turn 1 · …") count them
            turns = [t for t in turns if t["turn_index"] == turn - 1]
            if not turns:
                raise ToolError(f"{case_id} has no turn {turn} (its turns: 1 to {len(run.diff.turns)})")
        if layer is not None:
            if layer not in ("request", "tool_calls", "response", "nodes", "session"):
                raise ToolError("`layer` is one of request, tool_calls, response, nodes, session")
            turns = [{k: v for k, v in t.items() if k in ("turn_index", "user_text", layer)} for t in turns]
            if layer != "session":
                document.pop("session", None)
        made = run_grid(run) if page == 0 else None  # a case run more than once: its runs' variants side by side
        if made is not None:
            document["variants"] = grid_dict(made)
        if run.result.pass_rate is not None:
            document["pass_rate"] = pass_rate_dict(run.result.pass_rate)
        pages = max(1, -(-len(turns) // TURNS_PER_PAGE))
        page = max(0, min(int(page), pages - 1))
        document["turns"] = turns[page * TURNS_PER_PAGE:(page + 1) * TURNS_PER_PAGE]
        document["page"], document["pages"] = page, pages
        if page + 1 < pages:
            document["next_page"] = page + 1
        return bounded(document)

    def explain(self, case: str) -> dict[str, Any]:
        case_id = self._resolve(case)
        state, run = self._run_of(case_id)
        answer: dict[str, Any] = {"id": case_id, "status": status_of(state), "why_it_ran": cut(state.reason, 300)}
        if run.result.error:
            answer["error"] = cut(run.result.located_error, 1500)
        diff: Optional[CaseDiff] = run.diff
        if diff is not None and diff.first_divergence is not None:
            answer["first_divergence"] = bounded(divergence_to_dict(diff.first_divergence))
        failing = [m for m in run.result.metrics if m.status.value == "failed"]
        if failing:
            answer["failing_metrics"] = [{"name": m.name, "score": m.score, "threshold": m.threshold, "reason": cut(m.reason, 800)}
                                         for m in failing]
        history = self.workbench.history
        passed = history.last_passed(case_id) if history is not None else None
        if passed is None:
            answer["since_last_pass"] = "no passing run of this case is kept"
        else:
            read = {path: digest for path, digest in passed["read"].items() if self.owns(self.workbench.root / path)}
            changes = self.workbench.snapshots.changed_since(read)
            answer["since_last_pass"] = {"when": time.strftime("%Y-%m-%d %H:%M", time.localtime(passed.get("time", 0))),
                                         "files_read": len(passed["read"]),
                                         "changed": [{"file": c.path, "diff": cut(c.diff, 3000)} for c in changes[:10]]}
        return answer

    async def accept(self, case: str, turn: Optional[int] = None, layer: Optional[str] = None, run: Optional[int] = None) -> dict[str, Any]:
        case_id = self._resolve(case)
        state, case_run = self._run_of(case_id)
        if state.running or state.stale:
            raise ToolError(f"{case_id} is {'running' if state.running else 'stale (about to re-run)'}: accept it once its run is done")
        if layer is not None and turn is None:
            raise ToolError("a `layer` is accepted within a `turn`: give both")
        if turn is not None and (not isinstance(turn, int) or turn < 1):
            raise ToolError("`turn` counts from 1, as the diff's summaries do")
        if run is not None and (not isinstance(run, int) or run < 1):
            raise ToolError("`run` counts from 1 (which repeat of a flaky case)")
        scope = "layer" if layer is not None else "turn" if turn is not None else "case"
        try:
            plan = await self.workbench.plan_accept(case_id, scope, None if turn is None else turn - 1, layer,
                                                    None if run is None else run - 1, assistant=self.client())
        except (ValueError, RecordError, BaselineWriteError) as exc:
            said = str(exc)
            raise ToolError(said if said.startswith("nothing to accept") else f"nothing to accept: {said}") from None
        digest = hashlib.sha256(json.dumps([plan.description, plan.preview, [(str(w.path), w.expected_sha256) for w in plan.writes]])
                                .encode()).hexdigest()[:16]
        self._plans[digest] = (plan, case_id, case_run)  # the run itself: an id could be reused by a later run
        while len(self._plans) > 20:  # the oldest plans go: each holds whole files
            self._plans.pop(next(iter(self._plans)))
        root = self.workbench.root
        preview = cut(plan.preview, 12000)
        return {"plan_digest": digest, "description": plan.description, "files": [display_path(w.path, root) for w in plan.writes],
                "preview": preview, **({"preview_cut": True} if preview != plan.preview else {}),
                "next": f"show this plan to the user; apply(plan_digest={digest!r}) writes it (one journal step, undoable)"}

    async def apply(self, plan_digest: str) -> dict[str, Any]:
        planned = self._plans.get(plan_digest) if isinstance(plan_digest, str) else None
        if planned is None:
            raise ToolError("no such plan: call accept first, and pass the plan_digest it returned")
        plan, case_id, planned_run = planned
        state = self.workbench.cases.get(case_id)
        if state is None or state.running or state.stale or state.run is not planned_run:
            self._plans.pop(plan_digest, None)
            raise ToolError(f"the plan is stale: {case_id} ran again (or is running) since it was made; call accept again")
        for write in plan.writes:
            if sha256_of(write.path) != write.expected_sha256:
                self._plans.pop(plan_digest, None)
                raise ToolError(f"the plan is stale: {display_path(write.path, self.workbench.root)} changed since it was made; "
                                "call accept again for a fresh plan")
        try:
            entry = await self.workbench.accept(plan, author=self.client())
        except (BaselineConflict, BaselineWriteError) as exc:
            raise ToolError(str(exc)) from None
        self._plans.pop(plan_digest, None)
        self._say(plan.description.replace("accept ", "accepted ", 1))
        return {"written": entry.reason, "journal_step": entry.id, "files": [f["path"] for f in entry.files],
                "undo": "undo() takes it back (so do `agentdiff undo` and the TUI's z)", **self._said()}

    async def step(self, verb: str) -> dict[str, Any]:
        try:
            entry = await (self.workbench.undo() if verb == "undo" else self.workbench.redo())
        except (BaselineConflict, BaselineWriteError) as exc:
            raise ToolError(str(exc)) from None
        if entry is None:
            return {"done": False, "said": f"nothing to {verb}"}
        self._say(f"{verb}: {entry.reason}")
        return {"done": True, "said": f"{'undone' if verb == 'undo' else 'redone'}: {entry.reason}",
                "files": [f["path"] for f in entry.files], **({"written_by": entry.author} if entry.author else {}), **self._said()}

    def report(self) -> dict[str, Any]:
        """The session's last result of each case, as `run --json` reports them."""
        from agentdiff.core.reports.json_report import report_dict

        results = [s.run.result for s in self.workbench.cases.values() if s.run is not None]
        return report_dict(results, prices=self.workbench.options.prices, load_errors=self.workbench.errors)

    def owns(self, path: Path) -> bool:
        """Whether `path` is inside the project (the only place any answer reads)."""
        try:
            path.resolve().relative_to(self.workbench.root.resolve())
        except ValueError:
            return False
        return True
