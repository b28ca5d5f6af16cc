"""The workbench's run queue: a window of runs at a time, in queue order, and waits that end.

Each test starts runs that block on events the test sets, so nothing sleeps and every order is the
one the queue chose.
"""

from __future__ import annotations

import asyncio

from agentdiff.core.workbench.run_queue import RunQueue


class Gate:
    """Runs that start when fed and finish when the test lets them."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str]] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self._open: dict[str, asyncio.Event] = {}

    async def run(self, case_id: str, reason: str) -> None:
        self.started.append((case_id, reason))
        event = self._open.setdefault(case_id, asyncio.Event())
        try:
            await event.wait()
        except asyncio.CancelledError:
            self.cancelled.append(case_id)
            raise
        self.finished.append(case_id)

    def release(self, *case_ids: str) -> None:
        for case_id in case_ids:
            self._open.setdefault(case_id, asyncio.Event()).set()

    def ids(self) -> list[str]:
        return [case_id for case_id, _ in self.started]


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_no_more_than_the_window_run_at_once_and_they_start_in_queue_order():
    gate = Gate()
    queue = RunQueue(gate.run, window=2)
    for case_id in "abcde":
        queue.put(case_id, "changed")
    await settle()
    assert gate.ids() == ["a", "b"]
    assert set(queue.in_flight) == {"a", "b"} and queue.queued() == 3
    gate.release("b")
    await settle()
    assert gate.ids() == ["a", "b", "c"] and set(queue.in_flight) == {"a", "c"}
    gate.release(*"acde")
    assert await queue.wait_for()
    assert gate.ids() == list("abcde") and gate.finished[0] == "b"
    assert not queue.busy() and queue.in_flight == {}


async def test_a_case_put_again_goes_to_the_back_with_its_new_reason():
    gate = Gate()
    queue = RunQueue(gate.run, window=1)
    for case_id in "abc":
        queue.put(case_id, "first")
    queue.put("b", "again")
    gate.release(*"abc")
    assert await queue.wait_for()
    assert gate.started == [("a", "first"), ("c", "first"), ("b", "again")]


async def test_putting_a_running_case_again_cancels_the_run_and_frees_its_slot():
    gate = Gate()
    queue = RunQueue(gate.run, window=1)
    queue.put("a", "changed")
    await settle()
    queue.put("a", "changed again")
    gate.release("a")
    assert await queue.wait_for(["a"])
    assert gate.cancelled == ["a"] and gate.finished == ["a"]
    assert [reason for _, reason in gate.started] == ["changed", "changed again"]


async def test_a_dropped_case_never_runs_and_its_waiters_return():
    gate = Gate()
    queue = RunQueue(gate.run, window=1)
    queue.put("a", "changed")
    queue.put("b", "changed")
    await settle()
    queue.drop("b")
    assert not queue.busy("b") and queue.busy("a")
    assert await queue.wait_for(["b"], timeout=1)
    gate.release("a")
    assert await queue.wait_for()
    assert gate.ids() == ["a"]


async def test_wait_for_says_false_when_its_time_runs_out_and_true_once_the_cases_are_done():
    gate = Gate()
    queue = RunQueue(gate.run, window=1)
    queue.put("a", "changed")
    queue.put("b", "changed")
    assert not await queue.wait_for(["b"], timeout=0.05)
    assert queue.busy("b")
    gate.release("a")
    assert await queue.wait_for(["a"])  # only a: b may still be running
    gate.release("b")
    assert await queue.wait_for(["b"], timeout=5)


async def test_cancel_lets_every_run_go():
    gate = Gate()
    queue = RunQueue(gate.run, window=2)
    for case_id in "abcd":
        queue.put(case_id, "changed")
    await settle()
    queue.cancel()
    await settle()
    assert queue.queued() == 0 and sorted(gate.cancelled) == ["a", "b"] and gate.finished == []
    assert gate.ids() == ["a", "b"]


async def test_waiting_for_a_queued_case_ends_when_it_is_done_not_when_a_slow_run_beside_it_is():
    gate = Gate()
    queue = RunQueue(gate.run, window=2)
    queue.put("slow", "changed")
    await settle()
    gate.release("a")
    queue.put("a", "changed")  # queued: not a task yet when the wait begins
    assert await asyncio.wait_for(queue.wait_for(["a"]), 5)
    assert queue.busy("slow") and gate.finished == ["a"]


async def test_a_case_put_right_after_cancel_still_runs():
    gate = Gate()
    queue = RunQueue(gate.run, window=1)
    queue.put("a", "changed")
    queue.put("b", "changed")
    await settle()  # a running, the feeder waiting for its slot
    queue.cancel()
    queue.put("c", "changed")
    gate.release("c")
    for _ in range(50):
        await asyncio.sleep(0)
        if not queue.busy():
            break
    assert gate.ids() == ["a", "c"] and gate.finished == ["c"] and not queue.busy()


# --- pacing ---------------------------------------------------------------------------------------


async def test_steps_that_become_ready_together_are_spread_over_passes_of_the_loop_in_order(monkeypatch):
    """Sixty runs whose scores came back at once: each step takes 1 ms, the budget is 4 ms a pass, so
    no pass runs more than a handful, and they go on in the order they came."""
    import time

    from agentdiff.core.run.cpu import Pacer

    monkeypatch.setattr(Pacer, "BUDGET", 0.004)
    pace, passes, done = Pacer(), [0], []
    loop = asyncio.get_running_loop()

    def count() -> None:  # one call per pass of the loop
        passes[0] += 1
        loop.call_soon(count)

    async def step(i: int) -> None:
        await pace.turn()
        until = time.perf_counter() + 0.001
        while time.perf_counter() < until:
            pass
        done.append((i, passes[0]))

    loop.call_soon(count)
    await asyncio.gather(*(step(i) for i in range(60)))
    per_pass: dict[int, int] = {}
    for _, seen in done:
        per_pass[seen] = per_pass.get(seen, 0) + 1
    assert [i for i, _ in done] == list(range(60))
    assert max(per_pass.values()) <= 6 and len(per_pass) >= 10


async def test_a_lone_step_goes_on_at_once():
    from agentdiff.core.run.cpu import Pacer

    pace, loop = Pacer(), asyncio.get_running_loop()
    before = loop.time()
    for _ in range(100):  # one at a time: never over the budget
        await pace.turn()
    assert loop.time() - before < 1.0


def test_a_pacer_used_on_a_new_loop_does_not_wait_for_the_old_loops_pass():
    """A workbench can outlive an event loop (tests, the CLI): a pass begun on a loop that ended is
    not waited for."""
    from agentdiff.core.run.cpu import Pacer

    pace = Pacer()

    async def once() -> None:
        await pace.turn()

    asyncio.run(once())
    pace._began = 0.0  # as if the old loop had ended before its next pass
    asyncio.run(asyncio.wait_for(once(), 5))
