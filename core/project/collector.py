"""Python's cyclic collector held off while a one-shot command's discovery makes a suite's objects.

Discovery makes a few objects per case and keeps them all, so each collection Python runs while it
goes walks every case made so far: at a million cases, a fifth of a `list` that reads the files from
the cache. The collector is off while a discovery runs in a process with no other thread (`list`,
`run`, before their workers start) and back on after it; discovery makes little garbage that only the
collector frees (the cycles of errors caught), collected when the collector runs next. Where other
threads run (the TUI, `agentdiff mcp`), their garbage must not wait for discovery: it is left on.
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
    if threading.active_count() > 1:
        yield
        return
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
