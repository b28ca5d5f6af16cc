"""What reading a big trace file found, kept in the user's cache folder (`$XDG_CACHE_HOME/agentdiff/traces`,
or `AGENTDIFF_CACHE_DIR`; `AGENTDIFF_NO_CACHE=1` turns it off), so the next command that reads the file
does not parse it again: protobuf's JSON mapping costs about 3 ms an export, most of a first `list` of a
file `receive` has filled for a day.

An entry is the file's last read: found by the file's path and the project's root, it is used only for
the bytes it says it read (their size and SHA-256), which must still be the file's first. A file grown by
appended exports is read on from there (`spans.read_on`); any other edit is read whole. The rules that
read a file (this package's modules, protobuf's and opentelemetry-proto's versions) are part of an
entry's name, so another agentdiff never meets it. Entries are zlib-compressed JSON; an entry that cannot
be read or written is no error."""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.formats.read_cache import cache_folder, prune, store

#: Files read in fewer bytes are parsed each time (an entry costs more than parsing them): `spans` keeps none.
MIN_BYTES = 1024 * 1024
#: Entries kept at most (one a trace file); past it, the least recently used quarter goes.
MAX_ENTRIES = 32
_FORMAT = "agentdiff-trace-read/1"
_fingerprint: Optional[str] = None


def _rules() -> str:
    """A digest of what decides how a file reads; OSError when it cannot be made (no sources installed)."""
    global _fingerprint
    if _fingerprint is None:
        from importlib.metadata import PackageNotFoundError, version

        digest = hashlib.sha256(_FORMAT.encode())
        for package in ("protobuf", "opentelemetry-proto"):
            try:
                digest.update(f"\0{package}={version(package)}".encode())
            except PackageNotFoundError:
                pass
        for module in ("names.py", "spans.py"):  # the modules that read a trace file
            digest.update((Path(__file__).parent / module).read_bytes())
        _fingerprint = digest.hexdigest()
    return _fingerprint


def _entry(path: Path, root: Path, shown: str) -> Optional[Path]:
    """Where the read of this file is kept: by its path, the project's root and the path its errors and
    spans show (which depends on how it was named)."""
    folder = cache_folder("traces")
    if folder is None:
        return None
    try:
        rules = _rules()
    except OSError:
        return None
    return folder / (hashlib.sha256(f"{rules}\0{os.path.abspath(root)}\0{os.path.abspath(path)}\0{shown}".encode()).hexdigest() + ".json.z")


def recall(path: Path, root: Path, shown: str) -> Optional[dict[str, Any]]:
    """The last read kept of this file, as `keep` was given it, or None."""
    entry = _entry(path, root, shown)
    if entry is None:
        return None
    try:
        record = json.loads(zlib.decompress(entry.read_bytes()))
    except (OSError, ValueError, RecursionError, zlib.error):
        return None
    try:
        os.utime(entry)  # recently used: kept when older entries go
    except OSError:
        pass
    return record if isinstance(record, dict) and record.get("format") == _FORMAT else None


def keep(path: Path, root: Path, shown: str, record: dict[str, Any]) -> None:
    """Keep this read of the file (a record of JSON values); never raises."""
    entry = _entry(path, root, shown)
    if entry is None:
        return
    try:
        store(entry, zlib.compress(json.dumps({**record, "format": _FORMAT}, ensure_ascii=False, separators=(",", ":")).encode(), 1))
        prune(entry.parent, list(entry.parent.glob("*.json.z")), MAX_ENTRIES)
    except (OSError, ValueError, TypeError, RecursionError):
        pass
