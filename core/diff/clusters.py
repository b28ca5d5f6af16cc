"""Failure clusters: failing cases grouped by the signature of their first divergence (its layer,
its kind, the tool it is about and the argument path, indices left out), so twenty cases that broke
the same way are one thing to look at."""

from __future__ import annotations

import re
from typing import Optional

from agentdiff.core.diff.model import CaseDiff

_INDEX = re.compile(r"\[\d+\]|\.\d+(?=\.|$)")


def cluster_signature(diff: Optional[CaseDiff]) -> Optional[str]:
    """`tool_calls · changed · set_device_state · args.brightness`; None when nothing diverged."""
    first = diff.first_divergence if diff is not None else None
    if first is None:
        return None
    parts = [first.layer, first.kind]
    if first.layer == "tool_calls" and first.turn < len(diff.turns):
        rows = diff.turns[first.turn].tool_calls
        if 0 <= first.row < len(rows):
            parts.append(rows[first.row].name)
    if first.kind == "check" and first.summary:
        parts.append(first.summary.split(" · check ", 1)[-1].split(":", 1)[0])  # the check's label
    elif first.path:
        parts.append(_INDEX.sub("[*]", first.path))
    return " · ".join(part for part in parts if part)


def clusters(results) -> list[tuple[str, list]]:
    """The failing results (those with a `cluster`) by signature, the largest first."""
    groups: dict[str, list] = {}
    for result in results:
        if getattr(result, "cluster", None):
            groups.setdefault(result.cluster, []).append(result)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
