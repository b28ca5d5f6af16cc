"""A project's `.env` files as ADK loads them for an agent: which one, and what it sets (its values are
read only to tell a placeholder a scaffold ships from a value; never printed or kept)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from agentdiff.core.formats.source_file import read_text_regular

#: A value a scaffold's `.env` ships for you to replace (`your-gcp-project-id`, `<YOUR_API_KEY>`, `changeme`).
PLACEHOLDER = re.compile(r"^(?:<.*>|\{\{.*\}\}|your[-_ ].*|.*[-_]here|changeme|change[-_]me|todo|xxx+|replace[-_ ]?me|\.\.\.)$", re.IGNORECASE)


def nearest_dotenv(folder: Path) -> Optional[Path]:
    """The `.env` ADK loads for an agent: the first found walking up from its folder."""
    for parent in [folder.resolve(), *folder.resolve().parents]:
        if (parent / ".env").is_file():
            return parent / ".env"
    return None


_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")


def dotenv_names(path: Path) -> list[str]:
    """The names a `.env` file sets to a non-empty value."""
    return list(dotenv_values(path))


def dotenv_values(path: Path) -> dict[str, str]:
    """What a `.env` file sets to a non-empty value (read to tell a placeholder; never printed or kept)."""
    try:
        text = read_text_regular(path, "replace")
    except OSError:
        return {}
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line)
        value = match.group(2).split(" #", 1)[0].strip().strip("'\"") if match else ""
        if match and value and not line.lstrip().startswith("#"):
            values[match.group(1)] = value
    return values
