"""`agentdiff mcp`'s writes: an accept planned and then applied, the journal's undo, redo and drop, all
in the journal people undo from."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Optional

from agentdiff.core.baselines.documents import RecordError
from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError, sha256_of
from agentdiff.core.formats.source_file import display_path

from .answers import ToolError, cut


class Writes:
    """(A mixin of `AssistSession`: `workbench`, `_resolve`, `_run_of`, `_plans`, `_say`, `_said` and `client` are its.)"""

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
        except BaselineConflict as exc:
            raise ToolError(f"{exc} Here: drop() shows that step, and drop(confirm=<its id>) forgets it once the user "
                            "agrees (its files stay as they are; older steps can then be undone)") from None
        except BaselineWriteError as exc:
            raise ToolError(str(exc)) from None
        if entry is None:
            return {"done": False, "said": f"nothing to {verb}"}
        self._say(f"{verb}: {entry.reason}")
        return {"done": True, "said": f"{'undone' if verb == 'undo' else 'redone'}: {entry.reason}",
                "files": [f["path"] for f in entry.files], **({"written_by": entry.author} if entry.author else {}), **self._said()}


    async def drop(self, confirm: Optional[str] = None) -> dict[str, Any]:
        """The journal's newest step, forgotten (its files stay as they are) when `confirm` is its id."""
        from agentdiff.core.baselines.journal_entries import journal_entries

        applied = [e for e in journal_entries(self.workbench.root) if e.state == "applied"]
        if not applied:
            return {"done": False, "said": "nothing to drop: no applied step in the journal"}
        newest = applied[-1]
        if confirm != newest.id:
            return {"done": False, "step": newest.id, "what": newest.reason, "files": [f["path"] for f in newest.files],
                    **({"written_by": newest.author} if newest.author else {}),
                    "next": f"dropping forgets this step: undo can no longer take it back. Ask the user; then drop(confirm={newest.id!r})"}
        try:
            entry = await self.workbench.drop(confirm)  # that step only: another written meanwhile is not dropped unasked
        except BaselineConflict as exc:
            raise ToolError(str(exc)) from None
        if entry is None:
            return {"done": False, "said": "nothing to drop"}
        self._say(f"dropped from the journal: {entry.reason}")
        return {"done": True, "said": f"dropped (its files stay as they are): {entry.reason}", **self._said()}
