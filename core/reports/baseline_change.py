"""What a review of a baseline says, whatever its format: the change (`BaselineChange`), the file as git
had it at a ref, the registration records and what changed in them, and the layers that differ."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.diff.case import diff_case
from agentdiff.core.formats.source_file import resolved

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


def git_show(root: Path, ref: str, path: Path) -> Optional[str]:
    top = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True).stdout.strip())
    done = subprocess.run(["git", "show", f"{ref}:{resolved(path).relative_to(resolved(top)).as_posix()}"], cwd=root,
                          capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def renamed_from(root: Path, ref: str, path: Path) -> Optional[Path]:
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


def records(text: Optional[str]) -> dict[str, Any]:
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def what_changed(old: Optional[dict[str, Any]], new: Optional[dict[str, Any]]) -> list[str]:
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


def layers_between(old_trace, new_trace) -> list[tuple[str, str]]:
    diff = diff_case(old_trace, new_trace)
    return [(status.layer, status.summary or "changed") for status in diff.layers if status.status == "changed"]
