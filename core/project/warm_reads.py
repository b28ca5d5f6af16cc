"""Big eval set files the cache has not seen, read on every core while discovery goes on.

A file's first read validates every case (`eval_cases.read_compact`): about 5 µs a one-turn case, so a
million cases take most of a first `list` on one core, while a file read before costs only its entry
in the cache (`read_cache`). When discovery meets `MIN_FILES` or more big files the cache knows
nothing of, processes (one per core, at most `MAX_PROCESSES`; each a fresh interpreter, never a fork of
a process that may hold threads; `-P`, so a module in the working folder is never imported in place of
one of agentdiff's) read them first, each its share in discovery's order, and keep what they find in
the cache: an entry, or a mark that the file keeps none (it has errors, too few cases, or is not an
eval set), so it is not read ahead again. Discovery takes each file as soon as its process says it
is done with it and reads it from the cache, making its cases while the processes read the next
files. A process that fails, falls silent for `SILENCE` seconds or says something else leaves
discovery reading the rest of its share itself: the result is the same either way, only sooner with
the processes.

With the cache off (`AGENTDIFF_NO_CACHE`, no home to keep it in, or a folder that cannot be written)
nothing is read ahead. Two discoveries at once (two clients of `agentdiff mcp`) each read ahead.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats import read_cache
from agentdiff.core.formats.source_file import MAX_FILE_BYTES, read_regular

#: a file this big is read ahead (about 6,000 one-turn cases)
MIN_BYTES = 1 << 20
#: read ahead only when there are this many such files (one is read as soon by discovery itself)
MIN_FILES = 2
MAX_PROCESSES = 8
#: seconds a process may go without a word before discovery reads its files itself
SILENCE = 300.0


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _size(file: Path) -> int:
    try:
        return os.stat(file).st_size
    except OSError:
        return 0


def _known(file: Path) -> Optional[bool]:
    """Whether the cache knows this file's bytes (an entry, or the mark that it keeps none); None when
    it cannot be read (discovery says why)."""
    try:
        return read_cache.known(hashlib.sha256(read_regular(file, MAX_FILE_BYTES)).hexdigest())
    except Exception:  # noqa: BLE001 - not a regular file, too large, gone: discovery reads it and says so
        return None


class _Reader:
    """One process and its share of the files, in order."""

    def __init__(self, share: list[Path]) -> None:
        self.share = share
        self.done = 0  # how many of its share it has said it is done with
        self.given_up = False
        self._pending = b""
        self.process = subprocess.Popen([sys.executable, "-P", "-m", __name__, *map(str, share)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def wait_for(self, place: int) -> None:
        while self.done <= place and not self.given_up:
            line = self._line()
            if line is None or line != f"done {self.done}":  # stopped, silent, or saying something else
                self.given_up = True
                self.close()
            else:
                self.done += 1

    def _line(self) -> Optional[str]:
        out = self.process.stdout
        assert out is not None
        while b"\n" not in self._pending:
            if os.name != "nt":  # a pipe can be waited on with a deadline here
                import select

                ready, _, _ = select.select([out], [], [], SILENCE)
                if not ready:
                    return None
            chunk = os.read(out.fileno(), 4096)
            if not chunk:
                return None
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line.decode("ascii", "replace").strip()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class ReadAhead:
    """The big files of one discovery, read ahead where the cache lacks them."""

    def __init__(self, files: Sequence[Path]) -> None:
        self._reader_of: dict[Path, tuple[_Reader, int]] = {}  # file → (its process, its place in that process's share)
        self._readers: list[_Reader] = []
        big = list(dict.fromkeys(file for file in files if _size(file) >= MIN_BYTES))
        if len(big) < MIN_FILES or not read_cache.writable():
            return
        cold: list[Path] = []
        seen_known = False
        for at, file in enumerate(big):
            known = _known(file)
            if known is None:
                continue
            if known:
                seen_known = True  # a suite read before: only its files not known (changed since) are read ahead
                continue
            cold.append(file)
            if not seen_known and len(cold) >= MIN_FILES:  # a suite new to the cache: the rest too, unread
                cold += big[at + 1:]  # (a process passes quickly over one it finds known)
                break
        if len(cold) < MIN_FILES:
            return
        count = min(_cores(), MAX_PROCESSES, len(cold))
        try:
            for share in (cold[k::count] for k in range(count)):
                try:
                    reader = _Reader(share)
                except OSError:
                    continue
                self._readers.append(reader)
                for place, file in enumerate(share):
                    self._reader_of[file] = (reader, place)
        except BaseException:
            self.close()
            raise

    def wait(self, file: Path) -> None:
        """Until the process reading `file` is done with it (or is given up on)."""
        found = self._reader_of.get(file)
        if found is not None:
            found[0].wait_for(found[1])

    def close(self) -> None:
        for reader in self._readers:
            reader.close()


def _read(paths: Sequence[str]) -> None:
    """A process's share: each file read as discovery reads it (which keeps its entry), or marked as
    keeping none; a line each."""
    from agentdiff.core.formats.eval_set_files import load_eval_set

    for place, path in enumerate(paths):
        try:
            digest = hashlib.sha256(read_regular(Path(path), MAX_FILE_BYTES)).hexdigest()
            if not read_cache.known(digest):
                load_eval_set(Path(path))
                if not read_cache.known(digest):
                    read_cache.mark_unkept(digest)
        except Exception:  # noqa: BLE001 - the file is read again by discovery, which reports it
            pass
        sys.stdout.write(f"done {place}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _read(sys.argv[1:])
