"""How one value reads in a report's text: a score, and a value from data kept on one line."""

from __future__ import annotations

import math
from typing import Optional


def format_score(score: Optional[float]) -> str:
    if score is None:
        return "n/a"
    if not math.isfinite(score):  # never from a loader (they say why instead); never a crash here
        return "nan" if score != score else ("inf" if score > 0 else "-inf")
    return f"{score:.4f}".rstrip("0").rstrip(".") if score != int(score) else f"{score:.1f}"


def single_line(text: object) -> str:
    """A value from data on one line: its newlines and tabs shown (`\\n`), so it cannot forge a line of
    a report (a newline in an error message, a metric's name, a reviewer's name)."""
    return str(text).replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
