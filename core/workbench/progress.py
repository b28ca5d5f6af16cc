"""How far the runs in flight have come, for a progress bar and an ETA.

A batch starts when runs are started while none is in flight, and grows as more are queued before
it ends; a case run again within it counts once. The ETA is what the cases left took the last time
they ran (their mean standing in for a case never run), less what those in flight have run already,
spread over the concurrency, counting down
while no case finishes, and none once it has run out (the runs are slower than last time: no number
is better than a wrong one); with no case left that ran before, the batch's own pace so far (the time
per finished case) times the cases left."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional


@dataclass
class Progress:
    started: float = 0.0
    ids: set[str] = field(default_factory=set)
    done: set[str] = field(default_factory=set)
    expected: dict[str, float] = field(default_factory=dict)  # a case's seconds the last time it ran
    jobs: int = 1  # cases run at once
    # the cases left, and the sum and count of their known seconds, kept as cases finish: an ETA per
    # finished case that walked the batch made a run of N cases cost N²
    _left: set[str] = field(default_factory=set, repr=False)
    _known: float = 0.0
    _counted: int = 0
    _longest: list[tuple[float, str]] = field(default_factory=list, repr=False)  # a heap of (-seconds, case) left
    # the estimate from the last runs, and when it was made: it counts down until the cases left change
    _estimate: Optional[tuple[float, float]] = field(default=None, repr=False)
    _running: dict[str, float] = field(default_factory=dict, repr=False)  # the cases in flight, and when each started

    def queued(self, case_ids: Iterable[str], in_flight: bool, now: float, expected: Optional[Mapping[str, float]] = None) -> None:
        if not in_flight:
            self.started, self.ids, self.done, self._running = now, set(), set(), {}
        ids = set(case_ids)
        self.ids |= ids
        self.done -= ids
        self.expected.update(expected or {})
        self._left = self.ids - self.done
        known = [(self.expected[i], i) for i in self._left if i in self.expected]
        self._known, self._counted = sum(seconds for seconds, _ in known), len(known)
        self._longest = [(-seconds, i) for seconds, i in known]
        heapq.heapify(self._longest)
        self._estimate = None

    def started_case(self, case_id: str, now: float) -> None:
        """A case's run began: what it has run already is taken off what it is expected to take."""
        self._running[case_id] = now

    def finished(self, case_id: str) -> None:
        self._running.pop(case_id, None)
        if case_id in self.ids:
            self.done.add(case_id)
        if case_id in self._left:
            self._left.discard(case_id)
            self._estimate = None
            if case_id in self.expected:
                self._known -= self.expected[case_id]
                self._counted -= 1

    @property
    def total(self) -> int:
        return len(self.ids)

    @property
    def completed(self) -> int:
        return len(self.done)

    def _longest_waiting(self, ran: dict[str, float]) -> float:
        """The longest last time of a case left that is not in flight (the heap's top few, looked at in
        a widening window: finished cases deep in it are popped only when they reach its top)."""
        k = len(ran) + 1
        while True:
            found = next((-neg for neg, i in heapq.nsmallest(k, self._longest) if i not in ran and i in self._left), None)
            if found is not None or k >= len(self._longest):
                return found or 0.0
            k *= 2

    def eta(self, now: float) -> Optional[float]:
        """Seconds until the batch ends (see the module's docstring); None when nothing tells yet."""
        left = len(self._left)
        if not left:
            return None
        if self._counted > 0:
            if self._estimate is None:
                while self._longest and self._longest[0][1] not in self._left:  # finished since: gone from the heap
                    heapq.heappop(self._longest)
                mean = max(0.0, self._known) / self._counted
                ran = {i: now - at for i, at in self._running.items() if i in self._left}  # in flight: part done
                known = max(0.0, self._known) - sum(min(seconds, self.expected[i]) for i, seconds in ran.items() if i in self.expected)
                unknown = mean * (left - self._counted) - sum(min(seconds, mean) for i, seconds in ran.items() if i not in self.expected)
                waiting = self._longest_waiting(ran)
                longest = max([waiting, *(self.expected[i] - seconds for i, seconds in ran.items() if i in self.expected)])
                self._estimate = (max((max(0.0, known) + max(0.0, unknown)) / max(1, self.jobs), longest), now)
            estimate, at = self._estimate
            remaining = estimate - (now - at)  # counts down while nothing finishes
            return remaining if remaining > 0.5 else None  # past it: the last runs tell nothing more
        if not self.completed:
            return None
        return (now - self.started) / self.completed * left


def duration_text(seconds: float) -> str:
    """`8s`, `2m05s`, `1h02m`: short enough for a tree row or a header."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
