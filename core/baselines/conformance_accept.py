"""Accepts into conformance case folders: a run written as the recordings and session of the streaming
mode it was diffed against, with its registration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentdiff.core.baselines.documents import conformance_writes
from agentdiff.core.baselines.journal import FileWrite
from agentdiff.core.project.family import AcceptBatch


class ConformanceAccepts(AcceptBatch):
    def __init__(self, root: Path) -> None:
        self.root = root
        self.planned: list[FileWrite] = []

    def add(self, request: Any, out: Any) -> bool:
        run = request.run
        if run.diff is not None and run.diff.same:  # the run matched: nothing to write
            return False
        ref = run.ref
        mode = run.baseline.mode if run.baseline and run.baseline.mode else "none"
        writes = conformance_writes(ref.case.dir, mode, out, ref.case.spec.agent, self.root)
        self.planned += writes
        return bool(writes)

    def writes(self, planned: list) -> list[FileWrite]:
        return self.planned
