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
import tempfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.read_cache import cache_folder, prune

if TYPE_CHECKING:
    from .spans import SpansRead

#: Files read in fewer bytes are parsed each time (an entry costs more than parsing them).
MIN_BYTES = 1024 * 1024
#: Entries kept at most (one a trace file); past it, the least recently used quarter goes.
MAX_ENTRIES = 32
_FORMAT = "agentdiff-trace-read/1"
_fingerprint: Optional[str] = None


def _rules() -> str:
    global _fingerprint
    if _fingerprint is None:
        from importlib.metadata import PackageNotFoundError, version

        from . import names, spans

        digest = hashlib.sha256(_FORMAT.encode())
        for package in ("protobuf", "opentelemetry-proto"):
            try:
                digest.update(f"\0{package}={version(package)}".encode())
            except PackageNotFoundError:
                pass
        for module in (names, spans):
            digest.update(Path(module.__file__ or "").read_bytes())
        _fingerprint = digest.hexdigest()
    return _fingerprint


def _entry(path: Path, root: Path) -> Optional[Path]:
    folder = cache_folder("traces")
    if folder is None:
        return None
    return folder / (hashlib.sha256(f"{_rules()}\0{os.path.abspath(root)}\0{os.path.abspath(path)}".encode()).hexdigest() + ".json.z")


def recall(path: Path, root: Path) -> Optional["SpansRead"]:
    """The last read kept of this file, or None."""
    from .spans import Span, SpansRead

    entry = _entry(path, root)
    if entry is None:
        return None
    try:
        record = json.loads(zlib.decompress(entry.read_bytes()))
        found = SpansRead([Span(*span[:8], tuple((name, attributes) for name, attributes in span[8]), *span[9:]) for span in record["spans"]],
                          [LoadError(file=file, line=line, message=message) for file, line, message in record["errors"]],
                          int(record["size"]), str(record["digest"]), int(record["lines"]))
    except (OSError, ValueError, KeyError, TypeError, zlib.error):
        return None
    try:
        os.utime(entry)  # recently used: kept when older entries go
    except OSError:
        pass
    return found


def keep(path: Path, root: Path, found: "SpansRead") -> None:
    """Keep this read of the file (one of `MIN_BYTES` or more, that can be read on from); never raises."""
    entry = _entry(path, root)
    if entry is None or found.size < MIN_BYTES:
        return
    record = {"format": _FORMAT, "size": found.size, "digest": found.digest, "lines": found.lines,
              "spans": [[s.trace_id, s.span_id, s.parent_id, s.name, s.start_ns, s.end_ns, s.attributes, s.error,
                         [list(event) for event in s.events], s.where, s.adk_version] for s in found.spans],
              "errors": [[e.file, e.line, e.message] for e in found.errors]}
    try:
        data = zlib.compress(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode(), 1)
        entry.parent.mkdir(parents=True, exist_ok=True)
        handle, staged = tempfile.mkstemp(dir=entry.parent, prefix=".entry-", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            os.replace(staged, entry)
        except BaseException:
            os.unlink(staged)
            raise
        prune(entry.parent, list(entry.parent.glob("*.json.z")), MAX_ENTRIES)
    except (OSError, ValueError, TypeError, RecursionError):
        pass
