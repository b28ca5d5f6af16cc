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
from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError, sha256_of
from agentdiff.core.diff.case import CaseDiff
from agentdiff.core.formats.source_file import display_path
from agentdiff.core.project.discovery import ConformanceCaseRef, Discovery
from agentdiff.core.reports.diff_json import diff_to_dict, divergence_to_dict
from agentdiff.core.reports.estimate import from_results
from agentdiff.core.workbench.events import CaseState
from agentdiff.core.workbench.triage import Triage
from agentdiff.core.workbench.workbench import Workbench

from ..case_filter import CaseFacts, matches, parse_error
from .activity import Activity

MAX_TEXT = 4000  # characters of one string in an answer (a response, a preview, a file's diff)
TURNS_PER_PAGE = 3
SETTLE = 0.03  # seconds the watcher is given to see an edit made just before `run("affected")`
UNSEEN_WAIT = 1.5  # at most this much longer when a file changed since the last look and no case went stale yet
WHICH = ("affected", "failed", "all")


class ToolError(Exception):
    """A request that cannot be met, with what to do instead (shown to the model as the tool's error)."""


def cut(text: Optional[str], limit: int = MAX_TEXT) -> Optional[str]:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit:,} more characters]"


def _cut_all(value: Any) -> Any:
    if isinstance(value, str):
        return cut(value)
    if isinstance(value, list):
        return [_cut_all(v) for v in value]
    if isinstance(value, dict):
        return {k: _cut_all(v) for k, v in value.items()}
    return value


def status_of(state: CaseState) -> str:
    """The filter's status words: running, stale, not run, or the verdict."""
    if state.running:
        return "running"
    if state.stale:
        return "stale"
    return state.status.value if state.status is not None else "not run"


@dataclass
class AssistSession:
    workbench: Workbench
    triage: Triage
    client: Callable[[], str] = lambda: "assistant"  # the MCP client's name, once it has said it
    confirm_live_above: int = 50
    activity: Optional[Activity] = None
    _seen: dict[str, tuple[str, int]] = field(default_factory=dict)  # case → (status, run count) at the last `status`
    _runs: dict[str, int] = field(default_factory=dict)  # case → runs finished this session
    _plans: dict[str, AcceptPlan] = field(default_factory=dict)
    _mark: float = field(default_factory=time.time)  # when `run` last looked for edits

    def __post_init__(self) -> None:
        self.workbench.subscribe(self._on_event)

    def _on_event(self, event: Any) -> None:
        case_id = getattr(event, "case_id", None)
        state = self.workbench.cases.get(case_id) if case_id else None
        if state is not None and not state.running and state.run is not None and not state.stale:
            self._runs[case_id] = self._runs.get(case_id, 0) + 1

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
        agent = run.agent.label if run is not None and run.agent is not None else (
            state.ref.case.spec.agent if isinstance(state.ref, ConformanceCaseRef) else "")
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
            now = (status_of(state), self._runs.get(state.ref.id, 0))
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
            "watching": not self.workbench.paused,
            "running": [s.ref.id for s in states if s.running][:50],
            "stale": [s.ref.id for s in states if s.stale and not s.running][:50],
            "changed_since_last_status": changed[:100],  # a verdict that is not what it was at the last call
            "reran_unchanged_since_last_status": reran,
            "load_errors": [{"file": e.file, "line": e.line, "message": cut(e.message, 300)} for e in self.workbench.errors[:20]],
            **({"notes": self.workbench.notes[:5]} if not states and self.workbench.notes else {}),
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
                  timeout: float = 120.0, confirm: Optional[str] = None) -> dict[str, Any]:
        if (cases is None) == (which is None):
            raise ToolError(f"give either `cases` (ids) or `which` ({', '.join(WHICH)})")
        if which is not None and which not in WHICH:
            raise ToolError(f"`which` is one of {', '.join(WHICH)}")
        if mode is not None and mode not in ("replay", "live"):
            raise ToolError("`mode` is replay or live")
        if mode is not None and mode != (self.workbench.options.mode or None):
            self.workbench.options = self.workbench.options.with_mode(mode)
        waiting: list[str] = []
        if which == "affected":
            await self._edits_seen()
            states = self.workbench.cases.values()
            waiting = [s.ref.id for s in states if s.running]
            ids = [s.ref.id for s in states if s.stale and not s.running]
            why = "affected by a change"
        elif which == "failed":
            ids, why = [s.ref.id for s in self.workbench.cases.values() if s.failing and not s.running], "failing"
        elif which == "all":
            ids, why = list(self.workbench.cases), "all"
        else:
            ids, why = list(dict.fromkeys(self._resolve(c) for c in cases or ())), "asked for"
        live = [i for i in ids if not self.workbench.replays(i) and (self.workbench.options.mode or "live") != "replay"]
        if len(live) > self.confirm_live_above:
            estimate = from_results((self.workbench.cases[i].run.result if self.workbench.cases[i].run else None) for i in live).line()
            if confirm != estimate:
                raise ToolError(f"{len(live)} cases would run live, over confirm_live_above ({self.confirm_live_above}): {estimate}. "
                                f"To run them, call run again with confirm={json.dumps(estimate)}; or run fewer, or mode='replay'")
        tasks = self.workbench.run(ids, f"re-run by {self.client()}: {why}") if ids else []
        watched = [self.workbench._tasks[i] for i in waiting if i in self.workbench._tasks]
        if ids:
            self._say(f"re-ran {len(ids)} case{'s' if len(ids) != 1 else ''}")
        started = time.monotonic()
        pending = [t for t in [*tasks, *watched] if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=max(0.1, min(float(timeout), 3600.0)))
        done_ids = [*waiting, *ids]
        states = [self.workbench.cases[i] for i in done_ids if i in self.workbench.cases]
        still = [s.ref.id for s in states if s.running or s.stale]
        return {
            "ran": len(done_ids),
            "seconds": round(time.monotonic() - started, 3),
            "passed": sum(1 for s in states if status_of(s) == "passed"),
            "failing": sum(1 for s in states if s.failing and not s.running and not s.stale),
            "still_running": still[:100],
            "cases": [self._line(s) for s in states[:200]],
            **({"note": "nothing was affected: no case went stale since its last run"} if which == "affected" and not done_ids else {}),
        }

    async def _edits_seen(self) -> None:
        """An edit saved just before `run("affected")`: the watcher's turn to see it. When a file some
        case depends on changed since the last look and no case is stale or running yet, wait (a
        little) for the watcher to deliver it."""
        mark, self._mark = self._mark, time.time()
        await asyncio.sleep(SETTLE)
        if self.workbench.paused or any(s.stale or s.running for s in self.workbench.cases.values()):
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
        while time.monotonic() < deadline and not any(s.stale or s.running for s in self.workbench.cases.values()):
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
        if turn is not None:
            turns = [t for t in turns if t["turn_index"] == turn]
            if not turns:
                raise ToolError(f"{case_id} has no turn {turn} (its turns: 1 to {len(run.diff.turns)})")
        if layer is not None:
            if layer not in ("request", "tool_calls", "response", "nodes", "session"):
                raise ToolError("`layer` is one of request, tool_calls, response, nodes, session")
            turns = [{k: v for k, v in t.items() if k in ("turn_index", "user_text", layer)} for t in turns]
            if layer != "session":
                document.pop("session", None)
        pages = max(1, -(-len(turns) // TURNS_PER_PAGE))
        page = max(0, min(int(page), pages - 1))
        document["turns"] = turns[page * TURNS_PER_PAGE:(page + 1) * TURNS_PER_PAGE]
        document["page"], document["pages"] = page, pages
        if page + 1 < pages:
            document["next_page"] = page + 1
        return _cut_all(document)

    def explain(self, case: str) -> dict[str, Any]:
        case_id = self._resolve(case)
        state, run = self._run_of(case_id)
        answer: dict[str, Any] = {"id": case_id, "status": status_of(state), "why_it_ran": cut(state.reason, 300)}
        if run.result.error:
            answer["error"] = cut(run.result.located_error, 1500)
        diff: Optional[CaseDiff] = run.diff
        if diff is not None and diff.first_divergence is not None:
            answer["first_divergence"] = _cut_all(divergence_to_dict(diff.first_divergence))
        failing = [m for m in run.result.metrics if m.status.value == "failed"]
        if failing:
            answer["failing_metrics"] = [{"name": m.name, "score": m.score, "threshold": m.threshold, "reason": cut(m.reason, 800)}
                                         for m in failing]
        history = self.workbench.history
        passed = history.last_passed(case_id) if history is not None else None
        if passed is None:
            answer["since_last_pass"] = "no passing run of this case is kept"
        else:
            changes = self.workbench.snapshots.changed_since(passed["read"])
            answer["since_last_pass"] = {"when": time.strftime("%Y-%m-%d %H:%M", time.localtime(passed.get("time", 0))),
                                         "files_read": len(passed["read"]),
                                         "changed": [{"file": c.path, "diff": cut(c.diff, 3000)} for c in changes[:10]]}
        return answer

    async def accept(self, case: str, turn: Optional[int] = None, layer: Optional[str] = None, run: Optional[int] = None) -> dict[str, Any]:
        case_id = self._resolve(case)
        state, case_run = self._run_of(case_id)
        if state.running:
            raise ToolError(f"{case_id} is running: accept it once its run is done")
        if layer is not None and turn is None:
            raise ToolError("a `layer` is accepted within a `turn`: give both")
        scope = "layer" if layer is not None else "turn" if turn is not None else "case"
        repeat = None if run is None else int(run) - 1
        try:
            plan = await self.workbench.plan_accept(case_id, scope, turn, layer, repeat, assistant=self.client())
        except (ValueError, BaselineWriteError) as exc:
            raise ToolError(f"nothing to accept: {exc}") from None
        digest = hashlib.sha256(json.dumps([plan.description, plan.preview, [(str(w.path), w.expected_sha256) for w in plan.writes]])
                                .encode()).hexdigest()[:16]
        self._plans[digest] = plan
        root = self.workbench.root
        return {"plan_digest": digest, "description": plan.description, "files": [display_path(w.path, root) for w in plan.writes],
                "preview": cut(plan.preview, 12000),
                "next": f"show this plan to the user; apply(plan_digest={digest!r}) writes it (one journal step, undoable)"}

    async def apply(self, plan_digest: str) -> dict[str, Any]:
        plan = self._plans.get(plan_digest) if isinstance(plan_digest, str) else None
        if plan is None:
            raise ToolError("no such plan: call accept first, and pass the plan_digest it returned")
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
        self._say(f"accepted {plan.description}")
        return {"written": entry.reason, "journal_step": entry.id, "files": [f["path"] for f in entry.files],
                "undo": "undo() takes it back (so do `agentdiff undo` and the TUI's z)"}

    async def step(self, verb: str) -> dict[str, Any]:
        try:
            entry = await (self.workbench.undo() if verb == "undo" else self.workbench.redo())
        except (BaselineConflict, BaselineWriteError) as exc:
            raise ToolError(str(exc)) from None
        if entry is None:
            return {"done": False, "said": f"nothing to {verb}"}
        self._say(f"{verb}: {entry.reason}")
        return {"done": True, "said": f"{'undone' if verb == 'undo' else 'redone'}: {entry.reason}",
                "files": [f["path"] for f in entry.files], **({"written_by": entry.author} if entry.author else {})}

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
