"""Big eval set files the cache has not seen, read on every core while discovery goes on.

A file's first read validates every case (`eval_cases.read_compact`): about 10 µs a case, so a million
cases take most of a first `list` on one core, while a file read before costs only its entry in the
cache (`read_cache`). When discovery meets `MIN_FILES` or more big files the cache has no entry for,
processes (one per core, each a fresh interpreter: never a fork of a process that may hold threads;
`-P`, so a module in the working folder is never imported in place of one of agentdiff's)
read them first, each its share in discovery's order, and keep what they find in the cache. Discovery
takes each file as soon as its process says it is done and reads it from the cache, making its cases
while the processes read the next files. A process that fails, or a file that does not read cleanly
(no entry is kept for one with errors), leaves discovery reading the file itself: the result is the
same either way, only sooner with the processes.

With the cache off (`AGENTDIFF_NO_CACHE`, or no home to keep it in) nothing is read ahead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Optional, Sequence

from agentdiff.core.formats import read_cache
from agentdiff.core.formats.source_file import SourceFileError, read_source

#: a file this big is read ahead (about 6,000 one-turn cases)
MIN_BYTES = 1 << 20
#: read ahead only when there are this many such files (one is read as soon by discovery itself)
MIN_FILES = 2


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


class ReadAhead:
    """The big files of one discovery, read ahead where the cache lacks them."""

    def __init__(self, files: Sequence[Path], displays: Sequence[str]) -> None:
        self._worker_of: dict[Path, tuple[int, int]] = {}  # file → (its process, its place in that process's share)
        self._done: list[int] = []  # per process: how many of its files it has said it is done with
        self._processes: list[subprocess.Popen] = []
        big = [(file, display) for file, display in zip(files, displays) if _size(file) >= MIN_BYTES]
        if len(big) < MIN_FILES or read_cache.cache_dir() is None:
            return
        cold: list[Path] = []
        known = False
        for at, (file, display) in enumerate(big):
            if self._known(file, display):
                known = True  # a suite read before: only its files not kept (changed since) are read ahead
                continue
            cold.append(file)
            if not known and len(cold) >= MIN_FILES:  # a suite new to the cache: the rest too, unread (a process passes over one kept)
                cold += [rest for rest, _ in big[at + 1:]]
                break
        if len(cold) < MIN_FILES:
            return
        count = min(_cores(), len(cold))
        shares: list[list[Path]] = [cold[k::count] for k in range(count)]
        for share in shares:
            try:
                process = subprocess.Popen([sys.executable, "-P", "-m", __name__, *map(str, share)], stdin=subprocess.DEVNULL,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            except OSError:
                continue
            index = len(self._processes)
            self._processes.append(process)
            self._done.append(0)
            for place, file in enumerate(share):
                self._worker_of[file] = (index, place)

    @staticmethod
    def _known(file: Path, display: str) -> bool:
        """Whether the cache holds this file's bytes. (Its text is let go: held for discovery, the texts
        of a whole suite read first stayed in the process's heap after the suite was let go.)"""
        try:
            return read_cache.known(read_source(file, display).sha256)
        except SourceFileError:
            return True  # discovery reads it, and says why it cannot

    def wait(self, file: Path) -> None:
        """Until the process reading `file` is done with it (or has stopped)."""
        found = self._worker_of.get(file)
        if found is None:
            return
        index, place = found
        process = self._processes[index]
        out: Optional[IO[str]] = process.stdout
        while self._done[index] <= place and out is not None:
            if not out.readline():  # it stopped: discovery reads the rest of its share itself
                self._done[index] = len(self._worker_of)
                break
            self._done[index] += 1

    def close(self) -> None:
        for process in self._processes:
            if process.poll() is None:
                process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()


def _read(paths: Sequence[str]) -> None:
    """A process's share: each file read as discovery reads it (which keeps its entry), a line each."""
    from agentdiff.core.formats.eval_set_files import load_eval_set

    for path in paths:
        try:
            load_eval_set(Path(path))
        except Exception:  # noqa: BLE001 - the file is read again by discovery, which reports it
            pass
        sys.stdout.write("done\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _read(sys.argv[1:])
