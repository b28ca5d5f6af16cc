"""How a command ends: the exit codes, the one rule from results to an exit code, and load errors
printed one a line on stderr."""

from __future__ import annotations

import os
from typing import Sequence, TextIO

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.scoring.results import CaseResult, summarize

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def quoted(value: object, limit: int = 120) -> str:
    """A command-line argument for a message: quoted, control characters escaped, cut to `limit`."""
    text = repr(str(value))
    return text if len(text) <= limit else text[: limit - 2] + "…" + text[-1]


def exists(path) -> bool:
    """Whether a command-line argument names an existing path (a broken symlink too: it is named as a
    path, and loading it says why it is broken); a name the system cannot even look up (too long, say)
    does not."""
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False


class UsageError(Exception):
    """A command cannot start as asked: its one-line message is printed as `error: …`, exit 2."""


def print_errors(errors: Sequence[LoadError], out: TextIO) -> None:
    for error in errors:
        print(f"error: {error}", file=out)


def exit_code(cases: Sequence[CaseResult], errors: Sequence[LoadError]) -> int:
    """2 when anything failed to load, else 0 when every case passed, else 1."""
    if errors:
        return EXIT_USAGE
    return EXIT_OK if summarize(cases).all_passed else EXIT_FAILED
