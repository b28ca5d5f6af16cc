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


@contextlib.contextmanager
def held_off() -> Iterator[None]:
    """The collector off until the block ends, in a process with no other thread (a hold inside a
    hold, or with the collector off already, changes nothing)."""
    if threading.active_count() > 1 or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
