"""A big suite's objects out of the garbage collector's way.

With thousands of cases loaded, Python's full collections walk every case, run and tree row each time
one is due: 150 ms or more, landing on whichever key press allocates at that moment. Objects that live
as long as the app (the cases loaded at start, then their first verdicts) are collected once and then
frozen (`gc.freeze`), so later collections walk only what is new. It happens at most twice per app,
and only for a suite of `BIG_SUITE` cases or more; what a frozen object later leaves as garbage stays
until the app ends (the first tree's rows, at most a few megabytes).
"""

from __future__ import annotations

import gc

BIG_SUITE = 1000


class HeapSettler:
    def __init__(self) -> None:
        self.times = 0

    def settle(self, cases: int) -> bool:
        """Collect, then freeze what is left; whether it did (at most twice, big suites only)."""
        if cases < BIG_SUITE or self.times >= 2:
            return False
        gc.collect()
        gc.freeze()
        self.times += 1
        return True
