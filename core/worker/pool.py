"""The worker pool: one fresh process per run, forked from a warm server, watched from asyncio.

* Isolation: a case that raises, hangs past its timeout, calls `sys.exit`, or kills its process
  (`os._exit`, a segfault) ends as an error with the reason; the other cases go on.
* Warmth: workers are forked from a server process (`server.py`) that imported google-adk and ran a
  tiny agent once, so a run pays neither the imports nor ADK's lazy set-up. The server never
  imports agent code, so every run imports the agent as it is on disk now.
* Concurrency: at most `jobs` workers at a time.

Where fork and Unix sockets are missing, each run is a fresh `python -m agentdiff.core.worker.child`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any, Optional

from .jobs import Job, RunOutput

DEFAULT_TIMEOUT = 120.0
_HEADER_SIZE = 4


def _describe_exit(code: Optional[int]) -> str:
    if code is None:
        return "the agent's process ended without a result"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the agent's process was killed by {name}"
    return f"the agent's process exited with code {code} before finishing the run"


async def _read_frame(reader: asyncio.StreamReader) -> Optional[dict[str, Any]]:
    try:
        header = await reader.readexactly(_HEADER_SIZE)
        body = await reader.readexactly(int.from_bytes(header, "big"))
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    return json.loads(body)


class WorkerServer:
    """The warm server process and its socket; started on first use, stopped with the pool.
    Not tied to an event loop, so one server can serve an app, a CLI run and a test session."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="agentdiff-")
        self.path = os.path.join(self._dir, "workers.sock")
        self._process: Optional[subprocess.Popen] = None
        self._lock = threading.Lock()

    async def ensure(self) -> str:
        if self._process is None or self._process.poll() is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.start)
        return self.path

    def start(self) -> None:
        """Start the server (blocking, about two seconds) unless it is running."""
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                return
            if os.path.exists(self.path):
                os.unlink(self.path)
            log_path = os.path.join(self._dir, "server.log")
            with open(log_path, "wb") as log:
                process = subprocess.Popen(
                    [sys.executable, "-m", "agentdiff.core.worker.server", self.path],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                )
            assert process.stdout is not None
            if process.stdout.readline().strip() != b"ready":
                process.wait()
                with open(log_path, "rb") as log:
                    tail = log.read()[-2000:].decode("utf-8", "replace").strip()
                raise RuntimeError(f"the agentdiff worker server did not start: {tail or 'no output'}")
            self._process = process

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        shutil.rmtree(self._dir, ignore_errors=True)


class WorkerPool:
    def __init__(self, jobs: Optional[int] = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.jobs = max(1, jobs or os.cpu_count() or 2)
        self.timeout = timeout
        self._slots: Optional[asyncio.Semaphore] = None
        self._slots_loop: Optional[asyncio.AbstractEventLoop] = None
        self._forking = hasattr(os, "fork") and hasattr(__import__("socket"), "AF_UNIX")
        self._server = WorkerServer() if self._forking else None

    async def start(self) -> None:
        """Start the warm server now (it takes a couple of seconds) rather than on the first run."""
        if self._server is not None:
            await self._server.ensure()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:
            self._slots, self._slots_loop = asyncio.Semaphore(self.jobs), loop
        return self._slots

    async def run(self, job: Job, timeout: Optional[float] = None) -> RunOutput:
        async with self._semaphore():
            limit = self.timeout if timeout is None else timeout
            if self._server is None:
                return await self._run_spawned(job, limit)
            return await self._run_forked(job, limit)

    async def _run_forked(self, job: Job, timeout: float) -> RunOutput:
        assert self._server is not None
        path = await self._server.ensure()
        reader, writer = await asyncio.open_unix_connection(path, limit=1 << 26)
        try:
            data = json.dumps({"job": json.loads(job.model_dump_json())}).encode()
            writer.write(len(data).to_bytes(_HEADER_SIZE, "big") + data)
            await writer.drain()
            hello = await _read_frame(reader)
            if not hello or "pid" not in hello:
                return RunOutput(error="the worker server refused the run")
            pid = hello["pid"]
            try:
                frame = await asyncio.wait_for(_read_frame(reader), timeout)
            except asyncio.TimeoutError:
                _kill(pid)
                return RunOutput(error=f"timed out after {timeout:g} s (the agent's process was stopped)")
            except asyncio.CancelledError:
                _kill(pid)
                raise
            if frame is not None and "result" in frame:
                await _read_frame(reader)  # the exit status follows
                return RunOutput.model_validate(frame["result"])
            return RunOutput(error=_describe_exit(frame.get("exit") if frame else None))
        finally:
            writer.close()

    async def _run_spawned(self, job: Job, timeout: float) -> RunOutput:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agentdiff.core.worker.child",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        try:
            out, _ = await asyncio.wait_for(process.communicate(job.model_dump_json().encode()), timeout)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
            return RunOutput(error=f"timed out after {timeout:g} s (the agent's process was stopped)")
        marker = out.rfind(b"\n{")
        if process.returncode != 0 or marker < 0:
            return RunOutput(error=_describe_exit(process.returncode if process.returncode else None))
        return RunOutput.model_validate_json(out[marker + 1 :])


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
