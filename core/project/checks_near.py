"""The journey checks file (`agentdiff-checks.yaml`) nearest a case: at or above its folder, up to the
project root."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from agentdiff.core.formats.checks_file import CHECKS_FILE, ChecksFile, load_checks_file
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.source_file import display_path, resolved

if TYPE_CHECKING:
    from agentdiff.core.project.case_refs import EvalCaseRef


class ChecksFinder:
    """The nearest `agentdiff-checks.yaml` at or above a folder, up to the project root, each file
    loaded once (its problems reported once)."""

    def __init__(self, root: Path, errors: list[LoadError]) -> None:
        self.root, self.errors = resolved(root), errors
        self._near: dict[Path, Optional[ChecksFile]] = {}
        self._loaded: dict[Path, Optional[ChecksFile]] = {}

    def near(self, folder: Path) -> Optional[ChecksFile]:
        folder = resolved(folder)
        if folder not in self._near:
            here = folder / CHECKS_FILE
            if here.is_file():
                if here not in self._loaded:
                    loaded, errors = load_checks_file(here, display_path(here, self.root))
                    self._loaded[here] = loaded
                    self.errors.extend(errors)
                self._near[folder] = self._loaded[here]
            elif folder == self.root or folder.parent == folder or self.root not in folder.parents:
                self._near[folder] = None
            else:
                self._near[folder] = self.near(folder.parent)
        return self._near[folder]


def with_checks(refs: Sequence["EvalCaseRef"], root: Path, errors: Optional[list[LoadError]] = None) -> list["EvalCaseRef"]:
    """Eval case refs made elsewhere (the `AgentEvaluator` drop-in) with the journey checks discovery
    would give them: the nearest checks file up from their eval set file."""
    finder = ChecksFinder(root, errors if errors is not None else [])
    out = []
    for ref in refs:
        checks_file = finder.near(ref.eval_set.source.path.parent) if ref.eval_set.source.path.parent.exists() else None
        if checks_file is not None:
            specs = checks_file.for_case((ref.eval_set.source.path.name, ref.eval_set.eval_set_id), (ref.eval_id, ref.name, ref.id))
            ref = dataclasses.replace(ref, checks=specs)
        out.append(ref)
    return out


def checks_file_for(path: Path, root: Path) -> Optional[Path]:
    """The checks file a case file or folder is checked by, if any."""
    root, folder = resolved(root), resolved(path if path.is_dir() else path.parent)
    while True:
        if (folder / CHECKS_FILE).is_file():
            return folder / CHECKS_FILE
        if folder == root or folder.parent == folder or root not in folder.parents:
            return None
        folder = folder.parent
