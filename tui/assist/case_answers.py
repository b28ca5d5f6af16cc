"""`agentdiff mcp`'s answers about one case: its diff (lean: what changed, nothing twice) and the
shortest useful explanation of why it fails."""

from __future__ import annotations

import time
from typing import Any, Optional

from agentdiff.core.diff.case import CaseDiff
from agentdiff.core.diff.variants import grid_dict
from agentdiff.core.reports.diff_json import diff_to_dict, divergence_to_dict
from agentdiff.core.reports.json_report import pass_rate_dict
from agentdiff.core.run.grid import run_grid

from .answers import TURNS_PER_PAGE, ToolError, bounded, cut, status_of
from .lean import divergence, lean_diff

LAYERS = ("request", "tool_calls", "response", "nodes", "session")


class CaseAnswers:
    """(A mixin of `AssistSession`: `workbench`, `_resolve`, `_word` and `owns` are its.)"""

    def _run_of(self, case_id: str):
        state = self.workbench.cases[case_id]
        if state.run is None:
            kept = self.kept.verdicts.get(case_id)
            said = f" (its kept verdict: {kept.status}, from the run of {kept.run_started})" if kept is not None else ""
            raise ToolError(f"{case_id} has not run in this session{said}: `run(cases=[{case_id!r}])` runs it")
        return state, state.run

    def diff(self, case: str, turn: Optional[int] = None, layer: Optional[str] = None, page: int = 1,
             layers: str = "changed") -> dict[str, Any]:
        case_id = self._resolve(case)
        state, run = self._run_of(case_id)
        if run.diff is None:
            raise ToolError(f"{case_id} has no diff: its run failed ({cut(run.result.located_error, 500)})")
        if layer is not None and layer not in LAYERS:
            raise ToolError(f"`layer` is one of {', '.join(LAYERS)}")
        if layers not in ("changed", "all"):
            raise ToolError("`layers` is changed (the default: the layers that differ) or all")
        whole = diff_to_dict(run.diff, {"id": case_id, "source": state.ref.source, "status": status_of(state)},
                             f"its {run.result.mode} run in this session")
        if turn is not None and not any(t["turn_index"] + 1 == turn for t in whole.get("turns") or ()):
            raise ToolError(f"{case_id} has no turn {turn} (its turns: 1 to {len(run.diff.turns)})")
        document, turns, page, pages = lean_page(whole, turn, page, every=layers == "all" or layer is not None)
        if layer is not None:
            turns = [{k: v for k, v in t.items() if k in ("turn", "user_text", layer)} for t in turns]
            if layer != "session":
                document.pop("session", None)
        made = run_grid(run) if page == 1 else None  # a case run more than once: its runs' variants side by side
        if made is not None:
            document["variants"] = grid_dict(made)
        if run.result.pass_rate is not None:
            document["pass_rate"] = pass_rate_dict(run.result.pass_rate)
        document["turns"] = turns
        if pages > 1:
            document["page"], document["pages"] = page, pages
        if page < pages:
            document["next_page"] = page + 1
        return bounded(document)

    def explain(self, case: str) -> dict[str, Any]:
        case_id = self._resolve(case)
        state = self.workbench.cases[case_id]
        word, kept = self._word(state)
        if state.run is None and kept is not None:  # a kept verdict: what it said, and how to see it now
            return {"id": case_id, "status": word, "kept": kept.said(),
                    **({"first_divergence": kept.first_divergence} if kept.first_divergence else {}),
                    **({"error": cut(kept.error, 1500)} if kept.error else {}),
                    "next": f"a kept run's verdict, not this session's: run(cases=[{case_id!r}]) runs it now, then explain again"}
        state, run = self._run_of(case_id)
        answer: dict[str, Any] = {"id": case_id, "status": word, "why_it_ran": cut(state.reason, 300)}
        if run.result.error:
            answer["error"] = cut(run.result.located_error, 1500)
        diff: Optional[CaseDiff] = run.diff
        if diff is not None and diff.first_divergence is not None:
            answer["first_divergence"] = bounded({k: v for k, v in divergence(divergence_to_dict(diff.first_divergence)).items()
                                                  if v is not None})
        failing = [m for m in run.result.metrics if m.status.value == "failed"]
        if failing:
            answer["failing_metrics"] = [{"name": m.name, "score": m.score, "threshold": m.threshold,
                                          **({"reason": cut(m.reason, 800)} if m.reason else {})} for m in failing]
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


def lean_page(whole: dict[str, Any], turn: Optional[int], page: int, every: bool) -> tuple[dict[str, Any], list, int, int]:
    """One page of a diff document, made lean as it is shown (a change given again says where it was given
    on this page, never on another): the document, its turns, the page and how many there are. `turn`:
    that turn only, counted from 1 as every summary counts them."""
    shown = [t for t in whole.get("turns") or () if turn is None or t["turn_index"] + 1 == turn]
    pages = max(1, -(-len(shown) // TURNS_PER_PAGE))
    page = max(1, min(int(page), pages))
    document = lean_diff({**whole, "turns": shown[(page - 1) * TURNS_PER_PAGE:page * TURNS_PER_PAGE]}, every=every)
    return document, document.pop("turns", []), page, pages
