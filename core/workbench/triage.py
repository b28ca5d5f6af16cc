"""Triage labels and notes, in a plain file a team can commit: `agentdiff-triage.yaml`.

    labels:            # the team's failure dictionary
      - wrong tool
      - bad arguments
    cases:
      "sample_agents/…::dim_living_room":
        label: bad arguments
        note: the playbook has no brightness rule
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml
from agentdiff.core.baselines.journal import atomic_write
from agentdiff.core.formats.source_file import YamlTooLarge, load_yaml_bounded
from agentdiff.core.formats.yaml_writer import dump_yaml

TRIAGE_FILE = "agentdiff-triage.yaml"
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
            data: Any = load_yaml_bounded(path.read_text(encoding="utf-8")) or {}
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
        self.save()

    def save(self) -> None:
        """Write the file; never over one that could not be read (a merge conflict, say): the team's
        labels in it would be lost."""
        if self.error is not None:
            raise TriageUnreadable(f"{self.error}; fix it first, nothing was written")
        data = {"labels": self.labels, "cases": {k: self.cases[k] for k in sorted(self.cases)}}
        atomic_write(self.path, dump_yaml(data))
