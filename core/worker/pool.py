"""The worker pool: one fresh process per run, forked from a warm server, watched from asyncio.

* Isolation: a case that raises, hangs past its timeout, calls `sys.exit`, or kills its process
  (`os._exit`, a segfault) ends as an error with the reason; the other cases go on.
* Warmth: workers are forked from a server process (`server.py`) that imported google-adk and ran a
  tiny agent once, so a run pays neither the imports nor ADK's lazy set-up. The server never
  imports agent code, so every run imports the agent as it is on disk now.
* Concurrency: at most `jobs` workers at a time.

* The project's Python: the server runs on the interpreter it is given (the project's, with the
  project's dependencies and ADK version), not necessarily agentdiff's own. This package needs nothing
  but the standard library and pydantic (which ADK brings) and imports only itself, so it is copied
  as `agentdiff_worker` beside the server's socket and put on that interpreter's path: agentdiff
  need not be installed in the project's environment. The server's first line and every batch carry
  `PROTOCOL`, so a worker of another agentdiff version is a clear error.

Where fork and Unix sockets are missing, each run is a fresh `python -m agentdiff_worker.child`.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .jobs import Job, RunOutput
from .server import PROTOCOL
from .server_process import WORKER_PACKAGE, WorkerServer, Unresponsive, copy_worker_package
from .temp_dirs import private_temp_dir, sweep_temp_dirs  # noqa: F401 - the pool's words (tests, doctor)

DEFAULT_TIMEOUT = 120.0
#: Memory (data segment) a worker process may use before its allocations fail with MemoryError.
DEFAULT_MEMORY_MB = 4096
#: Runs in flight per CPU by default: agent runs mostly wait on the model, so they overlap well; a
#: model's quota is found by each worker's adaptive limit (`model_calls.py`), so the default starts high.
DEFAULT_JOBS_PER_CPU = 128
#: Seconds the worker server has to take a batch and answer with its worker's pid (it forks at once, but
#: may be busy loading the judges' modules on a loaded machine): past them it is taken for stuck, and
#: replaced. A server found stopped (SIGSTOP) is sent SIGCONT within a second, and replaced if that fails.
HELLO_SECONDS = 60.0
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


#: How the worker starts the frame of a result (`server._child`): `{"index": N, "result": {…}}`.
_RESULT_HEAD, _RESULT_MIDDLE = b'{"index": ', b', "result": '


async def _read_frame(reader: asyncio.StreamReader) -> Optional[dict[str, Any]]:
    """The next frame; a result's `result` already a RunOutput, validated from its JSON bytes by
    pydantic in one pass (not parsed to Python objects first, then validated)."""
    try:
        header = await reader.readexactly(_HEADER_SIZE)
        body = await reader.readexactly(int.from_bytes(header, "big"))
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    if body.startswith(_RESULT_HEAD) and body.endswith(b"}"):
        index, middle, result = body[len(_RESULT_HEAD):].partition(_RESULT_MIDDLE)
        if middle and index.isdigit():
            output = RunOutput.model_validate_json(result[:-1])
            output._size = len(result) - 1
            return {"index": int(index), "result": output}
    return json.loads(body)


@dataclass
class _Pending:
    job: Job
    timeout: float
    future: asyncio.Future
    isolated: bool = False  # run alone (a retry after its batch's process died, or given back by a stalled one)


class WorkerPool:
    """Runs jobs in worker processes, `jobs` at a time, over at most `processes` processes.

    Jobs that arrive together for the same agent (and the same repeat) share a process: they are
    sent as one batch and run concurrently on its event loop, so agent I/O overlaps as it does in
    ADK's evaluator. A batch is always a fresh process, so no run sees stale code. When a batch's
    process dies or hangs, the jobs it had not finished are run again one per process, so the
    culprit ends as an error with its reason and the others are unaffected.
    """

    def __init__(
        self, jobs: Optional[int] = None, timeout: float = DEFAULT_TIMEOUT, processes: Optional[int] = None,
        memory_mb: Optional[int] = DEFAULT_MEMORY_MB, python: Optional[str] = None,
    ) -> None:
        cpus = os.cpu_count() or 2
        self.python = python or sys.executable  # the interpreter the agents run on
        self.memory_mb = memory_mb
        self.jobs = max(1, jobs or DEFAULT_JOBS_PER_CPU * cpus)
        self.processes = max(1, min(self.jobs, processes or cpus))
        self.timeout = timeout
        self._forking = hasattr(os, "fork") and hasattr(__import__("socket"), "AF_UNIX")
        self._server = WorkerServer(self.python) if self._forking else None
        self._package_dir: Optional[str] = None  # the worker package, for spawned runs
        self._queue: list[_Pending] = []
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._dispatcher: Optional[asyncio.Task] = None
        self._slots: Optional[asyncio.Semaphore] = None
        self._running: set[asyncio.Task] = set()

    async def start(self) -> None:
        """Start the warm server now (it takes a couple of seconds) rather than on the first run."""
        if self._server is not None:
            await self._server.ensure()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._package_dir is not None:
            shutil.rmtree(self._package_dir, ignore_errors=True)

    async def run(self, job: Job, timeout: Optional[float] = None) -> RunOutput:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a pool can outlive an event loop (tests, the CLI)
            self._loop, self._queue, self._dispatcher = loop, [], None
            self._slots = asyncio.Semaphore(self.processes)
        pending = _Pending(job, self.timeout if timeout is None else timeout, loop.create_future())
        self._queue.append(pending)
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = loop.create_task(self._dispatch())
        return await pending.future

    def _batch_size(self) -> int:
        return max(1, -(-self.jobs // self.processes))

    async def _dispatch(self) -> None:
        assert self._slots is not None
        while self._queue:
            await self._slots.acquire()
            await asyncio.sleep(0.005)  # let a burst of runs arrive, so they can share a process
            if not self._queue:
                self._slots.release()
                break
            first = self._queue[0]
            if first.isolated:
                batch = [first]
            else:
                key = _batch_key(first.job)
                group = [p for p in self._queue if not p.isolated and _batch_key(p.job) == key]
                batch = group[: _share(len(group), 1 + getattr(self._slots, "_value", 0), self._batch_size())]
            for item in batch:
                self._queue.remove(item)
            held = [True]

            def release(held: list[bool] = held) -> None:  # once: at its end, or when its worker gives runs back
                if held[0]:
                    held[0] = False
                    self._slots.release()  # type: ignore[union-attr]

            task = asyncio.get_running_loop().create_task(self._run_batch(batch, release))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
            task.add_done_callback(lambda _, release=release: release())

    async def _run_batch(self, batch: list[_Pending], release: Callable[[], None] = lambda: None) -> None:
        moved: set[int] = set()  # given back by the worker: queued again, not this batch's to answer
        try:
            if self._server is None:
                results = {0: await self._run_spawned(batch[0].job, batch[0].timeout)}
                for item in batch[1:]:
                    results[len(results)] = await self._run_spawned(item.job, item.timeout)
                failure = None
            else:
                try:
                    results, failure = await self._run_forked(batch, release, moved)
                except Unresponsive:  # stopped (SIGSTOP), or stuck: a new server, and the batch once more
                    self._server.replace()
                    try:
                        results, failure = await self._run_forked(batch, release, moved)
                    except Unresponsive:
                        self._server.replace()
                        results, failure = {}, "the worker server did not answer, twice (it was replaced)"
        except Exception as exc:  # the server itself failed: every run says so
            results, failure = {}, f"could not start the agent's process: {exc}"
        unfinished = [item for index, item in enumerate(batch) if index not in results and index not in moved]
        for index, out in results.items():
            if not batch[index].future.done():
                batch[index].future.set_result(out)
        if not unfinished:
            return
        if len(batch) == 1 or failure is None:
            for item in unfinished:
                if not item.future.done():
                    item.future.set_result(RunOutput(error=failure or "the agent's process ended without a result"))
            return
        for item in unfinished:  # find the culprit: each unfinished run again, on its own
            item.isolated = True
        self._queue[:0] = unfinished
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch())

    async def _run_forked(self, batch: list[_Pending], release: Callable[[], None] = lambda: None,
                          moved: Optional[set[int]] = None) -> tuple[dict[int, RunOutput], Optional[str]]:
        assert self._server is not None
        path = await self._server.ensure()
        timeout = max(item.timeout for item in batch)
        reader, writer = await asyncio.open_unix_connection(path, limit=1 << 26)
        results: dict[int, RunOutput] = {}
        try:
            message = {"protocol": PROTOCOL, "jobs": [json.loads(item.job.model_dump_json()) for item in batch],
                       "timeout": timeout, "memory_mb": self.memory_mb}
            data = json.dumps(message).encode()
            writer.write(len(data).to_bytes(_HEADER_SIZE, "big") + data)
            try:
                await asyncio.wait_for(writer.drain(), HELLO_SECONDS)  # a server that reads nothing fills the socket
            except asyncio.TimeoutError:
                raise Unresponsive() from None
            hello = await self._hello(reader)  # the server forks and answers at once, unless stopped or stuck
            if not hello or "pid" not in hello:
                return results, (hello or {}).get("error") or "the worker server refused the run"
            pid = hello["pid"]
            failed: Optional[str] = None
            moved = set() if moved is None else moved  # given back by the worker, running elsewhere now
            deadline = asyncio.get_running_loop().time() + timeout + 1  # the worker stops slow runs itself
            grace = True
            while True:
                remaining = deadline - asyncio.get_running_loop().time()
                try:
                    frame = await asyncio.wait_for(_read_frame(reader), max(remaining, 0.01))
                except asyncio.TimeoutError:
                    if grace:  # answers may be waiting unread (this process was suspended, Ctrl+Z): read them first
                        grace, deadline = False, asyncio.get_running_loop().time() + 1
                        continue
                    _kill(pid)
                    return results, f"timed out after {timeout:g} s (the agent's process was stopped)"
                except asyncio.CancelledError:
                    _kill(pid)
                    raise
                if frame is None:
                    return results, failed or "the agent's process ended without a result"
                if "moved" in frame:  # one run blocks the worker's loop: the others run in processes of their own
                    release()  # the stalled run no longer counts against `processes`: the others take its place
                    for index in frame["moved"]:
                        if isinstance(index, int) and 0 <= index < len(batch) and index not in results:
                            self._give_back(batch[index])
                            moved.add(index)
                    if len(results) + len(moved) == len(batch):
                        return results, None
                    continue
                if "failure" in frame:  # the worker itself failed; its exit follows
                    failed = self._failed(str(frame["failure"]))
                    continue
                if "result" in frame:
                    index = frame["index"]
                    results[index] = frame["result"]
                    future = batch[index].future
                    if not future.done():
                        future.set_result(results[index])  # hand each run over as soon as it is done
                    if len(results) + len(moved) == len(batch):
                        return results, None  # the exit status adds nothing now
                    continue
                code = frame.get("exit")
                return results, None if len(results) + len(moved) == len(batch) else failed or _describe_exit(code)
        finally:
            writer.close()

    async def _hello(self, reader: asyncio.StreamReader) -> Optional[dict[str, Any]]:
        """The server's answer to a batch; Unresponsive when it is stopped and stays so after SIGCONT, or
        says nothing for HELLO_SECONDS."""
        assert self._server is not None
        answer = asyncio.ensure_future(_read_frame(reader))
        began, resumed = asyncio.get_running_loop().time(), False
        try:
            while True:
                done, _ = await asyncio.wait({answer}, timeout=1.0)
                if done:
                    return answer.result()
                if self._server.stopped():
                    if resumed:
                        raise Unresponsive()
                    self._server.resume()  # SIGCONT: its batches in flight go on, none is lost
                    resumed = True
                elif asyncio.get_running_loop().time() - began > HELLO_SECONDS:
                    raise Unresponsive()
        finally:
            if not answer.done():
                answer.cancel()

    def _give_back(self, item: "_Pending") -> None:
        """A run its worker gave back (another run of its batch blocks that worker's loop): run again on
        its own, in a process of its own."""
        item.isolated = True
        self._queue.append(item)
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch())

    def _failed(self, reason: str) -> str:
        text = f"the agent's process failed: {reason}"
        if reason.startswith("MemoryError") and self.memory_mb:
            text += f" (a worker may use {self.memory_mb} MB: `memory_mb` in the configuration)"
        return text

    async def _run_spawned(self, job: Job, timeout: float) -> RunOutput:
        if self._package_dir is None:
            self._package_dir = private_temp_dir()
            atexit.register(shutil.rmtree, self._package_dir, True)
        process = await asyncio.create_subprocess_exec(
            self.python, "-m", f"{WORKER_PACKAGE}.child",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=copy_worker_package(self._package_dir),
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
        output = RunOutput.model_validate_json(out[marker + 1 :])
        output._size = len(out) - marker - 1
        return output


def _share(group: int, free: int, most: int) -> int:
    """How many of a group of `group` waiting runs one process takes, with `free` processes free now
    (this one among them) and at most `most` runs a process: the group spread evenly over the free
    processes, and over as few batches of at most `most` as hold it, so no batch is left with a
    remainder (400 runs, 128 at most: four batches of 100, not 128, 128, 128 and 16)."""
    size = max(1, min(most, -(-group // max(1, free))))
    batches = -(-group // size)
    return max(1, -(-group // batches))


def _batch_key(job: Job) -> tuple:
    # `adk test` fixtures share a process only with each other: each loads its agent afresh, makes its
    # workflows sequential and seeds `random`, one after another (`fixture_replay`)
    return (job.agent.agents_dir, job.agent.name, job.agent.import_from, job.agent.entry, job.agent.sub_agent, job.repeat, job.mode, job.streaming,
            job.judge is not None, job.fixture is not None)


def _kill(pid: int) -> None:
    """Stop a worker and everything it started (it leads its own process group)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            continue
