"""A case's CPU steps after its run (scoring, diffing, summing up): in a thread, or, for the
workbench's small runs, on the loop.

A thread for every step looked free, but each hop passes the interpreter's lock between the thread
and the loop. With verdicts landing hundreds a second, the TUI's loop waited for the lock 60–110 ms
at a time, again and again, while every step itself took well under a millisecond. So the
workbench's runs (`ON_LOOP`: the TUI's, the MCP server's) take a small run's step where it is awaited
(and the workbench spreads the runs that end together over several passes of the loop, each run's
start and settling taking its turn: `Pacer`); a run whose output came to more than `SMALL_BYTES` is
still scored in a thread, so one long case never holds the loop. A headless run keeps its threads:
its loop serves no keys, and threads keep the workers fed sooner (the TUI's first run of 20,000
cases took 37 s with them, 53 s on the loop).
"""

from __future__ import annotations

import asyncio
import time
from contextvars import ContextVar
from typing import Callable, Iterable, Optional, TypeVar

from agentdiff.core.worker.jobs import RunOutput

SMALL_BYTES = 64 * 1024  # a run's output from the worker, as JSON, scored on the loop (an echo case's: ~3 KB)

#: Set by the workbench in each of its runs' tasks to its `Pacer`: their small runs are scored on the loop.
ON_LOOP: ContextVar[Optional["Pacer"]] = ContextVar("agentdiff_score_on_loop", default=None)

T = TypeVar("T")


def small(outputs: Iterable[RunOutput]) -> bool:
    """Whether this run's steps go on the loop: a workbench's run, and a small one."""
    return ON_LOOP.get() is not None and sum(output._size for output in outputs) <= SMALL_BYTES


async def cpu_step(is_small: bool, step: Callable[..., T], *args) -> T:
    """`step(*args)`: here when `is_small`, else in a thread. (Not paced itself: on Python 3.11 the
    pool reads a batch's results one a pass, `wait_for` making a task of each read; a turn here too
    slowed a 50,000-case run from 105 s to 135 s.)"""
    if is_small:
        return step(*args)
    return await asyncio.to_thread(step, *args)


class Pacer:
    """Work that lands on the loop in bursts, spread over its passes. A batch of a hundred runs ends
    at once in its worker, and their results can be read in one pass: each run's next steps (scored,
    its verdict settled: under a millisecond each) then ran in one pass of the loop, a hundred of them
    a 60–110 ms stall. A step that awaits `turn()` goes on while the pass has spent less than `BUDGET`
    on such steps; the others wait for a later pass, in the order they came."""

    BUDGET = 0.008  # seconds of paced steps in one pass of the loop

    def __init__(self) -> None:
        self._began: Optional[float] = None  # when the first paced step of this pass went on
        self._loop: Optional[asyncio.AbstractEventLoop] = None  # whose pass (a workbench can outlive a loop)

    async def turn(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            now = time.perf_counter()
            if self._began is None or self._loop is not loop:
                self._began, self._loop = now, loop
                loop.call_soon(self._next_pass)  # runs first in the next pass
                return
            if now - self._began <= self.BUDGET:
                return
            await asyncio.sleep(0)  # the next pass

    def _next_pass(self) -> None:
        self._began = None
