"""Writing JSON back in the style it was read: ADK's (indent 2, UTF-8, no trailing newline) or
whatever indent and final newline the original file had, so an unedited file round-trips byte for byte."""

from __future__ import annotations

import json
import re
from typing import Any, Optional


def detect_indent(text: str) -> Optional[int]:
    match = re.search(r"^[\[{]\s*\n( +)\S", text)
    if match:
        return len(match.group(1))
    return None if text.strip() and "\n" not in text.strip() else 2


def dumps_like(data: Any, original: Optional[str] = None) -> str:
    """`data` as JSON text shaped like `original` (ADK's own style when there is none)."""
    indent = detect_indent(original) if original is not None else 2
    text = json.dumps(data, indent=indent, ensure_ascii=False, separators=None if indent is not None else (", ", ": "))
    if original is not None and original.endswith("\n"):
        text += "\n"
    return text
