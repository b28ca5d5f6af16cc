"""The workbench's queue of runs: cases wait here, and a window of them at a time become tasks.

A task per case for a suite of 50,000 made one loop pass of their first steps (a second's stall)
and kept 50,000 coroutines alive. Here the queued cases are only keys of an ordered dict; a feeder
task turns them into tasks in queue order as slots free up.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import OrderedDict
from typing import Awaitable, Callable, Iterable, Mapping, Optional

#: What the queue calls to run one case: (case id, why) → a coroutine.
Start = Callable[[str, str], Awaitable[None]]


class RunQueue:
    def __init__(self, start: Start, window: int) -> None:
        self._start = start
        self._window = window
        self._queue: OrderedDict[str, str] = OrderedDict()  # case → why
        self._tasks: dict[str, asyncio.Task] = {}  # the runs in flight: at most `window`
        self._feeder: Optional[asyncio.Task] = None
        self._slots: Optional[asyncio.Semaphore] = None

    @property
    def in_flight(self) -> Mapping[str, asyncio.Task]:
        return self._tasks

    def queued(self) -> int:
        return len(self._queue)

    def put(self, case_id: str, reason: str) -> None:
        """Queue a case at the back; a run already queued or going for it is let go first."""
        self.put_many([case_id], reason)

    def put_many(self, case_ids: Iterable[str], reason: str) -> None:
        """`put` for each case, in order, in one pass (50,000 cases queued at once)."""
        queue, tasks, entry = self._queue, self._tasks, reason
        for case_id in case_ids:
            queue.pop(case_id, None)
            task = tasks.pop(case_id, None)
            if task is not None:
                task.cancel()
            queue[case_id] = entry
        if queue and (self._feeder is None or self._feeder.done()):
            self._feeder = asyncio.get_running_loop().create_task(self._feed())

    def busy(self, case_id: Optional[str] = None) -> bool:
        """Whether a run is queued or in flight (for the case, or for any)."""
        if case_id is None:
            return bool(self._queue or self._tasks)
        return case_id in self._queue or case_id in self._tasks

    def drop(self, case_id: str) -> None:
        """A case's queued or running run, let go (it is run again, or it is gone)."""
        self._queue.pop(case_id, None)
        task = self._tasks.pop(case_id, None)
        if task is not None:
            task.cancel()

    def cancel(self) -> None:
        """Every queued and running run, let go (the app is closing)."""
        self._queue.clear()
        for task in self._tasks.values():
            task.cancel()
        if self._feeder is not None:
            self._feeder.cancel()
            self._feeder = None  # (done only at the next step: a case put meanwhile gets a feeder of its own)

    async def _feed(self) -> None:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._window)
        while self._queue:
            await self._slots.acquire()
            if not self._queue:
                self._slots.release()
                return
            case_id, reason = self._queue.popitem(last=False)
            task = asyncio.get_running_loop().create_task(self._start(case_id, reason))
            self._tasks[case_id] = task
            task.add_done_callback(functools.partial(self._forget, case_id))

    def _forget(self, case_id: str, task: asyncio.Task) -> None:
        """A finished run's task is let go (a big suite keeps none), and its slot goes to the next."""
        assert self._slots is not None
        self._slots.release()
        if self._tasks.get(case_id) is task:
            del self._tasks[case_id]

    async def wait_for(self, case_ids: Optional[Iterable[str]] = None, timeout: Optional[float] = None) -> bool:
        """Until none of these cases (None: no case) is queued or running, or `timeout` seconds have
        passed; whether they all finished. A case queued again meanwhile is waited for too."""
        wanted = None if case_ids is None else set(case_ids)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if wanted is None:
                waiting = self.busy()
            else:
                waiting = not wanted.isdisjoint(self._queue) or not wanted.isdisjoint(self._tasks)
            if not waiting:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            # the runs in flight that are waited for; else any run in flight (its slot goes to the
            # next queued case); else the feeder, about to start the queued ones
            mine = [*self._tasks.values()] if wanted is None else [t for i, t in self._tasks.items() if i in wanted]
            pending = mine or [*self._tasks.values()]
            if not mine:  # a wanted case queued: looked at again soon (it may start and finish before any of these)
                left = 0.05 if left is None else min(left, 0.05)
            if not pending:  # (or a slot a cancelled run has yet to give back)
                if self._feeder is None or self._feeder.done():
                    self._feeder = asyncio.get_running_loop().create_task(self._feed())
                pending = [self._feeder]
            when = asyncio.ALL_COMPLETED if mine else asyncio.FIRST_COMPLETED
            await asyncio.wait(pending, timeout=left, return_when=when)

