"""Baseline changes are reviewed, not waved through: the cases whose baseline changed since a git ref
while their definition did not (re-recorded until green, `spec.yaml` untouched), each with its
registration, what changed in it (models, prompt, tool sources) and a layer-by-layer diff of the old
baseline against the new one; and sign-offs (`agentdiff sign`) kept in the registration, tied to the
baseline's exact content.

Each case's family says how its baseline changed (`CaseFamily.baseline_change`: `eval_set_review`,
`conformance_review`, `dataset_review`), where its registration is, and what its sign-off is for."""

from __future__ import annotations

import getpass
import json
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from agentdiff.core.baselines.journal import FileWrite, sha256_of, write_baseline
from agentdiff.core.formats.source_file import display_path, read_text_regular
from agentdiff.core.project.case_refs import CaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.reports.baseline_change import BaselineChange, records
from agentdiff.core.reports.changed_since import GitRefError, changed_files, resolve_ref


def changed_baselines(cases: Sequence[CaseRef], root: Path, since: str) -> list[BaselineChange]:
    """The cases whose baseline changed since `since` while their definition did not; `GitRefError`
    when git cannot tell."""
    since = resolve_ref(root, since)  # checked once (never read by git as an option), then a commit
    changed = changed_files(root, since)
    found = []
    with tempfile.TemporaryDirectory(prefix="agentdiff-baselines-") as scratch:
        for ref in cases:
            family = family_of(ref)
            change = family.baseline_change(ref, root, since, changed, Path(scratch))
            if change is not None:
                path, key = family.registration(ref)
                record = records(read_text_regular(path) if path.is_file() else None)
                signed = (record.get(key) or {}).get("signed_off")
                change.signed = signed if signed and signed.get("baseline") == family.baseline_digest(ref) else None
                found.append(change)
    return found


def sign(refs: Sequence[CaseRef], root: Path, note: str = "") -> list[str]:
    """A sign-off on each case's current baseline, in its registration: one journaled write, undoable.
    Returns the files written."""
    plans: dict[Path, dict[str, Any]] = {}
    for ref in refs:
        family = family_of(ref)
        path, key = family.registration(ref)
        if path not in plans:
            plans[path] = records(read_text_regular(path) if path.is_file() else None)
        record = plans[path].setdefault(key, {})
        record["signed_off"] = {"by": getpass.getuser(), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                "baseline": family.baseline_digest(ref), **({"note": note} if note else {})}
    writes = [FileWrite(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", sha256_of(path)) for path, data in plans.items()]
    write_baseline(writes, root, "sign " + ", ".join(ref.id for ref in refs[:3]) + (" …" if len(refs) > 3 else ""))
    return [display_path(path, root) for path in plans]


__all__ = ["BaselineChange", "GitRefError", "changed_baselines", "sign"]
