"""Python's cyclic collector held off while discovery makes a suite's objects.

Discovery makes a few objects per case and keeps them all, so each collection Python runs while it
goes walks every case made so far: at a million cases, a fifth of a `list` that reads the files from
the cache. The collector is off while any discovery runs (threads may discover at once) and back on
after the last; discovery makes little garbage that only the collector frees (the cycles of errors
caught), and it is collected when the collector runs next.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

_lock = threading.Lock()
_holders = 0
_restore = False  # whether the collector was on when the first holder came


@contextlib.contextmanager
def held_off() -> Iterator[None]:
    global _holders, _restore
    with _lock:
        if _holders == 0:
            _restore = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _restore:
                gc.enable()
