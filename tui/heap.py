"""A big suite's objects out of the garbage collector's way.

With thousands of cases loaded, Python's full collections walk every case, run and tree row each time
one is due: 150 ms or more, landing on whichever key press allocates at that moment. Objects that live
as long as the app (the cases loaded at start, then their first verdicts) are collected once and then
frozen (`gc.freeze`), so later collections walk only what is new. The first collection comes as the
screen mounts, before the tree is built and the run starts (80 ms at 50,000 cases, where it stalled
the run's first second); the first tree's rows are frozen after the first paint. It happens at most twice per app,
and only for a suite of `BIG_SUITE` cases or more; what a frozen object later leaves as garbage stays
until the app ends (the first tree's rows, and the cycles the first run left uncollected when it is
frozen: a few megabytes; 417 MB in all at 50,000 cases).

While a big suite's first run goes, the verdicts settled so far are frozen too, each time `FREEZE_EVERY`
more have settled (`gc.freeze` alone, which moves objects and walks none). Without that, a full
collection came every two seconds or so (the objects of the runs in flight reach the oldest generation
and die there), and each walked every verdict settled so far: 670 ms at 20,000 cases, the longest stall
of the run and a fifth of its time, growing with the suite.

While a big suite is loaded, a full collection comes after 100 collections of the middle generation,
not Python's 10: with what lives long frozen, the oldest generation holds mostly the runs in flight,
and at 10 its passes came about once a second (30–260 ms each at 50,000 cases, the run's longest
stalls); at 100, two in a 20,000-case run, with the run's time unchanged. Young cycles are still
collected as often as ever; `release` puts Python's thresholds back when the screen goes.
"""

from __future__ import annotations

import gc

BIG_SUITE = 1000
FREEZE_EVERY = 1000
FULL_EVERY = 100  # middle-generation collections per full one, while a big suite is loaded


class HeapSettler:
    def __init__(self) -> None:
        self.times = 0
        self._frozen_at = 0  # settled verdicts when the last freeze during the first run came
        self._thresholds: tuple[int, ...] = ()  # Python's, while FULL_EVERY stands in for its last

    def settle(self, cases: int) -> bool:
        """Collect, then freeze what is left; whether it did (at most twice, big suites only). The
        second time (every case has its first verdict) only freezes, as the freezes during the run
        do: a full collection then walked what the run had left unfrozen, 80 ms at 1,000 cases (the
        modules scoring imports among it), just as the last verdicts were shown."""
        if cases < BIG_SUITE or self.times >= 2:
            return False
        if self.times == 0:
            gc.collect()
        gc.freeze()
        self.times += 1
        if not self._thresholds:
            self._thresholds = gc.get_threshold()
            gc.set_threshold(*self._thresholds[:2], max(self._thresholds[2], FULL_EVERY))
        return True

    def painted(self, cases: int) -> bool:
        """After the first paint, the tree's first rows frozen too (`gc.freeze` alone: no walk); whether it did."""
        if cases < BIG_SUITE or self.times != 1:
            return False
        gc.freeze()
        return True

    def release(self) -> None:
        """Python's collection thresholds back (frozen objects stay frozen: the app is ending)."""
        if self._thresholds:
            gc.set_threshold(*self._thresholds)
            self._thresholds = ()

    def settling(self, cases: int, settled: int) -> bool:
        """During the first run, `settled` verdicts so far: freeze them once `FREEZE_EVERY` more have
        come since the last time; whether it did."""
        if cases < BIG_SUITE or self.times != 1 or settled - self._frozen_at < FREEZE_EVERY:
            return False
        gc.freeze()
        self._frozen_at = settled
        return True
