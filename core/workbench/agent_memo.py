"""Agent resolution, memoised: the cases of one eval set usually share their agent, so 5,000 cases
in 50 files cost 50 resolutions, not 5,000."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from agentdiff.core.project.agents import resolve_agent
from agentdiff.core.project.discovery import CaseRef, ConformanceCaseRef
from agentdiff.core.run.options import RunOptions
from agentdiff.core.worker.jobs import AgentRef


class AgentMemo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._found: dict[tuple, Optional[AgentRef]] = {}

    def resolve(self, ref: CaseRef, options: RunOptions) -> Optional[AgentRef]:
        key = _key(ref, options)
        if key not in self._found:
            self._found[key] = resolve_agent(ref, self.root, options.agents_dirs, options.mapping).agent
        return self._found[key]


def _key(ref: CaseRef, options: RunOptions) -> tuple:
    """Everything resolution looks at besides the file system (the project's pyproject, packages and
    AgentEvaluator tests are read from it; the root is the memo's)."""
    if isinstance(ref, ConformanceCaseRef):
        return ("conformance", ref.case.dir, ref.case.spec.agent, options.agents_dirs)
    session = ref.case.session_input
    patterns = tuple((p, name) for p, name in options.mapping.items() if ref.id.startswith(p) or ref.source.startswith(p))
    return ("eval", ref.eval_set.source.path, session.app_name if session else None, patterns, options.agents_dirs)
