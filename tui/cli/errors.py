"""How a command ends: the exit codes, the one rule from results to an exit code, and load errors
printed one a line on stderr."""

from __future__ import annotations

import os
from typing import Sequence, TextIO

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.scoring.results import CaseResult, summarize

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCONCLUSIVE = 0, 1, 2, 3


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


#: Past this many errors in one file, the rest are counted, not printed (one bad file is not a page).
ERRORS_SHOWN_PER_FILE = 3


def print_errors(errors: Sequence[LoadError], out: TextIO, listed_by: str = "agentdiff list --json") -> None:
    """Each error on a line, a file's together; a file with many shows its first few and a count, and
    the command that lists every one (`listed_by`)."""
    by_file: dict[str, list[LoadError]] = {}
    for error in errors:
        by_file.setdefault(error.file, []).append(error)
    for file, errors_of_file in by_file.items():
        for error in errors_of_file[:ERRORS_SHOWN_PER_FILE]:
            print(f"error: {error}", file=out)
        more = len(errors_of_file) - ERRORS_SHOWN_PER_FILE
        if more > 0:
            print(f"error: {file}: and {more} more problem{'s' if more != 1 else ''} in this file "
                  f"(`{listed_by}` lists every one)", file=out)


def exit_code(cases: Sequence[CaseResult], errors: Sequence[LoadError], inconclusive_passes: bool = False, new_passes: bool = False) -> int:
    """2 when anything failed to load, else 0 when every case passed (or is new, with `new_passes`), 3 when
    the others are inconclusive (0 with `inconclusive_passes`), else 1."""
    if errors:
        return EXIT_USAGE
    summary = summarize(cases)
    passed = summary.passed + (summary.new if new_passes else 0)
    if passed == summary.total:
        return EXIT_OK
    if passed + summary.inconclusive == summary.total:
        return EXIT_OK if inconclusive_passes else EXIT_INCONCLUSIVE
    return EXIT_FAILED
