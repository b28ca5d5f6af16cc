"""Agent resolution, memoised: the cases of one eval set usually share their agent, so 5,000 cases
in 50 files cost 50 resolutions (each of which may read the project's tests and pyproject), not 5,000.

A memo holds what the file system said when it was asked; whoever keeps one longer than a batch of
runs (the workbench) starts a new one when a package marker, `pyproject.toml` or a test file changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional, Sequence

from agentdiff.core.project.agents import AgentResolution, resolve_agent
from agentdiff.core.project.discovery import CaseRef
from agentdiff.core.project.family import family_of


class AgentMemo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._found: dict[tuple, AgentResolution] = {}

    def resolve(self, ref: CaseRef, agents_dirs: Sequence[Path] = (), mapping: Optional[Mapping[str, str]] = None) -> AgentResolution:
        key = _key(ref, tuple(agents_dirs), mapping or {})
        if key not in self._found:
            self._found[key] = resolve_agent(ref, self.root, agents_dirs, dict(mapping or {}))
        return self._found[key]


def _key(ref: CaseRef, agents_dirs: tuple[Path, ...], mapping: Mapping[str, str]) -> tuple:
    """Everything resolution looks at besides the file system (the project's pyproject, packages and
    AgentEvaluator tests are read from it; the root is the memo's)."""
    family = family_of(ref)
    placed = family.placed_agent(ref)
    if placed is not None:
        return ("placed", placed.agents_dir, placed.name)
    named = family.named_agent(ref)
    if named is not None:
        return ("named", family.unit(ref), named, agents_dirs)
    patterns = tuple((p, name) for p, name in mapping.items() if ref.id.startswith(p) or ref.source.startswith(p))
    return ("eval", ref.eval_set.source.path, ref.app_name, patterns, agents_dirs)
