"""Baseline changes are reviewed, not waved through: the cases whose baseline changed since a git ref
while their definition did not (re-recorded until green, `spec.yaml` untouched), each with its
registration, what changed in it (models, prompt, tool sources) and a layer-by-layer diff of the old
baseline against the new one; and sign-offs (`agentdiff sign`) kept in the registration, tied to the
baseline's exact content.

A conformance case's baseline is its `generated-*` files, its definition `spec.yaml`. An EvalSet case's
baseline is what it expects (final responses, tool calls), its definition what it gives the agent
(user messages, session input)."""

from __future__ import annotations

import getpass
import hashlib
import json
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from agentdiff.core.baselines.documents import REGISTRATION_FILE
from agentdiff.core.baselines.journal import FileWrite, sha256_of, write_baseline
from agentdiff.core.diff.case import diff_case
from agentdiff.core.formats.conformance import SPEC_FILE, load_conformance_case
from agentdiff.core.formats.eval_set_files import load_eval_set
from agentdiff.core.formats.source_file import display_path, read_text_regular, resolved
from agentdiff.core.project.dataset_cases import DatasetCaseRef
from agentdiff.core.project.discovery import CaseRef, ConformanceCaseRef, EvalCaseRef
from agentdiff.core.reports.changed_since import GitRefError, changed_files, resolve_ref
from agentdiff.core.reports.dataset_review import dataset_change
from agentdiff.core.traces.from_files import trace_from_invocations, trace_from_recordings

REVIEWED_KEYS = (("models", "model"), ("instruction_sha256", "prompt"), ("tool_source_sha256", "tool source"))


@dataclass
class BaselineChange:
    case_id: str
    files: list[str]
    registration: Optional[dict[str, Any]]  # the newest record (conformance: of its first mode)
    what_changed: list[str] = field(default_factory=list)  # in the registration: models, prompt, tool sources
    layers: list[tuple[str, str]] = field(default_factory=list)  # (layer, first difference) between the baselines
    new: bool = False  # no baseline at the ref: recorded for the first time
    signed: Optional[dict[str, Any]] = None  # a sign-off for exactly this baseline


def _git_show(root: Path, ref: str, path: Path) -> Optional[str]:
    top = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True).stdout.strip())
    done = subprocess.run(["git", "show", f"{ref}:{resolved(path).relative_to(resolved(top)).as_posix()}"], cwd=root,
                          capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def _renamed_from(root: Path, ref: str, path: Path) -> Optional[Path]:
    """The path `path` had at `ref` when git sees it as renamed since (`diff -M`), else None."""
    top = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True).stdout.strip())
    done = subprocess.run(["git", "diff", "--name-status", "-M", "-z", ref, "--"], cwd=root, capture_output=True, text=True)
    fields = done.stdout.split("\0") if done.returncode == 0 else []
    index = 0
    while index < len(fields):
        status = fields[index]
        if status.startswith(("R", "C")) and index + 2 < len(fields):
            old, new = fields[index + 1], fields[index + 2]
            if resolved(top / new) == resolved(path):
                return top / old
            index += 3
        else:
            index += 2
    return None


def registration_path(ref: CaseRef) -> Path:
    if isinstance(ref, ConformanceCaseRef):
        return ref.case.dir / REGISTRATION_FILE
    path = ref.eval_set.source.path
    return path.with_name(path.name.split(".")[0] + "." + REGISTRATION_FILE)


def registration_key(ref: CaseRef) -> str:
    return ref.eval_id if isinstance(ref, EvalCaseRef) else next(iter(sorted(ref.case.baselines)), "none")


def _records(text: Optional[str]) -> dict[str, Any]:
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def baseline_digest(ref: CaseRef) -> str:
    """What a sign-off is for: the exact expected content of the case."""
    if isinstance(ref, DatasetCaseRef):
        content = ref.baseline.model_dump_json() if ref.baseline is not None else ""
    elif isinstance(ref, EvalCaseRef):
        content = json.dumps([inv.model_dump(mode="json", exclude={"user_content", "invocation_id", "creation_timestamp"})
                              for inv in ref.case.conversation or []], sort_keys=True)
    else:
        content = "".join(sorted(f"{m}:{b.recordings_source.sha256}:{b.session_source.sha256}" for m, b in ref.case.baselines.items()))
    return hashlib.sha256(content.encode()).hexdigest()[:16]


def _what_changed(old: Optional[dict[str, Any]], new: Optional[dict[str, Any]]) -> list[str]:
    if not new:
        return []
    if not old:
        models = ", ".join(f"{agent} {model}" for agent, model in sorted((new.get("models") or {}).items()))
        return [f"no earlier registration to compare with; recorded with {models or 'no model named'}"]
    said = []
    for key, name in REVIEWED_KEYS:
        before, after = (old or {}).get(key) or {}, new.get(key) or {}
        for item in sorted(set(before) | set(after)):
            if before.get(item) != after.get(item):
                if key == "models":
                    said.append(f"{name} of {item}: {before.get(item, '-')} → {after.get(item, '-')}")
                else:
                    said.append(f"{name} of {item} changed")
    return said or ["models, prompt and tool sources as before"]


def _layers(old_trace, new_trace) -> list[tuple[str, str]]:
    diff = diff_case(old_trace, new_trace)
    return [(status.layer, status.summary or "changed") for status in diff.layers if status.status == "changed"]


def changed_baselines(cases: Sequence[CaseRef], root: Path, since: str) -> list[BaselineChange]:
    """The cases whose baseline changed since `since` while their definition did not; `GitRefError`
    when git cannot tell."""
    since = resolve_ref(root, since)  # checked once (never read by git as an option), then a commit
    changed = changed_files(root, since)
    found = []
    with tempfile.TemporaryDirectory(prefix="agentdiff-baselines-") as scratch:
        for ref in cases:
            if isinstance(ref, DatasetCaseRef):
                change = _dataset(ref, root, since, changed)
            else:
                change = _conformance(ref, root, since, changed, Path(scratch)) if isinstance(ref, ConformanceCaseRef) \
                    else _eval(ref, root, since, changed, Path(scratch))
            if change is not None:
                record = _records(read_text_regular(registration_path(ref)) if registration_path(ref).is_file() else None)
                signed = (record.get(registration_key(ref)) or {}).get("signed_off")
                change.signed = signed if signed and signed.get("baseline") == baseline_digest(ref) else None
                found.append(change)
    return found


def _dataset(ref: DatasetCaseRef, root: Path, since: str, changed: set[Path]) -> Optional[BaselineChange]:
    found = dataset_change(ref, lambda path: _git_show(root, since, path), changed)
    if found is None:
        return None
    change = BaselineChange(ref.id, [ref.baseline_display], None, ["an agents-cli baseline: the baseline file is its record"])
    change.new, change.layers = found
    return change


def _conformance(ref: ConformanceCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Optional[BaselineChange]:
    folder = resolved(ref.case.dir)
    files = sorted(p for p in changed if p.parent == folder and p.name.startswith("generated-"))
    if not files or folder / SPEC_FILE in changed:
        return None
    old_dir = scratch / hashlib.sha256(ref.id.encode()).hexdigest()[:16] / ref.case.category / ref.case.name  # two agents may share names
    old_dir.mkdir(parents=True)
    for name in [SPEC_FILE, REGISTRATION_FILE, *{p.name for p in folder.iterdir() if p.name.startswith("generated-")}]:
        text = _git_show(root, since, folder / name)
        if text is not None:
            (old_dir / name).write_text(text, encoding="utf-8")
    old_case, _ = load_conformance_case(old_dir, ref.case.display) if (old_dir / SPEC_FILE).exists() else (None, [])
    old_records = _records((old_dir / REGISTRATION_FILE).read_text() if (old_dir / REGISTRATION_FILE).exists() else None)
    new_records = _records(read_text_regular(folder / REGISTRATION_FILE) if (folder / REGISTRATION_FILE).exists() else None)
    change = BaselineChange(ref.id, [display_path(p, root) for p in files], new_records.get(registration_key(ref)))
    change.new = old_case is None or not old_case.baselines
    change.what_changed = _what_changed(old_records.get(registration_key(ref)), change.registration)
    for mode in sorted(ref.case.baselines):
        if old_case is not None and mode in old_case.baselines:
            change.layers += [(f"{layer} ({mode})" if len(ref.case.baselines) > 1 else layer, said)
                              for layer, said in _layers(trace_from_recordings(old_case, mode), trace_from_recordings(ref.case, mode))]
    return change


def _eval(ref: EvalCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Optional[BaselineChange]:
    path = resolved(ref.eval_set.source.path)
    if path not in changed:
        return None
    text = _git_show(root, since, path)
    if text is None:  # renamed since (git's rename detection): its cases are compared with the old file's
        old_path = _renamed_from(root, since, path)
        text = _git_show(root, since, old_path) if old_path is not None else None
    if text is None:
        return None  # a new eval set: new cases, reviewed as cases
    old_file = scratch / f"{abs(hash(ref.id))}.evalset.json"
    old_file.write_text(text, encoding="utf-8")
    old_set, _ = load_eval_set(old_file, ref.eval_set.source.display)
    given = lambda case: ([inv.user_content.model_dump_json() for inv in case.conversation or []],  # noqa: E731
                          case.session_input.model_dump_json() if case.session_input else None)
    try:
        old = old_set.cases[old_set.index_of(ref.eval_id)] if old_set else None
    except KeyError:
        old = None
    if old is None:  # its eval_id renamed: the old case asked the same (one such case only)
        same = [c for c in (old_set.cases if old_set else ()) if given(c) == given(ref.case)]
        old = same[0] if len(same) == 1 else None
    if old is None:
        return None  # a new case: its definition is new too
    if given(old) != given(ref.case) or old.model_dump_json() == ref.case.model_dump_json():
        return None  # its definition changed (a new question), or nothing did
    if _layers(trace_from_invocations(old.conversation or []), trace_from_invocations(ref.case.conversation or [])) == []:
        return None  # ids or timestamps only
    reg = registration_path(ref)
    old_records = _records(_git_show(root, since, reg) if reg.exists() else None)
    new_records = _records(read_text_regular(reg) if reg.is_file() else None)
    change = BaselineChange(ref.id, [ref.eval_set.source.display], new_records.get(ref.eval_id))
    change.what_changed = _what_changed(old_records.get(ref.eval_id), change.registration) if change.registration else \
        ["no registration: edited by hand, or recorded by another tool"]
    change.layers = _layers(trace_from_invocations(old.conversation or []), trace_from_invocations(ref.case.conversation or []))
    return change


def sign(refs: Sequence[CaseRef], root: Path, note: str = "") -> list[str]:
    """A sign-off on each case's current baseline, in its registration: one journaled write, undoable.
    Returns the files written."""
    plans: dict[Path, dict[str, Any]] = {}
    for ref in refs:
        path = registration_path(ref)
        if path not in plans:
            plans[path] = _records(read_text_regular(path) if path.is_file() else None)
        record = plans[path].setdefault(registration_key(ref), {})
        record["signed_off"] = {"by": getpass.getuser(), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                "baseline": baseline_digest(ref), **({"note": note} if note else {})}
    writes = [FileWrite(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", sha256_of(path)) for path, data in plans.items()]
    write_baseline(writes, root, "sign " + ", ".join(ref.id for ref in refs[:3]) + (" …" if len(refs) > 3 else ""))
    return [display_path(path, root) for path in plans]


__all__ = ["BaselineChange", "GitRefError", "changed_baselines", "sign"]
