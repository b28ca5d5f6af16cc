"""The workbench's run-until-confident (the TUI's `u`): its inconclusive cases given more runs, doubling,
until each verdict settles (`run.until_confident`), each look shown on the case as it comes."""

from __future__ import annotations

import asyncio
from typing import Iterable

from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.pass_rule import held_to_rule
from agentdiff.core.run.until_confident import settle, with_looks
from agentdiff.core.scoring.confidence import MAX_RUNS
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.events import CaseState, CaseUpdated, Notice


async def until_confident(workbench, case_ids: Iterable[str], most: int = MAX_RUNS) -> list[str]:
    """The inconclusive cases of `case_ids` given more runs, doubling, until each verdict settles or it
    has `most` runs (every look is held to a stricter level). Their runs so far are judged at that level
    first; the ids of those that got more runs."""
    wb = workbench
    options = with_looks(wb.options, most)
    reason = f"until confident: more runs until the verdict settles (at most {most})"
    chosen = []
    for case_id in case_ids:
        state = wb.cases.get(case_id)
        if state is None or state.run is None or state.running or wb.busy(case_id):
            continue
        run = held_to_rule(state.run.full(), options)
        if run.result.status is CaseStatus.INCONCLUSIVE and len(run.result.runs) < most:
            chosen.append((state, run))

    async def one(state: CaseState, run: CaseRun) -> None:
        case_id, ref = state.ref.id, state.ref
        state.running, state.stale, state.reason, state.started = True, False, reason, wb.clock()
        wb._emit(CaseUpdated(case_id))
        shown = [state.run]

        def current() -> bool:
            """Still this case, as loaded then, its run still the one this left, and no other run of it queued."""
            return wb.cases.get(case_id) is state and state.ref is ref and state.run is shown[0] and not wb.busy(case_id)

        def looked(now: CaseRun) -> None:
            if current():
                state.run = shown[0] = now  # each look's verdict shows as it comes (k/n runs)
                wb._emit(CaseUpdated(case_id))

        settled = None
        try:
            settled = await settle(run, wb.pool, options, wb.root, most, wb._agents, looked)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an engine failure is shown on the case, never raised into the UI
            wb._emit(Notice(f"{case_id}: {type(exc).__name__}: {exc}", "error"))
        finally:
            if settled is not None and current():
                wb._settle(state, settled, reason)
            elif wb.cases.get(case_id) is state and not wb.busy(case_id):  # a change made it stale meanwhile: it stays so
                state.running = False
                wb._emit(CaseUpdated(case_id))

    await asyncio.gather(*(one(state, run) for state, run in chosen))
    return [state.ref.id for state, _ in chosen]
