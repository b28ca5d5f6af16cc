"""The `adk test` family: a fixture replays by default (no model call: the mock model serves the
fixture's responses), runs live on request, is diffed against the fixture's events, and is accepted
and re-recorded whole into the fixture file."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.baselines import record as recording  # (its writers, looked up when called)
from agentdiff.core.formats.checks_file import checks_digest
from agentdiff.core.formats.adk_test.fixture import XFAIL_SUFFIX
from agentdiff.core.project.family import AcceptBatch, CaseFamily
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.worker.jobs import AgentRef

from .cases import FixtureCaseRef
from .judge import fixture_baseline, fixture_job, judge_fixture, messages_of, run_fixture_case
from .writes import FixtureAccepts, record_fixture, registration_path


class AdkTestFamily(CaseFamily):
    name = "adk_test"
    listed_after = 1  # after eval sets and datasets, as conformance cases
    replays = True
    accepted_whole = "an `adk test` fixture is accepted whole"
    agent_named_in = "the folder above its tests/ (adk test)"

    def unit(self, ref: FixtureCaseRef) -> Path:
        return ref.fixture.source.path

    def tree_group(self, ref: FixtureCaseRef) -> str:
        return "tests"

    def named_agent(self, ref: FixtureCaseRef) -> Optional[str]:
        return ref.agent_dir.name

    def placed_agent(self, ref: FixtureCaseRef) -> Any:
        # by its own name and place, a symlink too (as ADK imports it); `agent.py`, `__init__.py` or `root_agent.yaml`
        folder = Path(os.path.abspath(ref.agent_dir))
        return AgentRef(agents_dir=str(folder.parent), name=folder.name)

    def watched(self, ref: FixtureCaseRef, unit: Path) -> tuple[frozenset[Path], Optional[Path]]:
        return frozenset({unit}), None

    def owned(self, ref: FixtureCaseRef, unit: Path, resolve: Any) -> list[Path]:
        return [unit]

    def content(self, ref: FixtureCaseRef) -> tuple[object, object]:
        fixture = ref.fixture
        given = json.dumps([fixture.events[:1], fixture.mocks], sort_keys=True, default=str)
        # what the mock model serves is given to the agent too: a change of it runs the fixture again
        return (given, fixture.source.sha256), checks_digest(ref.checks)

    def editor_place(self, ref: FixtureCaseRef) -> tuple[Path, Optional[int], Optional[int]]:
        return ref.fixture.source.path, 1, 1

    def listed(self, ref: FixtureCaseRef) -> str:
        turns = len(messages_of(ref))
        said = f"adk test; {turns} turn{'s' if turns != 1 else ''}; agent {ref.agent_dir.name}"
        if ref.fixture.xfail:
            said += "; expected to fail"
        if ref.fixture.skipped:
            said += f"; skipped by adk test: {ref.fixture.skipped}"
        return said

    def described(self, ref: FixtureCaseRef) -> dict[str, Any]:
        return {"kind": self.name, "fixture": ref.source, "agent_dir": ref.agent_display, "turns": len(messages_of(ref)),
                "expected_to_fail": ref.fixture.xfail, "mocks": sorted(ref.fixture.mocks), "skipped": ref.fixture.skipped}

    def names(self, ref: FixtureCaseRef) -> tuple[Optional[str], str, Optional[str]]:
        return ref.agent_dir.name, ref.name, ("expected to fail (its name ends in " + XFAIL_SUFFIX + ")") if ref.fixture.xfail else None

    def registration(self, ref: FixtureCaseRef) -> tuple[Path, str]:
        return registration_path(ref), ref.name

    def baseline_digest(self, ref: FixtureCaseRef) -> str:
        return hashlib.sha256(json.dumps(ref.fixture.events, sort_keys=True).encode()).hexdigest()[:16]

    def free(self, ref: FixtureCaseRef, mode: Optional[str]) -> bool:
        return mode != "live"

    def messages(self, ref: FixtureCaseRef) -> list:
        return messages_of(ref)

    def baseline(self, ref: FixtureCaseRef, mode: Optional[str] = None) -> Any:
        return fixture_baseline(ref)

    async def run(self, ref: FixtureCaseRef, agent: Any, pool: Any, options: Any, mode: str) -> CaseRun:
        return await run_fixture_case(ref, agent, pool, options, mode)

    def rescore(self, ref: FixtureCaseRef, previous: Any, judged: Any, options: Any) -> CaseRun:
        mode = previous.modes[0] if previous.modes else previous.result.mode
        return judge_fixture(ref, previous.agent, mode, previous.outputs[0])

    def failed_hint(self, run: Any) -> str:
        return f": re-record it live (`agentdiff record {run.ref.id}`, as `adk test --rebuild` would)"

    def accepts(self, root: Path) -> AcceptBatch:
        return FixtureAccepts(root)

    async def record(self, ref: FixtureCaseRef, agent: Any, pool: Any, options: Any, root: Path) -> tuple[Any, Any]:
        job = fixture_job(ref, agent, "record")
        if job is None:
            raise recording.RecordError(f"`adk test` skips it ({ref.fixture.skipped}): there is no user message to record")
        out = recording.kept_output(await pool.run(job, options.timeout), root, agent)
        return out, record_fixture(ref, out, root, agent.label)

    def baseline_change(self, ref: FixtureCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Any:
        return None  # a fixture is its own definition and baseline: a change of it is reviewed as a case's
