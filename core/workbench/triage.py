"""Triage labels and notes, and the failure dictionary, in a plain file a team commits:
`agentdiff-triage.yaml`.

Each change is a read-modify-write of the file as it is on disk now, written through the baseline
journal (the project lock, one transaction, `z` undoes it): what another process or a teammate wrote
meanwhile is kept. A file that cannot be read, or that holds merge-conflict markers, is never written
over.

    labels:            # the names of the failure dictionary's entries
      - wrong tool
      - double refund
    failures:          # what each entry means, when the team wrote it down
      double refund:
        description: the agent refunds one order twice
        evidence: issue_refund called twice with one order_id
        blocking: block                # block (the release) | review | info
      wrong tool:
        retired: {reason: split in two, replaced_by: wrong lookup}
    cases:
      "sample_agents/…::no_second_refund":
        label: double refund
        element: turn 2 · tool_calls · call 3     # the trace element it was pinned to
        note: the playbook has no rule for a second request
      "sample_agents/…::old_case":
        label: wrong tool
        retired: {reason: the tool is gone, replaced_by: …}   # no longer tested because…
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.baselines.journal import BaselineConflict, FileWrite, sha256_of, write_baseline
from agentdiff.core.formats.load_error import LoadError, locate
from agentdiff.core.formats.source_file import SourceFileError, parse_source, read_source
from agentdiff.core.formats.yaml_writer import dump_yaml

TRIAGE_FILE = "agentdiff-triage.yaml"
_CONFLICT = re.compile(r"^(<<<<<<<|>>>>>>>|\|\|\|\|\|\|\|)( |$)", re.MULTILINE)
DEFAULT_LABELS = ("wrong tool", "bad arguments", "missing step", "extra step", "wrong answer", "prompt drift", "flaky model", "baseline outdated")


class TriageUnreadable(Exception):
    """The triage file could not be read, so it is not written over."""


BLOCKING = ("block", "review", "info")
ENTRY_KEYS = ("description", "evidence", "blocking", "retired")
CASE_KEYS = ("label", "note", "element", "retired")


def _shape_problem(data: Any) -> Optional[tuple[tuple, str]]:
    """Where the file's shape is not the dictionary's, and why: the first problem, or None."""
    if not isinstance(data, dict):
        return (), f"the file must be a mapping (labels, failures, cases), not {_kind(data)}"
    for key, kind in (("labels", list), ("failures", dict), ("cases", dict)):
        if data.get(key) is not None and not isinstance(data[key], kind):
            return (key,), f"`{key}` must be a {'list' if kind is list else 'mapping'}, not {_kind(data[key])}"
    for name, entry in (data.get("failures") or {}).items():
        if entry is not None and not isinstance(entry, dict):
            return ("failures", name), f"the entry {str(name)!r} must be a mapping (description, evidence, blocking), not {_kind(entry)}"
        blocking = (entry or {}).get("blocking")
        if blocking is not None and blocking not in BLOCKING:
            return ("failures", name, "blocking"), f"blocking must be one of {', '.join(BLOCKING)}, not {blocking!r}"
    return None


def _kind(value: Any) -> str:
    return {list: "a list", dict: "a mapping", str: "a string", type(None): "empty", int: "a number", float: "a number", bool: "true or false"}.get(type(value), f"a {type(value).__name__}")


def _retired(value: Any) -> Optional[dict[str, str]]:
    if not isinstance(value, dict) or not value.get("reason"):
        return None
    return {k: str(value[k]) for k in ("reason", "replaced_by") if value.get(k)}


@dataclass
class Triage:
    path: Path
    labels: list[str] = field(default_factory=lambda: list(DEFAULT_LABELS))
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: Optional[str] = None
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)  # the dictionary's written-down entries

    @classmethod
    def load(cls, root: Path) -> "Triage":
        """The file as it is on disk. One that cannot be read as the dictionary — bad YAML or UTF-8,
        merge-conflict markers, an alias bomb, a section of the wrong shape, an unknown blocking
        level — loads as `error` (the file and line, and why): nothing is written over it and the
        release gate refuses to decide on it."""
        path = root / TRIAGE_FILE
        if not os.path.lexists(path):
            return cls(path)
        try:
            source = read_source(path, TRIAGE_FILE)
            conflict = _CONFLICT.search(source.text)
            if conflict:
                line = source.text.count("\n", 0, conflict.start()) + 1
                raise SourceFileError(LoadError(file=TRIAGE_FILE, line=line, message="merge-conflict markers (<<<<<<<, >>>>>>>): resolve them first"))
            data: Any = parse_source(source, "yaml")
            problem = _shape_problem(data if data is not None else {})
            if problem is not None:
                at, message = problem
                position = locate(source.text, list(at), "yaml") or (1, 1)
                raise SourceFileError(LoadError(file=TRIAGE_FILE, line=position[0], column=position[1], message=message))
        except SourceFileError as exc:
            return cls(path, error=str(exc.error))
        data = data or {}
        labels, cases, failures = data.get("labels"), data.get("cases") or {}, data.get("failures") or {}
        entries: dict[str, dict[str, Any]] = {}
        for name, entry in failures.items():
            entry = entry or {}
            kept = {k: str(entry[k]) for k in ("description", "evidence") if entry.get(k)}
            if entry.get("blocking"):
                kept["blocking"] = entry["blocking"]
            if _retired(entry.get("retired")):
                kept["retired"] = _retired(entry.get("retired"))
            entries[str(name)] = kept
        names = [str(label) for label in labels] if isinstance(labels, list) and labels else ([] if entries else list(DEFAULT_LABELS))
        names += [name for name in entries if name not in names]
        bound: dict[str, dict[str, Any]] = {}
        for k, v in cases.items():
            if isinstance(v, dict):
                entry = {kk: str(vv) for kk, vv in v.items() if kk in ("label", "note", "element") and vv not in (None, "")}
                if _retired(v.get("retired")):
                    entry["retired"] = _retired(v.get("retired"))
                bound[str(k)] = entry
        return cls(path, names, bound, failures=entries)

    # --- the failure dictionary ----------------------------------------------------------------------

    def entry(self, name: str) -> dict[str, Any]:
        return self.failures.get(name, {})

    def blocking_of(self, case_id: str) -> Optional[str]:
        """The blocking level of the entry a case is bound to (not when the binding or entry is retired)."""
        case = self.cases.get(case_id, {})
        if not case.get("label") or case.get("retired") or self.entry(case["label"]).get("retired"):
            return None
        return self.entry(case["label"]).get("blocking")

    def retired_binding(self, case_id: str) -> Optional[str]:
        """"no longer tested because …" for a retired binding (or a binding to a retired entry)."""
        case = self.cases.get(case_id, {})
        retired = case.get("retired") or (self.entry(case.get("label", "")).get("retired") if case.get("label") else None)
        if not retired:
            return None
        return f"no longer tested because {retired['reason']}" + (f" (now: {retired['replaced_by']})" if retired.get("replaced_by") else "")

    def define(self, name: str, **fields: Optional[str]) -> None:
        """Write down (or change) an entry: description, evidence, blocking; `retired` as a dict."""
        self._write(lambda current: current._define(name, fields), f"failure {name!r}")

    def unbind(self, case_id: str, reason: str, replaced_by: Optional[str] = None) -> None:
        """Retire a case's binding: it stays, shown as no longer tested, with why."""
        retired = {"reason": reason, **({"replaced_by": replaced_by} if replaced_by else {})}
        self._write(lambda current: current.cases.setdefault(case_id, {}).__setitem__("retired", retired), f"retire {case_id}")

    def _define(self, name: str, fields: dict[str, Any]) -> None:
        entry = self.failures.setdefault(name, {})
        for key, value in fields.items():
            if value:
                entry[key] = value
            elif value is not None:
                entry.pop(key, None)
        if name not in self.labels:
            self.labels.append(name)

    def label_of(self, case_id: str) -> Optional[str]:
        return self.cases.get(case_id, {}).get("label")

    def note_of(self, case_id: str) -> Optional[str]:
        return self.cases.get(case_id, {}).get("note")

    def set(self, case_id: str, label: Optional[str] = None, note: Optional[str] = None) -> None:
        """Change one case's label or note (an empty one removes it) in the file as it is now, keeping
        what others wrote; `TriageUnreadable` when the file cannot be read, `BaselineWriteError` when
        it cannot be written."""
        self.set_many([case_id], label, note)

    def set_many(self, case_ids: list[str], label: Optional[str] = None, note: Optional[str] = None, element: Optional[str] = None) -> None:
        """`set` for several cases at once (a failure cluster labelled): one write, one undo step.
        `element`: the trace element the label is pinned to (`turn 2 · tool_calls · call 3`)."""
        who = case_ids[0] if len(case_ids) == 1 else f"{len(case_ids)} cases"

        def change(current: "Triage") -> None:
            for case_id in case_ids:
                current._change(case_id, label, note, element)

        self._write(change, f"triage {who}: " + ", ".join(f"{k} {v!r}" for k, v in (("label", label), ("note", note)) if v is not None))

    def reload(self) -> bool:
        """Read the file again (changed outside this process: another terminal's `agentdiff undo`, a
        hand edit, a `git pull`); whether what it says changed."""
        fresh = Triage.load(self.path.parent)
        before = (self.labels, self.cases, self.failures, self.error)
        self.labels, self.cases, self.failures, self.error = fresh.labels, fresh.cases, fresh.failures, fresh.error
        return before != (self.labels, self.cases, self.failures, self.error)

    def _write(self, change, reason: str) -> None:
        for _ in range(3):  # another writer between our read and our write: read again and redo the change
            current = Triage.load(self.path.parent)
            if current.error is not None:
                raise TriageUnreadable(f"{current.error}; nothing was written")
            before = sha256_of(self.path)
            change(current)
            try:
                write_baseline([FileWrite(self.path, current.text(), before)], self.path.parent, reason)
            except BaselineConflict:
                continue
            self.labels, self.cases, self.failures, self.error = current.labels, current.cases, current.failures, None
            return
        raise TriageUnreadable(f"{TRIAGE_FILE} keeps changing under us; nothing was written")

    def _change(self, case_id: str, label: Optional[str], note: Optional[str], element: Optional[str] = None) -> None:
        entry = self.cases.setdefault(case_id, {})
        if label is not None:  # a new label is a new binding: pinned anew, no longer retired
            entry.pop("retired", None)
            entry.pop("element", None)
            if element and label:
                entry["element"] = element
        for key, value in (("label", label), ("note", note)):
            if value is None:
                continue
            if value:
                entry[key] = value
            else:
                entry.pop(key, None)
        if label and label not in self.labels:
            self.labels.append(label)
        if not entry:
            self.cases.pop(case_id, None)

    def text(self) -> str:
        data: dict[str, Any] = {"labels": self.labels}
        if any(self.failures.values()):
            data["failures"] = {name: entry for name, entry in self.failures.items() if entry}
        data["cases"] = {k: self.cases[k] for k in sorted(self.cases)}
        return dump_yaml(data)
