"""How an agentdiff process ends, whatever holds it: once it is ending (an ending signal came, Ctrl+C,
the TUI's terminal went away), a second ending signal or Ctrl+C ends it at once, and a deadline ends it
`DEADLINE` seconds later (a thread that will not stop, a write to a terminal that is gone). No ending
signal is ever ignored. The command line (`cli.endings`) and the TUI's terminal driver share this."""

from __future__ import annotations

import os
import signal
import threading
import time

#: The signals that end agentdiff cleanly (SIGINT is Python's KeyboardInterrupt).
ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name))

#: Seconds a process has to end cleanly after an ending signal, before it is ended at once.
DEADLINE = 5.0
#: Set once the process is ending (a signal came, the terminal went): the TUI's driver stops drawing.
ENDING_NOW = threading.Event()
_LEFT = threading.Event()  # `entry` has returned its exit status: what holds the process now is Python's exit
_WATCHING = threading.Lock()


def exit_now(code: int) -> None:
    """End the process this instant (no cleanup: the worker server and its workers see their parent go
    and end themselves)."""
    os._exit(code)


def at_once(signum: int, frame: object) -> None:
    """A second ending signal (or Ctrl+C) while the process ends: it ends now."""
    exit_now(128 + signum)


def ending(code: int, deadline: float | None = None) -> None:
    """The process is ending with `code`: from now on an ending signal or Ctrl+C ends it at once, and it
    ends by itself `deadline` seconds from now (DEADLINE) unless it has ended cleanly by then."""
    ENDING_NOW.set()
    for sig in (signal.SIGINT, *ENDING):
        try:
            signal.signal(sig, at_once)
        except ValueError:  # not the main thread (the TUI's driver calls this from its input thread)
            break
    if not _WATCHING.acquire(blocking=False):
        return  # one deadline per process: the first
    began = time.monotonic()
    limit = DEADLINE if deadline is None else deadline

    def watch() -> None:
        left_at = None
        while True:
            time.sleep(0.1)
            shutting_down = not threading.main_thread().is_alive()  # Python's exit is joining threads
            if _LEFT.is_set() and not shutting_down:
                left_at = left_at or time.monotonic()
                if time.monotonic() - left_at > 30:
                    return  # `entry` returned to a caller that goes on (a test calling it in process)
                continue
            if time.monotonic() - began > limit:
                exit_now(code)

    threading.Thread(target=watch, name="agentdiff-deadline", daemon=True).start()


def left() -> None:
    """`entry` is returning its exit status: the deadline now waits for Python's own exit."""
    _LEFT.set()
