"""Triage labels and notes, in a plain file a team can commit: `agentdiff-triage.yaml`.

Each change is a read-modify-write of the file as it is on disk now, written through the baseline
journal (the project lock, one transaction, `z` undoes it): what another process or a teammate wrote
meanwhile is kept. A file that cannot be read, or that holds merge-conflict markers, is never written
over.

    labels:            # the team's failure dictionary
      - wrong tool
      - bad arguments
    cases:
      "sample_agents/…::dim_living_room":
        label: bad arguments
        note: the playbook has no brightness rule
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml
from agentdiff.core.baselines.journal import BaselineConflict, FileWrite, read_exact, sha256_of, write_baseline
from agentdiff.core.formats.source_file import YamlTooLarge, load_yaml_bounded
from agentdiff.core.formats.yaml_writer import dump_yaml

TRIAGE_FILE = "agentdiff-triage.yaml"
_CONFLICT = re.compile(r"^(<<<<<<<|>>>>>>>|\|\|\|\|\|\|\|)( |$)", re.MULTILINE)
DEFAULT_LABELS = ("wrong tool", "bad arguments", "missing step", "extra step", "wrong answer", "prompt drift", "flaky model", "baseline outdated")


class TriageUnreadable(Exception):
    """The triage file could not be read, so it is not written over."""


@dataclass
class Triage:
    path: Path
    labels: list[str] = field(default_factory=lambda: list(DEFAULT_LABELS))
    cases: dict[str, dict[str, str]] = field(default_factory=dict)
    error: Optional[str] = None

    @classmethod
    def load(cls, root: Path) -> "Triage":
        path = root / TRIAGE_FILE
        if not path.exists():
            return cls(path)
        try:
            text = read_exact(path)
            if _CONFLICT.search(text):
                return cls(path, error=f"{TRIAGE_FILE} holds merge-conflict markers (<<<<<<<, >>>>>>>): resolve them first")
            data: Any = load_yaml_bounded(text) or {}
        except (OSError, yaml.YAMLError, UnicodeDecodeError, YamlTooLarge) as exc:
            return cls(path, error=f"{TRIAGE_FILE}: {exc}")
        labels = data.get("labels") if isinstance(data, dict) else None
        cases = data.get("cases") if isinstance(data, dict) else None
        return cls(
            path,
            [str(label) for label in labels] if isinstance(labels, list) and labels else list(DEFAULT_LABELS),
            {
                str(k): {kk: str(vv) for kk, vv in v.items() if kk in ("label", "note") and vv not in (None, "")}
                for k, v in (cases if isinstance(cases, dict) else {}).items()
                if isinstance(v, dict)
            },
        )

    def label_of(self, case_id: str) -> Optional[str]:
        return self.cases.get(case_id, {}).get("label")

    def note_of(self, case_id: str) -> Optional[str]:
        return self.cases.get(case_id, {}).get("note")

    def set(self, case_id: str, label: Optional[str] = None, note: Optional[str] = None) -> None:
        """Change one case's label or note (an empty one removes it) in the file as it is now, keeping
        what others wrote; `TriageUnreadable` when the file cannot be read, `BaselineWriteError` when
        it cannot be written."""
        self.set_many([case_id], label, note)

    def set_many(self, case_ids: list[str], label: Optional[str] = None, note: Optional[str] = None) -> None:
        """`set` for several cases at once (a failure cluster labelled): one write, one undo step."""
        for _ in range(3):  # another writer between our read and our write: read again and redo the change
            current = Triage.load(self.path.parent)
            if current.error is not None:
                raise TriageUnreadable(f"{current.error}; nothing was written")
            before = sha256_of(self.path)
            for case_id in case_ids:
                current._change(case_id, label, note)
            who = case_ids[0] if len(case_ids) == 1 else f"{len(case_ids)} cases"
            try:
                write_baseline([FileWrite(self.path, current.text(), before)], self.path.parent,
                               f"triage {who}: " + ", ".join(f"{k} {v!r}" for k, v in (("label", label), ("note", note)) if v is not None))
            except BaselineConflict:
                continue
            self.labels, self.cases, self.error = current.labels, current.cases, None
            return
        raise TriageUnreadable(f"{TRIAGE_FILE} keeps changing under us; nothing was written")

    def _change(self, case_id: str, label: Optional[str], note: Optional[str]) -> None:
        entry = self.cases.setdefault(case_id, {})
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
        return dump_yaml({"labels": self.labels, "cases": {k: self.cases[k] for k in sorted(self.cases)}})
