"""How an agentdiff process ends, whatever holds it: once it is ending (an ending signal came, Ctrl+C,
the TUI's terminal went away), a second ending signal or Ctrl+C ends it at once, and a deadline ends it
`DEADLINE` seconds later (a thread that will not stop, a write to a terminal that is gone). No ending
signal is ever ignored. The command line (`cli.endings`) and the TUI's terminal driver share this."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
from typing import Optional

#: The signals that end agentdiff cleanly (SIGINT is Python's KeyboardInterrupt).
ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name))

#: Seconds a process has to end cleanly after an ending signal, before it is ended at once.
DEADLINE = 5.0
#: Set once the process is ending (a signal came, the terminal went): the TUI's driver stops drawing.
ENDING_NOW = threading.Event()
#: Set by the TUI's driver when its terminal went away (the app then exits as on SIGHUP).
TERMINAL_GONE = threading.Event()
_LEFT = threading.Event()  # `entry` has returned its exit status: what holds the process now is Python's exit
_WATCHING = threading.Lock()


_CODE: list[Optional[int]] = [None]  # the exit status of the ending: the first one's
_LINE: list[Optional[str]] = [None]  # the one line the ending says (`say`), and whether it was said
_SAID = threading.Event()
_EXITING = threading.Lock()
#: Seconds the cleanup registered with `atexit` (the worker server stopped, agentdiff's temporary files
#: removed) may take when the process ends at once.
CLEANUP_SECONDS = 2.0


def say() -> None:
    """Write the ending's line to stderr, once (with the ending signals held meanwhile, so a second
    signal neither cuts it nor writes it twice)."""
    line = _LINE[0]
    if line is None or _SAID.is_set():
        return
    held = (signal.SIGINT, *ENDING)
    blocked = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    if blocked:
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        if not _SAID.is_set():
            _SAID.set()
            try:
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
            except (OSError, ValueError):  # the terminal is gone (SIGHUP), or stderr closed
                pass
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def exit_now(code: Optional[int] = None) -> None:
    """End the process now: its line said, the cleanup registered with `atexit` run for at most
    CLEANUP_SECONDS (in a thread, so nothing it waits on holds the exit), then `os._exit`. With no
    `code`, the ending's."""
    code = code if _CODE[0] is None else _CODE[0]
    if not _EXITING.acquire(blocking=False):  # another signal, or the deadline, is ending it already
        if threading.current_thread() is threading.main_thread():
            return
        time.sleep(CLEANUP_SECONDS + 1)
        os._exit(code or 0)
    say()
    cleanup = threading.Thread(target=atexit._run_exitfuncs, name="agentdiff-cleanup", daemon=True)
    cleanup.start()
    cleanup.join(CLEANUP_SECONDS)
    os._exit(code or 0)


def at_once(signum: int, frame: object) -> None:
    """A second ending signal (or Ctrl+C) while the process ends: it ends now, with the first's status."""
    exit_now(128 + signum)


def ending(code: int, line: Optional[str] = None, deadline: Optional[float] = None) -> None:
    """The process is ending with `code` (and `line` to say, by `say`): from now on an ending signal or
    Ctrl+C ends it at once, and it ends by itself `deadline` seconds from now (DEADLINE) unless it has
    ended cleanly by then. A later call changes neither the status nor the line."""
    ENDING_NOW.set()
    if _CODE[0] is None:
        _CODE[0] = code
    if line is not None and _LINE[0] is None:
        _LINE[0] = line
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
            # Python's exit is under way: joining threads (its executors' first), or past it
            shutting_down = getattr(threading, "_SHUTTING_DOWN", False) or not threading.main_thread().is_alive()
            if _LEFT.is_set() and not shutting_down:
                left_at = left_at or time.monotonic()
                if time.monotonic() - left_at > 2:  # Python's exit follows `entry` within milliseconds:
                    return  # this is a caller that goes on (a test calling `entry` in process), not an exit
                continue
            if time.monotonic() - began > limit:
                exit_now(code)

    threading.Thread(target=watch, name="agentdiff-deadline", daemon=True).start()


def left() -> None:
    """`entry` is returning its exit status: the deadline now waits for Python's own exit. Once threads
    have been joined (where an exit can hang, and a signal still ends it at once), what is left is the
    cleanup and Python's teardown, which puts the default handlers back: a signal then would kill the
    process with the wrong status, so from there the ending signals are ignored (the deadline still runs)."""
    _LEFT.set()
    if ENDING_NOW.is_set():
        atexit.register(_ignore_to_the_end)


def _ignore_to_the_end() -> None:
    for sig in (signal.SIGINT, *ENDING):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (ValueError, OSError):
            pass
