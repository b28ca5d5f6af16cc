"""A case's CPU steps after its run (scoring, diffing, summing up): in a thread, or, for the
workbench's small runs, on the loop.

A thread for every step looked free, but each hop passes the interpreter's lock between the thread
and the loop. With verdicts landing hundreds a second, the TUI's loop waited for the lock 60–110 ms
at a time, again and again, while every step itself took well under a millisecond. So the
workbench's runs (`ON_LOOP`: the TUI's, the MCP server's) take a small run's step where it is awaited
(and the workbench spreads the runs that end together over several passes of the loop:
`run_queue.Pacer`); a run whose output came to more than `SMALL_BYTES` is still scored in a thread,
so one long case never holds the loop. A headless run keeps its threads: its loop serves no keys,
and there the threads keep the workers fed sooner (20,000 cases: 37 s against 53 s on the loop).
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Callable, Iterable, TypeVar

from agentdiff.core.worker.jobs import RunOutput

SMALL_BYTES = 64 * 1024  # a run's output from the worker, as JSON, scored on the loop (an echo case's: ~3 KB)

#: Set by the workbench in each of its runs' tasks: their small runs are scored on the loop.
ON_LOOP: ContextVar[bool] = ContextVar("agentdiff_score_on_loop", default=False)

T = TypeVar("T")


def small(outputs: Iterable[RunOutput]) -> bool:
    """Whether this run's steps go on the loop: a workbench's run, and a small one."""
    return ON_LOOP.get() and sum(output._size for output in outputs) <= SMALL_BYTES


async def cpu_step(is_small: bool, step: Callable[..., T], *args) -> T:
    """`step(*args)`: here when `is_small`, else in a thread."""
    if is_small:
        return step(*args)
    return await asyncio.to_thread(step, *args)
