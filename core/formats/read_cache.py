"""What reading a big eval set file found, kept by the file's digest, so the next command that reads the
same bytes skips validating every case again (about 5 µs a one-turn case: a million cases are most of a
first `list`'s time).

An entry holds what `eval_cases.read_compact` returns for one file text: its top-level fields but its
cases, and each case's eval_id, turn count, `app_name` and span. It is found by the SHA-256 of the
file's bytes together with a fingerprint of the rules that read it (the modules that model and read
eval sets, and pydantic-core's version), so an edited file, or another agentdiff, never meets an
entry made for other text or other rules. Only files that read compactly and hold at least
`MIN_CASES` cases are kept; a file with errors is always read again, for its errors.

The entries live in the user's cache folder (`$XDG_CACHE_HOME/agentdiff/eval-sets`, or
`AGENTDIFF_CACHE_DIR`), never in the project: a cloned repository cannot bring entries of its own.
`AGENTDIFF_NO_CACHE=1` turns the cache off. An entry that cannot be read or written is no error: the
file is read as if there were none.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.formats.eval_cases import EvalCases

#: Files with fewer cases are read again each time (validating them costs less than reading an entry).
MIN_CASES = 500
#: Entries kept at most; past it, the least recently used quarter goes.
MAX_ENTRIES = 400
_FORMAT = "agentdiff-eval-set-read/1"
UNKEPT = ".none"  # beside where an entry would be: these bytes keep none
_fingerprint: Optional[str] = None


def cache_dir() -> Optional[Path]:
    return cache_folder("eval-sets")


def cache_folder(name: str) -> Optional[Path]:
    """The user's cache folder `name` of agentdiff's (never the project's), or None when caching is off."""
    if os.environ.get("AGENTDIFF_NO_CACHE", "") not in ("", "0"):
        return None
    chosen = os.environ.get("AGENTDIFF_CACHE_DIR")
    if chosen:
        return Path(chosen) / name
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, or relative (which the XDG rules say to ignore)
        base = os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home to keep it in: never a folder in the project instead
        return None
    return Path(base) / "agentdiff" / name


def _rules() -> str:
    """A digest of what decides how a file reads: the modules that model and read eval sets, and
    pydantic-core (an edit to a validator, or an upgrade, makes every entry a stranger)."""
    global _fingerprint
    if _fingerprint is None:
        import pydantic_core

        from agentdiff.core.formats import case_check, eval_cases, eval_set, genai_types, source_file

        digest = hashlib.sha256(f"{_FORMAT}\0{pydantic_core.__version__}".encode())
        for module in (case_check, eval_cases, eval_set, genai_types, source_file):
            digest.update(Path(module.__file__ or "").read_bytes())
        _fingerprint = digest.hexdigest()
    return _fingerprint


def _entry(folder: Path, sha256: str) -> Path:
    return folder / (hashlib.sha256(f"{_rules()}\0{sha256}".encode()).hexdigest() + ".json")


def recall(text: str, sha256: str) -> Optional[tuple[dict[str, Any], EvalCases]]:
    """What reading this text found before (`read_compact`'s answer), or None."""
    folder = cache_dir()
    if folder is None or len(text) < MIN_CASES * 30:  # no case that validates is shorter than 30 characters
        return None
    path = _entry(folder, sha256)
    try:
        record = json.loads(path.read_bytes())
        header, cases = record["header"], EvalCases.from_record(text, record["cases"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(header, dict):
        return None
    try:
        os.utime(path)  # recently used: kept when older entries go
    except OSError:
        pass
    return header, cases


def known(sha256: str) -> bool:
    """Whether an entry for these bytes is kept (what `recall` may find), or the mark that they keep
    none (`mark_unkept`)."""
    folder = cache_dir()
    if folder is None:
        return False
    entry = _entry(folder, sha256)
    return entry.is_file() or entry.with_suffix(UNKEPT).is_file()


def mark_unkept(sha256: str) -> None:
    """Mark these bytes as keeping no entry (errors, too few cases, not an eval set), so they are not
    read ahead for one (`warm_reads`) each time; never raises."""
    folder = cache_dir()
    if folder is not None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _entry(folder, sha256).with_suffix(UNKEPT).touch()
        except OSError:
            pass


def writable() -> bool:
    """Whether entries can be kept: the cache is on and its folder can be written."""
    folder = cache_dir()
    if folder is None:
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".probe-")
        os.close(handle)
        os.unlink(probe)
    except OSError:
        return False
    return True


def keep(sha256: str, header: dict[str, Any], cases: EvalCases) -> None:
    """Keep what reading a file found (a file of `MIN_CASES` or more); never raises."""
    folder = cache_dir()
    if folder is None or len(cases) < MIN_CASES:
        return
    try:
        data = json.dumps({"header": header, "cases": cases.record()}, ensure_ascii=False, separators=(",", ":"))
        store(_entry(folder, sha256), data.encode("utf-8"))
        prune(folder, [*folder.glob("*.json"), *folder.glob(f"*{UNKEPT}")], MAX_ENTRIES)
    except (OSError, ValueError):
        pass


def store(entry: Path, data: bytes) -> None:
    """Write a cache entry whole or not at all (a reader never meets half of one); OSError when it cannot."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    handle, staged = tempfile.mkstemp(dir=entry.parent, prefix=".entry-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(staged, entry)
    except BaseException:
        os.unlink(staged)
        raise


def prune(folder: Path, entries: list[Path], most: int) -> None:
    """Past `most` entries, the least recently used quarter goes."""
    if len(entries) <= most:
        return
    aged = sorted(entries, key=lambda p: p.stat().st_mtime)
    for path in aged[: len(entries) - most * 3 // 4]:
        try:
            path.unlink()
        except OSError:
            pass
