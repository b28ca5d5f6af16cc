"""The signals that end agentdiff: SIGTERM, SIGHUP (a dropped SSH session, a closed terminal) and
SIGQUIT. A command ends cleanly on one, wherever it lands; the TUI asks its app to exit, so Textual
puts the terminal back and stops its input thread (killed mid-step, that thread stays behind and spins
on the dead terminal)."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

#: The signals that end agentdiff cleanly (SIGINT is Python's KeyboardInterrupt).
ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name))


class Terminated(SystemExit):
    """An ending signal, raised where the program is, so every `finally` (the workers, their files)
    runs. A SystemExit: asyncio passes one on from a callback or a task's step, where a busy run's loop
    spends its time; any other exception there it logs and swallows, and the run went on deaf to
    signals (a `run` of 20,000 cases was still there half an hour after its SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


def deaf() -> None:
    """Ignore every ending signal, Ctrl+C included: once one has come, no other may interrupt the
    cleanup it started, nor Python's exit (an ignored signal stays ignored to the end)."""
    for sig in (signal.SIGINT, *ENDING):
        signal.signal(sig, signal.SIG_IGN)


def terminated(signum: int, frame: object) -> None:
    deaf()
    raise Terminated(signum)


def run_app(app: Any) -> None:
    """Run a Textual app until it exits. An ending signal while it runs asks it to exit, the way `q`
    does, and raises Terminated once it has. A second one, should the app not have stopped by then (its
    loop held up), ends the process at once, as that signal does by default: the handler is Python's,
    not the loop's, so it is heard even while the loop is busy."""
    came: list[int] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def ending(signum: int, frame: object) -> None:
            if came:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)
                return
            came.append(signum)
            loop.call_soon_threadsafe(app.exit)  # wakes the loop; the exit runs in it, not in this handler

        before = {sig: signal.signal(sig, ending) for sig in ENDING}
        try:
            await app.run_async()
        finally:
            for sig, handler in before.items():  # what comes after the app (closing the workers) as before it
                signal.signal(sig, handler)

    asyncio.run(main())
    if came:
        deaf()
        raise Terminated(came[0])
