"""The history's table on disk: an SQLite database (`.agentdiff/history.sqlite`), one row per run of a
case, each case's newest `KEEP`.

A run adds its rows and nothing else is rewritten, so a run of a million cases holds no table in memory
and each write costs what it adds. Sessions open at once (two terminals, `serve`'s tabs, a `run`) share
the file: SQLite's locking puts their writes in turn, and each reads what the others committed. A
history kept by earlier versions in `.agentdiff/history.json` is moved into the database the first
time one is opened beside it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Optional

from agentdiff.core.formats.set_aside import linked_state, made_state_dir, set_aside
from agentdiff.core.formats.source_file import read_text_regular

KEEP = 20
LEGACY_NAME = "history.json"
SCHEMA = 1  # PRAGMA user_version
BUSY_SECONDS = 10.0  # how long a write waits for another session's
STATEMENT_SECONDS = 10.0  # how long one statement may run before it is stopped (a progress handler)
# What agentdiff's own database holds is `_SQL` (below): anything else in sqlite_master (a trigger, a view,
# another table, our table defined otherwise) was put there by someone else, and can make a statement run for ever.

_TABLE = """CREATE TABLE IF NOT EXISTS runs (
    case_id TEXT NOT NULL, time REAL NOT NULL, status TEXT, score REAL, batch REAL, seconds REAL,
    read TEXT, entry TEXT NOT NULL, tag TEXT);
CREATE INDEX IF NOT EXISTS runs_by_case ON runs (case_id, time, seconds);  -- covers the ETA's last seconds"""

# A case's rows past its newest KEEP (none when it has fewer: the subquery is NULL, no time is below it)
_PRUNE = "DELETE FROM runs WHERE case_id = ?1 AND time < (SELECT time FROM runs WHERE case_id = ?1 ORDER BY time DESC LIMIT 1 OFFSET ?2)"


def row(case_id: str, entry: dict[str, Any], tag: Optional[str] = None) -> tuple:
    """An entry as the table keeps it: the columns queried, the whole entry as JSON, and the tag the
    session that added it knows it by (telling its own written entries from those waiting)."""
    def number(key: str) -> Optional[float]:
        value = entry.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    read = entry.get("read")
    if isinstance(read, dict) and read:  # its own column (DISTINCT for the digests), not again in the entry's JSON
        entry = {key: value for key, value in entry.items() if key != "read"}
    else:
        read = None
    return (case_id, float(entry["time"]), entry.get("status") if isinstance(entry.get("status"), str) else None, number("score"),
            number("batch"), number("seconds"), json.dumps(read, separators=(",", ":")) if read else None,
            json.dumps(entry, separators=(",", ":")), tag)


def entry_of(text: str, read: Optional[str]) -> dict[str, Any]:
    """A row's entry (as `row` took it apart)."""
    entry = json.loads(text)
    if read is not None:
        entry["read"] = json.loads(read)
    return entry


class Store:
    """The database of `path`, read on the caller's thread and written on one writer thread (a
    connection each). `loaded` is False when a history was there but could not be read (set aside,
    with a notice); `writable` is False when it must not be written (a committed link)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.root = path.parent.parent
        self.loaded = True
        self.writable = linked_state(self.root) is None and not os.path.islink(path)
        self.usable = True  # False: the file there is not to be opened at all (it is not ours)
        self.problem: Optional[str] = None  # why the history could not be read or written, to say once
        self._read_lock = threading.Lock()
        self._reader: Optional[sqlite3.Connection] = None
        self._writer: Optional[sqlite3.Connection] = None
        self._memory: Optional[sqlite3.Connection] = None  # an earlier version's history read here only (never written)
        self._check()
        legacy = path.with_name(LEGACY_NAME)
        if not os.path.lexists(path) and os.path.lexists(legacy):
            self._import(legacy)

    # -- opening -------------------------------------------------------------------------------

    def _check(self) -> None:
        """A file there that is no history of ours is set aside, whole, with a notice."""
        try:
            info = os.lstat(self.path)
        except OSError:
            return
        why = None
        self._journal_links()
        if not stat.S_ISREG(info.st_mode):
            why = "it is not a regular file"
        else:
            try:
                connection = self._connect(create=False)
                try:
                    version = connection.execute("PRAGMA user_version").fetchone()[0]
                    foreign = sorted(f"{kind} {name}" for kind, name, sql in connection.execute("SELECT type, name, sql FROM sqlite_master")
                                     if not str(name).startswith("sqlite_autoindex") and _SQL.get((kind, name)) != _squeezed(sql))
                    if foreign:
                        why = f"it holds what agentdiff did not create ({', '.join(foreign[:3])})"
                    elif version > SCHEMA:
                        self.writable = False  # a newer agentdiff's: read what this one can, write nothing
                finally:
                    connection.close()
            except sqlite3.DatabaseError as exc:
                if not _not_a_database(exc):  # locked by another session, a full disk, an I/O error: kept as it is
                    self.loaded = False
                    self.writable = False
                    self.problem = f"{self.path.name} could not be read ({exc}); it is kept as it is"
                    return
                why = f"it is not a history database ({exc})"
        if why is not None:
            self.loaded = False
            self.usable = False  # never read nor written, even where it cannot be set aside
            if self.writable and set_aside(self.path, self.root, why):
                for suffix in ("-wal", "-shm"):  # the set-aside database's own journal, no use to a new one
                    try:
                        os.unlink(f"{self.path}{suffix}")
                    except OSError:
                        pass
                self.usable = True  # set aside: a new one is made in its place
            else:
                self.writable = False

    def _journal_links(self) -> None:
        """SQLite's journal files are its own regular files: one that is a link (or a folder, a FIFO), as
        a cloned repository can plant, would send the journal elsewhere or fail every write; it goes."""
        for suffix in ("-wal", "-shm", "-journal"):
            journal = f"{self.path}{suffix}"
            try:
                info = os.lstat(journal)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                try:
                    os.unlink(journal)
                except OSError:
                    self.writable = False
                    self.usable = False
                    self.problem = f"{os.path.basename(journal)} is not SQLite's own file and cannot be removed: no history is kept"

    def _connect(self, create: bool) -> sqlite3.Connection:
        mode = "rwc" if create else ("rw" if self.writable else "ro")
        uri = f"{self.path.resolve().as_uri()}?mode={mode}"
        connection = sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False, factory=Bounded)
        if create:
            try:
                connection.execute("PRAGMA journal_mode=WAL")  # readers never wait for a writer
            except sqlite3.DatabaseError:
                pass  # a file system without shared memory: SQLite's default journal
            connection.execute("PRAGMA synchronous=NORMAL")  # a convenience: no flush to the disk per write
            connection.executescript(_TABLE)
            if connection.execute("PRAGMA user_version").fetchone()[0] == 0:
                connection.execute(f"PRAGMA user_version={SCHEMA}")
        return connection

    def _import(self, legacy: Path) -> None:
        """The rows of an earlier version's history.json, moved into a new database (made beside it
        and linked in whole, so a second session doing the same at once finds one or the other)."""
        try:
            loaded = entries_of(json.loads(read_text_regular(legacy)))
        except FileNotFoundError:
            return
        except (OSError, ValueError, RecursionError) as exc:
            loaded, why = None, _why(exc)
        else:
            why = "it is not a mapping of case ids to entries"
        if loaded is None:
            self.loaded = False
            if self.writable:
                set_aside(legacy, self.root, why)
            return
        rows = [row(case_id, entry) for case_id, entries in loaded.items() for entry in entries[-KEEP:]]
        if not self.writable:
            self._reader = self._memory = _in_memory(rows)  # read here, this session only
            return
        staging = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            staging.unlink(missing_ok=True)
            connection = sqlite3.connect(staging, isolation_level=None)
            try:
                connection.executescript(_TABLE)
                connection.execute(f"PRAGMA user_version={SCHEMA}")
                with connection:
                    connection.execute("BEGIN")
                    connection.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            finally:
                connection.close()
            try:
                os.link(staging, self.path)
            except FileExistsError:
                pass  # another session moved it in first: the same rows
            except OSError:  # a file system without hard links: moved in place, unless another session was first
                if not os.path.lexists(self.path):
                    os.replace(staging, self.path)
            legacy.unlink(missing_ok=True)
        except (OSError, sqlite3.Error):
            self._reader = self._memory = _in_memory(rows)
            self.writable = False
        finally:
            try:
                staging.unlink()
            except OSError:
                pass

    # -- reading -------------------------------------------------------------------------------

    def query(self, sql: str, parameters: Iterable[Any] = ()) -> list[tuple]:
        """Rows committed so far (by any session); none while there is no database."""
        with self._read_lock:
            if self._reader is None:
                if not self.usable or not os.path.isfile(self.path):
                    return []
                try:
                    self._reader = self._connect(create=False)
                except sqlite3.Error:
                    return []
            try:
                return self._reader.execute(sql, tuple(parameters)).fetchall()
            except sqlite3.Error:
                return []  # locked past waiting, or gone bad since: history is a convenience

    # -- writing (the writer thread only) ------------------------------------------------------

    def write(self, rows: list[tuple]) -> None:
        """Add rows and keep each of their cases' newest KEEP, in one transaction. Raises OSError or
        sqlite3.Error when it cannot."""
        if not self.writable or not self.usable:
            raise PermissionError("the history is not written here")
        if self._writer is None:
            made_state_dir(self.path.parent)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = self._connect(create=True)
        with self._writer:
            self._writer.execute("BEGIN IMMEDIATE")
            self._writer.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._writer.executemany(_PRUNE, [(case_id, KEEP - 1) for case_id in {r[0] for r in rows}])

    def close_writer(self) -> None:
        """(On the writer thread.)"""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def close_reader(self) -> None:
        with self._read_lock:
            if self._reader is not None and self._reader is not self._memory:
                self._reader.close()
                self._reader = None


def _squeezed(sql: object) -> str:
    """SQL as compared: whitespace runs as one space, without `IF NOT EXISTS` (SQLite keeps the text)."""
    return " ".join(str(sql).replace("IF NOT EXISTS ", "").split()).rstrip(";") if sql else ""


#: Our table and index, exactly as `_TABLE` makes them: another definition under the same name (a CHECK
#: or a generated column that runs on every insert) is not ours either.
_SQL = {("table", "runs"): _squeezed(_TABLE.split(";")[0]),
        ("index", "runs_by_case"): _squeezed(_TABLE.split(";")[1].split("--")[0])}


def _not_a_database(exc: sqlite3.DatabaseError) -> bool:
    """The file is not an SQLite database, or a damaged one: what sets a history aside. (A lock, a full
    disk or an I/O error says nothing of the file: it is kept, and written again later.)"""
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text or "unsupported file format" in text


class Bounded(sqlite3.Connection):
    """A connection no statement of which runs longer than `seconds` (it fails as "interrupted"): a
    history can never hold a command up for good. The clock starts at each `execute`."""

    seconds = STATEMENT_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._started = time.monotonic()
        self.set_progress_handler(self._overdue, 10_000)

    def _overdue(self) -> int:
        return 1 if time.monotonic() - self._started > self.seconds else 0

    def execute(self, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        self._started = time.monotonic()
        return super().execute(*args)

    def executemany(self, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        self._started = time.monotonic()
        return super().executemany(*args)

    def executescript(self, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        self._started = time.monotonic()
        return super().executescript(*args)


def _in_memory(rows: list[tuple]) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    connection.executescript(_TABLE)
    connection.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return connection


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at line {exc.lineno}: {exc.msg}"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def entries_of(loaded: Any) -> Optional[dict[str, list[dict[str, Any]]]]:
    """An earlier version's table from its JSON: case id → its entries (mappings with a numeric time);
    None when the file is not such a table at all. Entries of another shape are dropped, one by one."""
    if not isinstance(loaded, dict):
        return None
    table: dict[str, list[dict[str, Any]]] = {}
    for case_id, entries in loaded.items():
        if isinstance(entries, list):
            table[case_id] = [entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("time"), (int, float))
                              and not isinstance(entry.get("time"), bool) and isinstance(entry.get("batch", 0) or 0, (int, float))]
    return table
