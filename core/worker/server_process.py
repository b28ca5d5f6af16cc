"""The warm worker server as the pool sees it: the process (started on first use, on the interpreter the
agents run on, with this package copied beside its socket and put on that interpreter's path), its
socket's address, and its end: stopped with the pool, or replaced when it stops answering."""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from typing import Optional

from .server import PROTOCOL, reachable
from .temp_dirs import private_temp_dir, sweep_temp_dirs

#: The name the worker package has on the agents' interpreter.
WORKER_PACKAGE = "agentdiff_worker"


def copy_worker_package(into: str) -> dict[str, str]:
    """Copy this package into `into/agentdiff_worker`; the environment that puts it on a Python's path."""
    here = os.path.dirname(os.path.abspath(__file__))
    target = os.path.join(into, WORKER_PACKAGE)
    os.makedirs(target, exist_ok=True)
    for name in os.listdir(here):
        if name.endswith(".py"):
            shutil.copyfile(os.path.join(here, name), os.path.join(target, name))
    path = os.environ.get("PYTHONPATH")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONHOME"}  # agentdiff's own, not the project's
    return {**env, "PYTHONPATH": into + (os.pathsep + path if path else "")}


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


class Unresponsive(Exception):
    """The worker server took a batch and did not answer within HELLO_SECONDS."""


class WorkerServer:
    """The warm server process and its socket; started on first use, stopped with the pool.
    Not tied to an event loop, so one server can serve an app, a CLI run and a test session."""

    def __init__(self, python: Optional[str] = None) -> None:
        self.python = python or sys.executable
        sweep_temp_dirs()
        self._dir = private_temp_dir()
        self.path = os.path.join(self._dir, "workers.sock")
        self.address, self._folder = reachable(self.path)  # what connect takes (a deep TMPDIR's path is too long)
        self._process: Optional[subprocess.Popen] = None
        self._lock = threading.Lock()
        atexit.register(self.close)  # a second Ctrl+C can cut short the cleanup a first one started

    async def ensure(self) -> str:
        """The address to connect to, the server started first unless it is running."""
        if self._process is None or self._process.poll() is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.start)
        return self.address

    def start(self) -> None:
        """Start the server (blocking, about two seconds) unless it is running."""
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                return
            if os.path.exists(self.path):
                os.unlink(self.path)
            log_path = os.path.join(self._dir, "server.log")
            env = copy_worker_package(self._dir)
            try:
                with open(log_path, "wb") as log:
                    process = subprocess.Popen(
                        [self.python, "-m", f"{WORKER_PACKAGE}.server", self.path],
                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, env=env,
                    )
            except OSError as exc:
                raise RuntimeError(f"cannot run {self.python}: {exc.strerror or exc}") from None
            assert process.stdout is not None
            first = process.stdout.readline().decode("utf-8", "replace").split(maxsplit=1)
            if first[:1] != ["ready"]:
                process.terminate()  # it may still run, having printed something else first
                process.wait()
                with open(log_path, "rb") as log:
                    tail = log.read()[-4000:].decode("utf-8", "replace")
                said = f" (it printed {' '.join(first)[:200]!r})" if first else ""
                raise RuntimeError(f"the worker did not start on {self.python}: {_last_line(tail)}{said}")
            try:
                hello = json.loads(first[1]) if len(first) > 1 else {}
            except ValueError:
                hello = {}
            protocol = hello.get("protocol") if isinstance(hello, dict) else None
            if protocol != PROTOCOL:
                process.terminate()
                process.wait()
                raise RuntimeError(f"the worker on {self.python} speaks protocol {protocol}, this agentdiff {PROTOCOL}")
            self._process = process

    def stopped(self) -> bool:
        """Whether the server process is stopped (SIGSTOP, SIGTSTP): Linux's /proc says; elsewhere, never."""
        process = self._process
        if process is None:
            return False
        try:
            with open(f"/proc/{process.pid}/stat", "rb") as stat:
                return stat.read().rsplit(b")", 1)[1].split()[0] in (b"T", b"t")
        except (OSError, IndexError):
            return False

    def resume(self) -> None:
        process = self._process
        if process is not None and process.poll() is None:
            try:
                os.kill(process.pid, signal.SIGCONT)
            except OSError:
                pass

    def replace(self) -> None:
        """The server does not answer: killed (its workers die with it), so the next `ensure` starts anew."""
        with self._lock:
            process = self._process
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
            self._process = None

    def close(self) -> None:
        """Stop the server and every worker it has running (no process outlives the pool)."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()  # the server kills its workers' process groups, then exits
            try:
                self._process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._folder is not None:
            os.close(self._folder)
            self._folder = None
        shutil.rmtree(self._dir, ignore_errors=True)
