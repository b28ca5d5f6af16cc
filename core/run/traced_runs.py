"""agents-cli trace files (`eval generate`'s `traces_<ts>.json`, or agentdiff's `--report agents-cli`)
scored with no agent call: each traced case is the project's dataset case of its eval_case_id, its
run the events the trace holds after the case's own, graded by the eval config's local metrics on
the instance `agents-cli eval grade` would build from that trace, and diffed against the case's
baseline as a live run is (`agentdiff score traces_<ts>.json`)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Sequence

from agentdiff.core.formats.agents_cli.dataset import LoadedDataset
from agentdiff.core.formats.agents_cli.models import DatasetCase
from agentdiff.core.formats.agents_cli.traces import normalized
from agentdiff.core.project.agent_memo import AgentMemo
from agentdiff.core.project.dataset_cases import DatasetCaseRef, bare_refs, sent_message
from agentdiff.core.run.case_run import CaseRun, unrun
from agentdiff.core.run.dataset_case import grade_instance, score_dataset_case
from agentdiff.core.run.options import RunOptions
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.traces.agents_cli import as_output
from agentdiff.core.worker.agents_cli_trace import instance


def traced_events(written: DatasetCase, traced: DatasetCase) -> list[dict]:
    """The events a run added to a case: those of its trace after the case's own."""
    events = [event.model_dump(mode="json", exclude_none=True) for event in traced.events()]
    return events[len(written.events()):]


async def score_trace(trace: LoadedDataset, refs: Sequence[DatasetCaseRef], pool, options: RunOptions, root: Path) -> list[CaseRun]:
    """Each traced case scored against its dataset case (an unknown eval_case_id is an error)."""
    by_key: dict[str, list[DatasetCaseRef]] = {}
    for ref in refs:
        if ref.written.eval_case_id == ref.name:  # a case matched by its eval_case_id only: positions shift in a trace
            by_key.setdefault(ref.name, []).append(ref)
    memo = AgentMemo(root)

    async def one(traced: DatasetCase, key: str) -> CaseRun:
        found = by_key.get(key, []) if traced.eval_case_id == key else []
        if len(found) != 1:
            if traced.eval_case_id != key:
                why = "has no usable eval_case_id, so it cannot be matched to its dataset's case"
            elif found:
                why = f"matches a case of {len(found)} datasets ({', '.join(r.source for r in found)}): give them distinct eval_case_ids"
            else:
                why = "has an eval_case_id no dataset here has"
            return unrun(_placeholder(trace, key), None, "score", CaseStatus.ERROR, f"{trace.source.display}: its run of {key!r} {why}")
        ref = found[0]
        resolution = memo.resolve(ref, options.agents_dirs, options.mapping)
        out = as_output(sent_message(ref.written), traced_events(ref.written, traced), None, [])
        graded = None
        if resolution.agent is not None:
            case = normalized(traced.model_dump(mode="json", exclude_none=True))
            graded = await grade_instance(ref, resolution.agent, instance(case), pool, options, case)
        run = await asyncio.to_thread(score_dataset_case, ref, resolution.agent, [out], [graded])  # type: ignore[arg-type]
        return dataclasses.replace(run, result=dataclasses.replace(run.result, mode="score"))

    return list(await asyncio.gather(*(one(case, key) for case, key in zip(trace.cases, trace.keys))))


def _placeholder(trace: LoadedDataset, key: str) -> DatasetCaseRef:
    """The traced case as a case of the trace file (to report it when no dataset has it)."""
    return next(ref for ref in bare_refs(trace) if ref.name == key)
