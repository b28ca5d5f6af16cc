"""A fake worker pool for Pilot tests: every run is answered from canned outputs of the real sample
agents (`fixtures/canned_outputs.json`, made by `fixtures/make_canned_outputs.py`), so scoring,
diffing, accept and undo run for real and only the agent's execution is faked.

* `CannedPool(root, scenarios)` answers a job from the first scenario holding its key (the case id
  relative to the project, the mode, the streaming mode, the repeat). `samples` is the sample
  project as it is; `prompt_edit` is home_automation with its prompt edited (`PROMPT_EDIT`).
* `pool.answer(case_id, output_or_callable)` overrides one case: a `RunOutput` (an error is
  `RunOutput(error=…)`), or a callable of the job (sync or async), e.g. `pool.from_scenario(…)` or
  a `Hanging` run that waits until the test releases it.
* `pool.calls` / `pool.jobs` / `pool.take_jobs()` say what ran; `pool.misses` lists jobs it had no
  answer for (`tui_support.settle` fails on them).
* `RecordingPool(real_pool)` records what a real pool returned, and `assert_canned` says whether
  that still equals the canned outputs (ids and timestamps, which differ per run, made canonical).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Optional, Sequence, Union

from agentdiff.core.worker.jobs import Job, RunOutput

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "canned_outputs.json"
REGENERATE = ".venv/bin/python tests/fixtures/make_canned_outputs.py"
ROOT_MARK = "$ROOT"  # the project root, in paths inside the canned outputs
PROMPT_EDIT = ("never invent a device", "never make up a device")  # home_automation/prompt.md, scenario `prompt_edit`

Key = tuple[str, str, str, int]  # case id (relative to the project), mode, streaming, repeat
Answer = Union[RunOutput, Callable[[Job], Union[RunOutput, Awaitable[RunOutput]]]]


def key_of(job: Job) -> Key:
    return (job.case_id, job.mode, job.streaming, job.repeat)


# --- canonical outputs: what a run produced, without what differs from one run to the next -----------

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_VOLATILE = ("seconds", "turn_seconds", "turn_model_seconds", "turn_tool_seconds", "log")  # timings, and what the agent printed


def canonical(output: Union[RunOutput, dict], root: Optional[Path] = None) -> dict:
    """An output as JSON data, with ids (uuids, numbered by first appearance, so the links between
    events, calls and responses stay), event timestamps (ranked, so their order stays) and the
    project root (as `$ROOT`) made the same for every run; timings and `log` dropped."""
    data = output.model_dump(mode="json") if isinstance(output, RunOutput) else json.loads(json.dumps(output))
    for name in _VOLATILE:
        data.pop(name, None)
    for call in [*(data.get("exchanges") or []), *(data.get("tools") or [])]:  # when each call ran: a timing
        call.pop("start", None)
        call.pop("end", None)
    ids: dict[str, str] = {}
    stamps: list[float] = []

    def fake_id(match: re.Match) -> str:
        return ids.setdefault(match.group(0), f"00000000-0000-4000-8000-{len(ids):012d}")

    def text(value: str) -> str:
        if root is not None:
            value = value.replace(str(root), ROOT_MARK)
        return _UUID.sub(fake_id, value)

    def walk(value: Any, key: Optional[str] = None) -> Any:
        if isinstance(value, dict):
            return {text(k): walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        if isinstance(value, str):
            return text(value)
        if key == "timestamp" and isinstance(value, (int, float)):
            stamps.append(value)
        return value

    data = walk(data)
    ranks = {stamp: 1_800_000_000.0 + index / 1000 for index, stamp in enumerate(sorted(set(stamps)))}

    def restamp(value: Any, key: Optional[str] = None) -> Any:
        if isinstance(value, dict):
            return {k: restamp(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [restamp(v, key) for v in value]
        return ranks[value] if key == "timestamp" and value in ranks else value

    return restamp(data)


def reroot(value: Any, root: Path) -> Any:
    if isinstance(value, dict):
        return {reroot(k, root): reroot(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [reroot(v, root) for v in value]
    return value.replace(ROOT_MARK, str(root)) if isinstance(value, str) else value


def unshare(value: Any, table: list) -> Any:
    """The fixture's `{"$shared": n}` references replaced by the values they stand for."""
    if isinstance(value, dict):
        if value.keys() == {"$shared"}:
            return unshare(table[value["$shared"]], table)
        return {k: unshare(v, table) for k, v in value.items()}
    if isinstance(value, list):
        return [unshare(v, table) for v in value]
    return value


@functools.lru_cache(maxsize=None)
def canned_outputs(fixture: Path = FIXTURE) -> dict[str, dict[Key, dict]]:
    """scenario → key → canonical output (with `$ROOT` in its paths), as the fixture holds them."""
    data = json.loads(fixture.read_text(encoding="utf-8"))
    scenarios: dict[str, dict[Key, dict]] = {}
    for entry in data["outputs"]:
        key = (entry["case_id"], entry["mode"], entry["streaming"], entry["repeat"])
        scenarios.setdefault(entry["scenario"], {})[key] = unshare(entry["output"], data["shared"])
    return scenarios


# --- the fake pool ------------------------------------------------------------------------------------


class CannedPool:
    """Anything with `async run(job, timeout)` is a pool to the workbench; this one answers from
    canned outputs, re-rooted at `root` (the test's project)."""

    def __init__(self, root: Path, scenarios: Union[str, Sequence[str]] = "samples") -> None:
        self.root = Path(root)
        self.scenarios = (scenarios,) if isinstance(scenarios, str) else tuple(scenarios)
        self.answers: dict[str, Answer] = {}
        self.calls: list[tuple[Job, Optional[float]]] = []  # every job received, with its timeout
        self.misses: list[Key] = []  # jobs it had no answer for
        self._taken = 0

    def answer(self, case_id: str, answer: Answer) -> None:
        """From now on, runs of this case get `answer` (an output, or a callable of the job)."""
        self.answers[case_id] = answer

    def from_scenario(self, *scenarios: str) -> Callable[[Job], RunOutput]:
        """An answer: the job's canned output in these scenarios."""
        return lambda job: self.canned(job, scenarios)

    def canned(self, job: Job, scenarios: Optional[Iterable[str]] = None) -> RunOutput:
        key = key_of(job)
        names = tuple(scenarios or self.scenarios)
        known = canned_outputs()
        for name in names:
            found = known.get(name, {}).get(key)
            if found is not None:
                return RunOutput.model_validate(reroot(found, self.root))
        self.misses.append(key)
        raise LookupError(f"no canned output for {key} in {names}: add it to {REGENERATE}")

    async def run(self, job: Job, timeout: Optional[float] = None) -> RunOutput:
        self.calls.append((job, timeout))
        await asyncio.sleep(0)  # a run never answers before it is awaited
        answer = self.answers.get(job.case_id)
        if answer is None:
            return self.canned(job)
        if isinstance(answer, RunOutput):
            return answer.model_copy(deep=True)
        out = answer(job)
        return await out if inspect.isawaitable(out) else out

    @property
    def jobs(self) -> list[Job]:
        return [job for job, _ in self.calls]

    def take_jobs(self) -> list[Job]:
        """The jobs received since the last call."""
        jobs, self._taken = self.jobs[self._taken :], len(self.calls)
        return jobs


class Hanging:
    """An answer that does not come until the test calls `release()`: a run that hangs."""

    def __init__(self, then: RunOutput) -> None:
        self.then = then
        self.waiting = 0
        self._released = asyncio.Event()

    async def __call__(self, job: Job) -> RunOutput:
        self.waiting += 1
        try:
            await self._released.wait()
        finally:
            self.waiting -= 1
        return self.then.model_copy(deep=True)

    def release(self) -> None:
        self._released.set()


# --- recording a real pool, and checking the canned outputs against it --------------------------------


class RecordingPool:
    """A real pool, with every (job, output) it returned kept in `runs`."""

    def __init__(self, pool) -> None:
        self.pool = pool
        self.runs: list[tuple[Job, RunOutput]] = []
        self._taken = 0

    async def run(self, job: Job, timeout: Optional[float] = None) -> RunOutput:
        out = await self.pool.run(job, timeout)
        self.runs.append((job, out))
        return out

    def take_runs(self) -> list[tuple[Job, RunOutput]]:
        runs, self._taken = self.runs[self._taken :], len(self.runs)
        return runs


def first_difference(a: Any, b: Any, path: str = "") -> Optional[str]:
    if type(a) is not type(b):
        return f"{path or '.'}: {a!r:.200} != {b!r:.200}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in the {'canned' if k in b else 'real'} output"
            found = first_difference(a[k], b[k], f"{path}.{k}")
            if found:
                return found
        return None
    if isinstance(a, list):
        for index, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        return None if len(a) == len(b) else f"{path}: {len(a)} items != {len(b)}"
    return None if a == b else f"{path or '.'}: {a!r:.200} != {b!r:.200}"


def assert_canned(runs: Iterable[tuple[Job, RunOutput]], scenario: str, root: Path) -> int:
    """Every real run here equals its canned output in `scenario` (canonically); returns how many
    were compared. When this fails, the canned outputs are stale: regenerate them."""
    canned = canned_outputs().get(scenario, {})
    compared = 0
    for job, out in runs:
        key = key_of(job)
        assert key in canned, f"{key} is not canned in {scenario!r}: regenerate with {REGENERATE}"
        difference = first_difference(canonical(out, root), canned[key])
        assert difference is None, f"the canned output of {key} ({scenario}) is stale at {difference}; regenerate with {REGENERATE}"
        compared += 1
    return compared
