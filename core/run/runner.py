"""Running cases: each case's agent resolved, its jobs sent to the worker pool, and the outputs
scored and diffed as they come back. `run_cases` yields each case as it finishes."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import AsyncIterator, Optional, Sequence

from agentdiff.core.diff.case import with_strict_node_order
from agentdiff.core.project.agent_memo import AgentMemo
from agentdiff.core.project.import_graph import project_files
from agentdiff.core.project.case_refs import CaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.run.case_run import CaseRun, unrun, summarised
from agentdiff.core.run.journey import apply_checks
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.pass_rule import held_to_rule
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.run.cpu import cpu_step, small
from agentdiff.core.worker.jobs import AgentRef


def default_mode(ref: CaseRef, options: RunOptions) -> str:
    return options.mode or family_of(ref).default_mode(ref)


async def run_case(ref: CaseRef, pool, options: RunOptions, root: Path, agents: Optional[AgentMemo] = None) -> CaseRun:
    """One case, start to verdict. `pool` is a WorkerPool, or anything with `async run(job, timeout)`;
    `agents` memoises agent resolution across the cases of a batch."""
    resolution = (agents or AgentMemo(root)).resolve(ref, options.agents_dirs, options.mapping)
    mode = default_mode(ref, options)
    if resolution.agent is None:
        return unrun(ref, None, mode, CaseStatus.ERROR, resolution.said)
    agent = resolution.agent
    run = await family_of(ref).run(ref, agent, pool, options, mode)
    _keep_project_files(run, root, agent)
    if options.strict_node_order and run.diff is not None and run.baseline is not None and run.trace is not None:
        run = dataclasses.replace(run, diff=with_strict_node_order(run.diff, run.baseline.trace, run.trace))
    if not run.ref.checks:
        return await cpu_step(small(run.outputs), lambda: summarised(held_to_rule(run, options)))
    return await asyncio.to_thread(lambda: summarised(held_to_rule(apply_checks(run), options)))  # user check functions: off the loop


def _keep_project_files(run: CaseRun, root: Path, agent: AgentRef) -> None:
    """What its runs depend on, kept to the project's files (the repeats of a case read the same files)."""
    kept: dict[tuple[str, ...], list[str]] = {}
    for out in run.outputs:
        key = tuple(out.files_read)
        if key not in kept:
            kept[key] = project_files(key, root, agent)
        out.files_read = kept[key]


async def run_cases(refs: Sequence[CaseRef], pool, options: RunOptions, root: Path) -> AsyncIterator[CaseRun]:
    """Run every case (concurrency is the pool's); yield each as it finishes."""
    agents = AgentMemo(root)
    tasks = [asyncio.ensure_future(run_case(ref, pool, options, root, agents)) for ref in refs]
    try:
        for next_done in asyncio.as_completed(tasks):
            yield await next_done
    finally:
        for task in tasks:
            task.cancel()
