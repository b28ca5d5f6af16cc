"""`agentdiff baselines` for conformance cases: a case whose `generated-*` recordings changed since a
git ref while its `spec.yaml` did not, each streaming mode's layers compared."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Optional

from agentdiff.core.baselines.documents import REGISTRATION_FILE
from agentdiff.core.formats.conformance import SPEC_FILE, load_conformance_case
from agentdiff.core.formats.source_file import display_path, read_text_regular, resolved
from agentdiff.core.project.case_refs import ConformanceCaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.reports.baseline_change import BaselineChange, git_show, layers_between, records, what_changed
from agentdiff.core.traces.from_files import trace_from_recordings


def conformance_change(ref: ConformanceCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Optional[BaselineChange]:
    folder = resolved(ref.case.dir)
    files = sorted(p for p in changed if p.parent == folder and p.name.startswith("generated-"))
    if not files or folder / SPEC_FILE in changed:
        return None
    old_dir = scratch / hashlib.sha256(ref.id.encode()).hexdigest()[:16] / ref.case.category / ref.case.name  # two agents may share names
    old_dir.mkdir(parents=True)
    for name in [SPEC_FILE, REGISTRATION_FILE, *{p.name for p in folder.iterdir() if p.name.startswith("generated-")}]:
        text = git_show(root, since, folder / name)
        if text is not None:
            (old_dir / name).write_text(text, encoding="utf-8")
    old_case, _ = load_conformance_case(old_dir, ref.case.display) if (old_dir / SPEC_FILE).exists() else (None, [])
    old_records = records((old_dir / REGISTRATION_FILE).read_text() if (old_dir / REGISTRATION_FILE).exists() else None)
    new_records = records(read_text_regular(folder / REGISTRATION_FILE) if (folder / REGISTRATION_FILE).exists() else None)
    change = BaselineChange(ref.id, [display_path(p, root) for p in files], new_records.get(family_of(ref).registration(ref)[1]))
    change.new = old_case is None or not old_case.baselines
    change.what_changed = what_changed(old_records.get(family_of(ref).registration(ref)[1]), change.registration)
    for mode in sorted(ref.case.baselines):
        if old_case is not None and mode in old_case.baselines:
            change.layers += [(f"{layer} ({mode})" if len(ref.case.baselines) > 1 else layer, said)
                              for layer, said in layers_between(trace_from_recordings(old_case, mode), trace_from_recordings(ref.case, mode))]
    return change
