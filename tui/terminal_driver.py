"""Textual's Linux driver, made to end when its terminal goes away.

A terminal can vanish every way a user makes it: the window closed (SIGHUP to the group), an SSH session
dropped (the pty goes, maybe with no signal at all), `tmux kill-session` or `kill-server` (SIGHUP, then
SIGCONT). Textual's driver, as pinned, then keeps the process alive: its input thread, which is not a
daemon, reads end-of-file from the dead pty and selects again at once, for ever (so Python's exit waits
on it, at full CPU); its SIGCONT handler starts application mode again on the dead terminal, whose new
writer thread dies on its first write, and the next writes block on its full queue, the app's shutdown
with them.

This driver: the input thread ends on end-of-file or an I/O error, and asks the app to exit (the
process is ending: `process_end.ending`, with its deadline); SIGCONT resumes only a terminal that is still
there and a process that is not ending; writes and the writer's stop never block on a writer that is
gone. Everything else is Textual's.
"""

from __future__ import annotations

import asyncio
import os
import queue
import selectors
import signal
from codecs import getincrementaldecoder
from typing import Optional

from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

from .process_end import ENDING_NOW, TERMINAL_GONE, ending

#: Seconds a write waits on a writer whose queue is full before the terminal is taken for gone.
WRITE_PATIENCE = 2.0


def terminal_there(fd: int) -> bool:
    """Whether `fd` is still a terminal that can be read and drawn on (a hung-up pty fails these)."""
    try:
        if not os.isatty(fd):
            return False
        os.tcgetpgrp(fd)
        return True
    except OSError:
        return False


class SturdyLinuxDriver(LinuxDriver):
    """`LinuxDriver` that ends with its terminal (see the module's docstring)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._gone = False
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    def start_application_mode(self) -> None:
        self._loop = asyncio.get_running_loop()
        super().start_application_mode()

    def _sigcont_application(self, *args) -> None:
        if self._gone or ENDING_NOW.is_set() or not terminal_there(self.fileno):
            self._terminal_gone()
            return
        super()._sigcont_application(*args)

    def _terminal_gone(self) -> None:
        """The terminal went away: ask the app to exit (it has `DEADLINE` seconds to do so)."""
        if self._gone:
            return
        self._gone = True
        TERMINAL_GONE.set()
        ending(128 + signal.SIGHUP)  # as a closed terminal's SIGHUP would end it
        from .editor import stop_editors

        stop_editors()
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._app.exit)
            except RuntimeError:  # the loop closed meanwhile
                pass

    def write(self, data: str) -> None:
        writer = self._writer_thread
        if writer is None or self._gone:
            return
        if not writer.is_alive():  # it died on a write: the terminal is gone
            self._terminal_gone()
            return
        try:
            writer._queue.put(data, timeout=WRITE_PATIENCE)
        except queue.Full:  # nothing drains it
            self._terminal_gone()

    def close(self) -> None:
        writer = self._writer_thread
        if writer is None:
            return
        try:
            writer._queue.put(None, timeout=WRITE_PATIENCE if writer.is_alive() else 0.01)
        except queue.Full:
            pass
        writer.join(WRITE_PATIENCE)

    def run_input_thread(self) -> None:
        """Read the terminal until the app stops it, or until the terminal is gone."""
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        try:
            while not self.exit_event.is_set():
                ready = selector.select(0.1)
                if ready:
                    try:
                        data = os.read(self.fileno, 4096)
                    except OSError:  # EIO: the pty was hung up
                        data = b""
                    if not data:  # end of file: nothing will ever come again
                        self._terminal_gone()
                        return
                    for event in parser.feed(decode(data)):
                        self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)
        finally:
            selector.close()
