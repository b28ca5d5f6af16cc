"""A worker's life: run one job, send back its RunOutput, exit.

Each job gets a fresh process (forked from a warm server), so an edited agent is always imported
anew and nothing one case does can leak into the next. Files the agent opens are noted through an
audit hook, so watch mode knows which prompt and data files a case depends on.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import traceback
from typing import Any

from .jobs import Job, RunOutput

_IGNORED_PREFIXES = tuple(
    p for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__)} if p
)


def _watch_reads(roots: tuple[str, ...], seen: set[str]) -> None:
    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not args or not isinstance(args[0], (str, os.PathLike)):
            return
        path = os.path.abspath(os.fspath(args[0]))
        if path.startswith(roots) and not path.startswith(_IGNORED_PREFIXES) and "__pycache__" not in path:
            seen.add(path)

    sys.addaudithook(hook)


async def run_job(job: Job) -> RunOutput:
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

    return await run_adk(job)


def execute(job: Job, watch_reads: bool = True) -> RunOutput:
    """Run a job in this process; every failure becomes `error` in the output."""
    seen: set[str] = set()
    if watch_reads:
        _watch_reads((os.path.abspath(job.agent.agents_dir) + os.sep,), seen)
    os.environ["AGENTDIFF_REPEAT"] = str(job.repeat)  # which of num_runs this is, for agents that care
    os.environ["AGENTDIFF_MODE"] = job.mode
    start = time.perf_counter()
    try:
        out = asyncio.run(run_job(job))
    except BaseException as exc:  # loading failed, or the agent escaped its turn (SystemExit too)
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        out = RunOutput(error=f"{detail}")
    out.seconds = time.perf_counter() - start
    out.files_read = sorted(seen)
    return out


def main() -> None:
    """`python -m agentdiff.core.worker.child`: a job on stdin, its result as the last stdout line
    (used where workers cannot be forked from the warm server)."""
    out = execute(Job.model_validate_json(sys.stdin.read()))
    sys.stdout.write("\n" + out.model_dump_json() + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
