"""A worker's life: run a batch of jobs for one agent concurrently, send each result as it is
ready, exit.

Each batch gets a fresh process (forked from a warm server), so an edited agent is always imported
anew. The jobs of a batch share the agent's module (as in ADK's own evaluator, which runs cases
concurrently in one process); their I/O overlaps on one event loop. What a run depends on is recorded
for watch mode and `--changed-since`: every module the process has imported (`sys.modules`, so a module
imported before the fork counts too), every file opened for reading (an audit hook: prompts, YAML, data)
and, when a run fails, the files of its traceback (a module whose import failed is in neither). The
environment's files (the interpreter's prefixes, `site-packages`, the standard library, this package)
are left out here; the parent keeps what lies in the project (`core/run/runner.py`).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
import traceback
from typing import Any, Callable, Optional, Sequence

from .hints import how_to_fix, project_origin, said
from .jobs import Job, RunOutput


def _environment() -> tuple[str, ...]:
    """Folders whose files are the environment's, not the project's."""
    import site
    import sysconfig

    # a virtual environment's folder, whole; not the base interpreter's prefix (`/usr` holds projects too)
    found = {os.path.dirname(os.__file__), os.path.dirname(os.path.abspath(__file__))}
    if sys.prefix != sys.base_prefix:
        found.add(sys.prefix)
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            found.add(sysconfig.get_path(key))
        except (KeyError, ValueError):
            pass
    try:
        found.update(site.getsitepackages())
        found.add(site.getusersitepackages())
    except (AttributeError, ValueError):
        pass
    return tuple(sorted({os.path.abspath(p).rstrip(os.sep) + os.sep for p in found if p}))


_IGNORED_PREFIXES = _environment() + ("/proc/", "/sys/", "/dev/")
_MAX_RECORDED = 20_000  # files opened (an agent that opens a file per item should not grow the record without end)
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class _Record:
    """The files a batch's runs depend on, as absolute paths."""

    def __init__(self) -> None:
        self.opened: set[str] = set()
        self._modules: dict[str, tuple[int, Optional[str]]] = {}  # module name → (id of the module, its file)

    def note(self, path: str) -> None:
        if path.startswith(_IGNORED_PREFIXES) or "__pycache__" in path or len(self.opened) >= _MAX_RECORDED:
            return
        self.opened.add(path)

    def watch_opens(self) -> None:
        def hook(event: str, args: tuple[Any, ...]) -> None:
            if event != "open" or not args or not isinstance(args[0], (str, os.PathLike)):
                return
            mode, flags = (args[1], args[2]) if len(args) >= 3 else (None, 0)
            if isinstance(mode, str) and any(c in mode for c in "wax+"):
                return  # what the agent writes is its output, not what it depends on
            if mode is None and isinstance(flags, int) and flags & _WRITES:
                return
            try:
                self.note(os.path.abspath(os.fspath(args[0])))
            except (TypeError, ValueError):
                pass

        sys.addaudithook(hook)

    def note_failure(self, exc: BaseException) -> None:
        """The project files a failure passed through (a module that failed to import is in no record)."""
        seen = 0
        while exc is not None and seen < 8:
            filename = getattr(exc, "filename", None) if isinstance(exc, SyntaxError) else None
            if isinstance(filename, str) and os.path.isabs(filename):
                self.note(filename)
            tb = exc.__traceback__
            while tb is not None:
                name = tb.tb_frame.f_code.co_filename
                if os.path.isabs(name):
                    self.note(name)
                tb = tb.tb_next
            exc, seen = exc.__cause__ or exc.__context__, seen + 1

    def files(self) -> list[str]:
        """Every file recorded so far, with the file of every module imported now. `sys.modules` keeps the
        order modules came in, so it is read from the newest back to the first module seen before (at an
        earlier call, or in the server before the fork: `prime`); the modules older than that are known.
        (Reading every module in a forked process would copy the pages they lie in: ~5 ms a batch.)"""
        known = self._modules
        for name, module in reversed(sys.modules.items()):
            seen = known.get(name) or _PRIMED.get(name)
            if seen is not None and seen[0] == id(module):
                break
            known[name] = (id(module), _module_file(module))
        found = set(self.opened)
        found.update(_PRIMED_FILES)
        found.update(path for _, path in known.values() if path is not None)
        return sorted(found)


def _module_file(module: Any) -> Optional[str]:
    """The file a module was loaded from, when it is not the environment's."""
    try:
        spec = getattr(module, "__spec__", None)
        path = spec.origin if spec is not None else getattr(module, "__file__", None)
    except Exception:  # noqa: BLE001 - a module object that raises on attribute access
        return None
    if isinstance(path, str) and os.path.isabs(path):
        path = os.path.normpath(path)  # imported through `…/agent/../../common`: one name for one file
        if not path.startswith(_IGNORED_PREFIXES) and "__pycache__" not in path:
            return path
    return None


#: The modules loaded before the fork (`prime`, in the worker server): name → (id, file or None).
_PRIMED: dict[str, tuple[int, Optional[str]]] = {}
_PRIMED_FILES: tuple[str, ...] = ()  # of those, the files that are not the environment's


def prime() -> None:
    """Note every module loaded now (the worker server calls it before it forks), so a forked worker's
    record reads only the modules loaded after."""
    global _PRIMED_FILES
    _PRIMED.clear()
    for name, module in list(sys.modules.items()):
        _PRIMED[name] = (id(module), _module_file(module))
    _PRIMED_FILES = tuple(sorted({path for _, path in _PRIMED.values() if path is not None}))


async def run_job(job: Job) -> RunOutput:
    if job.judge is not None:
        from .adk_adapter import load_dotenv
        from .judge import judge

        load_dotenv(job.agent)  # the judge reaches its model as the agent does (`adk eval` loads it too)
        return RunOutput(judged=await judge(job.judge))
    if job.grade is not None:
        from .adk_adapter import load_dotenv
        from .custom_metrics import grade

        load_dotenv(job.agent)  # a metric that calls a model reaches it as the agent does
        return RunOutput(judged=await grade(job.grade))
    if job.fixture is not None:
        from .fixture_replay import run_fixture

        return await run_fixture(job)
    kind = job.agent.kind
    if kind == "auto":
        from .adk_adapter import load_module

        module = load_module(job.agent)
        is_adk = any(getattr(module, name, None) is not None for name in ("app", "root_agent", "get_agent_async"))
        kind = "adk" if is_adk or not callable(getattr(module, "run_turn", None)) else "native"
    if kind == "native":
        from .native_adapter import run_native

        return await run_native(job)
    from .adk_adapter import run_adk

    out = await run_adk(job)
    if job.then_grade is not None and out.error is None:
        out.judged = await _graded(job.then_grade, out)
    return out


async def _graded(spec: dict[str, Any], out: RunOutput) -> Optional[dict[str, Any]]:
    """An agents-cli run's metric results, graded on its trace as `eval grade` grades it (None: the
    run gave no response to grade)."""
    from .agents_cli_trace import app_agents, generated_events, instance, trace_case
    from .custom_metrics import grade

    case = trace_case(spec["case"], generated_events(out.events), app_agents(out.app_agents), out.root_agent or "root_agent")
    graded = instance(case)
    if graded is None:
        return None
    return await grade({**spec, "instance": graded, "case": case})


async def _one(job: Job, timeout: Optional[float], record: Optional[_Record] = None,
               gone: Callable[[], bool] = lambda: False) -> RunOutput:
    start = time.perf_counter()

    async def unless_gone() -> RunOutput:
        if gone():  # given back before it began (another run blocked the loop): it runs elsewhere
            return RunOutput(error="given back")
        return await run_job(job)

    try:
        if job.fixture is not None:  # fixtures one at a time, each timed from its own start
            from .fixture_replay import one_at_a_time

            async with one_at_a_time():
                start = time.perf_counter()
                out = await asyncio.wait_for(unless_gone(), timeout)
        else:
            out = await asyncio.wait_for(unless_gone(), timeout)
    except asyncio.TimeoutError:
        from .harness import RUNNING

        harness = RUNNING.get(id(job))
        waiting = harness.waiting_on() if harness is not None else ""
        if job.judge is not None:
            from .judge import JUDGING

            calls = JUDGING.get(id(job.judge))
            waiting = calls.waiting_on() if calls is not None else "waiting for the judge"
        out = RunOutput(error=f"timed out after {timeout:g} s (the run was stopped{', ' + waiting if waiting else ''})")
    except BaseException as exc:  # loading failed, or the agent escaped its turn (SystemExit too)
        first = traceback.format_exception_only(type(exc), exc)[-1].strip()
        out = RunOutput(error=(said(exc) if "\n" in first else first) + how_to_fix(exc))  # one line, whatever the message
        if record is not None:
            record.note_failure(exc)
        out.error_file, out.error_line, out.error_trace = project_origin(exc, job.agent.agents_dir)
    out.seconds = time.perf_counter() - start
    return out


def _importing() -> bool:
    """Whether the main thread is importing a module now (the agent's own, or one a tool imports)."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _blocking_job(jobs: Sequence[Job]) -> Optional[int]:
    """Which job's code the main thread is in now (the one blocking the event loop), if any."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    while frame is not None:
        if frame.f_code is run_job.__code__:
            job = frame.f_locals.get("job")
            return next((index for index, candidate in enumerate(jobs) if candidate is job), None)
        frame = frame.f_back
    return None


def _watch_time(jobs: Sequence[Job], timeout: float, started: dict[int, float],
                answer: Callable[[int, RunOutput], bool], abort: Callable[[], None]) -> None:
    """`asyncio.wait_for` cannot stop a run that blocks the event loop (`time.sleep`, a busy loop)
    or one that swallows its cancellation; the first stops every run of its batch. Past a run's
    timeout, this thread answers the culprit as timed out (the run the loop is stuck in, or else the
    runs past their time) and ends the batch; the others run again on their own. So a stuck run
    takes its timeout once, not twice, and the others are not blamed."""

    def watch() -> None:
        time.sleep(timeout + 0.5)
        while True:
            now = time.perf_counter()
            overdue = [index for index, start in list(started.items()) if now - start > timeout + 0.5]
            if overdue:
                break
            time.sleep(0.25)
        blocking = _blocking_job(jobs)
        answered = False
        for index in [blocking] if blocking is not None else overdue:
            out = RunOutput(error=f"timed out after {timeout:g} s (the agent's process was stopped)")
            out.seconds = now - started.get(index, now)
            answered = answer(index, out) or answered
        if answered:
            abort()

    threading.Thread(target=watch, name="agentdiff-timeout", daemon=True).start()


#: Seconds one run may hold its batch's event loop (a blocking call in a tool: `time.sleep`, a synchronous
#: HTTP request) before the batch's other runs are given back, to run in processes of their own.
STALL_SECONDS = 2.0


def _watch_stalls(jobs: Sequence[Job], beat: list[float], give_back: Callable[[int], bool]) -> None:
    """A run that blocks the loop holds up every other run of its batch (they share the loop): past
    STALL_SECONDS, the others are given back (`give_back(blocking run)`), once."""

    def watch() -> None:
        while True:
            time.sleep(0.25)
            if _importing():  # an import (the agent's, loaded once for the batch) holds every run alike: no
                beat[0] = time.perf_counter()  # use moving them, and a stall is counted from its end, not its start
                continue
            if time.perf_counter() - beat[0] < STALL_SECONDS:
                continue
            blocking = _blocking_job(jobs)
            if blocking is not None and give_back(blocking):
                return

    threading.Thread(target=watch, name="agentdiff-stalls", daemon=True).start()


def execute_batch(jobs: Sequence[Job], timeout: Optional[float], send: Callable[[int, RunOutput], None],
                  abort: Optional[Callable[[], None]] = None, moved: Optional[Callable[[list[int]], None]] = None) -> None:
    """Run `jobs` concurrently in this process; `send(index, output)` as each finishes. With `abort`
    (which ends the process), a run that blocks the event loop past `timeout` is answered as timed out
    and `abort` is called. With `moved`, a run that blocks the loop past STALL_SECONDS has the batch's
    other unanswered runs given back (`moved(indices)`: the caller runs them elsewhere; their results here
    are dropped), so one run's blocking code never holds up the others."""
    record = _Record()
    record.watch_opens()
    os.environ["AGENTDIFF_REPEAT"] = str(jobs[0].repeat)  # a batch holds one repeat: agents may read it
    os.environ["AGENTDIFF_MODE"] = jobs[0].mode
    unanswered = set(range(len(jobs)))
    lock = threading.Lock()

    def answer(index: int, out: RunOutput) -> bool:
        with lock:
            if index not in unanswered:
                return False
            unanswered.discard(index)
            send(index, out)
            return True

    started: dict[int, float] = {}  # the runs not yet answered, and when each started
    if abort is not None and timeout:
        _watch_time(jobs, timeout, started, answer, abort)
    beat = [time.perf_counter()]  # when the loop last had a turn

    given_back: set[int] = set()
    tasks: dict[int, asyncio.Task] = {}
    loop_of: list[asyncio.AbstractEventLoop] = []

    def give_back(blocking: int) -> bool:
        with lock:
            others = sorted(i for i in unanswered if i != blocking)
            for index in others:
                unanswered.discard(index)
                started.pop(index, None)
                given_back.add(index)
            if others and moved is not None:
                moved(others)
        for index in others:  # those under way stop here once the loop has a turn; the others never begin
            task = tasks.get(index)
            if task is not None and loop_of:
                loop_of[0].call_soon_threadsafe(task.cancel)
        return True

    if moved is not None and len(jobs) > 1:
        _watch_stalls(jobs, beat, give_back)

    async def all_jobs() -> None:
        async def one(index: int, job: Job) -> None:
            tasks[index] = asyncio.current_task()  # type: ignore[assignment]
            started[index] = time.perf_counter()
            try:
                out = await _one(job, timeout, record, lambda: index in given_back)
            except asyncio.CancelledError:
                if index in given_back:
                    return  # it runs elsewhere
                raise
            out.files_read = record.files()
            started.pop(index, None)
            answer(index, out)

        async def heartbeat() -> None:
            while True:
                beat[0] = time.perf_counter()
                await asyncio.sleep(0.1)

        loop_of.append(asyncio.get_running_loop())
        beating = asyncio.ensure_future(heartbeat())
        try:
            await asyncio.gather(*(one(i, job) for i, job in enumerate(jobs)))
        finally:
            beating.cancel()

    asyncio.run(all_jobs())


def main() -> None:
    """`python -m agentdiff_worker.child`: a job on stdin, its result as the last stdout line
    (used where workers cannot be forked from the warm server)."""
    results: list[RunOutput] = []
    execute_batch([Job.model_validate_json(sys.stdin.read())], None, lambda _, out: results.append(out))
    sys.stdout.write("\n" + results[0].model_dump_json() + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
