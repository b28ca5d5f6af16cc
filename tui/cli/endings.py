"""The signals that end agentdiff: SIGTERM, SIGHUP (a dropped SSH session, a closed terminal) and
SIGQUIT. A command ends cleanly on one, wherever it lands; the TUI asks its app to exit, so Textual
puts the terminal back and stops its input thread (killed mid-step, that thread stays behind and spins
on the dead terminal).

It always ends (`process_end`): once an ending signal has come (or Ctrl+C, or the TUI's terminal has
gone), a second one ends the process at once, and a deadline ends it `DEADLINE` seconds later whatever
holds it. No ending signal is ever ignored.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

from ..process_end import DEADLINE, ENDING, ENDING_NOW, TERMINAL_GONE, at_once, ending, exit_now, left, say  # noqa: F401 - the command line's words


class Terminated(SystemExit):
    """An ending signal, raised where the program is, so every `finally` (the workers, their files)
    runs. A SystemExit: asyncio passes one on from a callback or a task's step, where a busy run's loop
    spends its time; any other exception there it logs and swallows, and the run went on deaf to
    signals (a `run` of 20,000 cases was still there half an hour after its SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


def what_stopped() -> str:
    """What an interruption stopped, by command: runs, and no report or no baseline written."""
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), "")
    if command in ("run", "score"):
        return ": the runs were stopped; no report was written"
    if command in ("accept", "record", "review"):
        return ": the runs were stopped; nothing more was written (each write is whole or not at all)"
    if command in ("undo", "redo"):
        return ": nothing more was written (each write is whole or not at all)"
    if command == "diff":
        return ": the runs were stopped"
    return ""


def terminated(signum: int, frame: object) -> None:
    ending(128 + signum, f"\nterminated{what_stopped()}")
    raise Terminated(signum)


def run_app(app: Any) -> None:
    """Run a Textual app until it exits. An ending signal while it runs asks it to exit, the way `q`
    does, and raises Terminated once it has. A second one, should the app not have stopped by then (its
    loop held up), ends the process at once, and so does the deadline: the handler is Python's, not the
    loop's, so it is heard even while the loop is busy."""
    came: list[int] = []
    TERMINAL_GONE.clear()

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def asked(signum: int, frame: object) -> None:
            if came:
                at_once(signum, frame)
                return
            came.append(signum)
            ending(128 + signum)  # a second signal, or the deadline, ends it should the app not stop
            from ..editor import stop_editors

            stop_editors()  # the app may be suspended, waiting on the editor `e` opened
            loop.call_soon_threadsafe(app.exit)  # wakes the loop; the exit runs in it, not in this handler

        before = {sig: signal.signal(sig, asked) for sig in ENDING}
        try:
            await app.run_async()
        finally:
            for sig, handler in before.items():  # what comes after the app (closing the workers) as before it
                signal.signal(sig, handler)

    asyncio.run(main())
    if came:
        ending(128 + came[0])
        raise Terminated(came[0])
    if TERMINAL_GONE.is_set() and hasattr(signal, "SIGHUP"):  # the app exited because its terminal went away
        raise Terminated(signal.SIGHUP)
