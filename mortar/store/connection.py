"""Where the store lives and how to open it.

DuckDB lets one process write a file at a time, so connections are short: open, read or write, close.
Inside one process it also refuses a read-only connection next to a read-write one and aborts one of
two concurrent schema updates. The dashboard serves every browser session from one process, in threads,
so :func:`session` keeps the process's readers and writers apart: reads of a file proceed together, each
on its own cursor of one read-only connection that they share; it is closed READ_LINGER_S after the last of
them (at once when it has been open READ_HOLD_S), or at once for a write of this process (a run in another
process can open the file between two page views; the reads of one page view, a few in a row, open it once);
a write waits until no read is under way, and reads wait while a write is under way or waiting. :func:`transaction` retries a write that a concurrent
writer made fail.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import duckdb

from mortar.store.schema import SCHEMA, SCHEMA_SHA

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DB = PROJECT_ROOT / "data" / "mortar.duckdb"
LOCK_WAIT_S = 30.0  # how long to wait for another process (a running run, the dashboard) to let go
RETRY_S = 30.0  # how long a write keeps retrying a transaction another writer made fail
# How long the shared read-only connection stays open after the last read: opening the file costs about 40 ms
# of CPU, and one page view reads it a few times in a row; short, because a run in another process waits for it.
READ_LINGER_S = 0.25
# Once it has been open this long, the last read closes it at once: browser sessions reading one after another
# (job panels refreshing themselves) must not keep a run in another process from writing.
READ_HOLD_S = 2.0

MEMORY = ":memory:"  # as ``db``: a store that lives as long as the process (scripts, pytest), no file
_memory = None
_memory_lock = threading.Lock()


class StoreBusy(RuntimeError):
    """Another process (a run in the background) holds the store's file longer than we wanted to wait."""


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    """``--db`` wins, then ``MORTAR_DB``, then ``data/mortar.duckdb`` in the project (``":memory:"``: no file)."""
    return Path(explicit or os.environ.get("MORTAR_DB") or DEFAULT_DB)


def open_file(path: Path, read_only: bool, wait_s: float = LOCK_WAIT_S):
    """Open the file, waiting up to ``wait_s`` while another process holds it: DuckDB allows one writer process.

    A store written by an older version is brought up to the schema first (readers expect every column)."""
    con = _open(path, read_only, wait_s)
    if read_only and not _current(con):
        con.close()
        _open(path, False, wait_s).execute(SCHEMA).close()
        con = _open(path, True, wait_s)
    return con


def _current(con) -> bool:
    """Was the store brought up to this version's schema (``schema.SCHEMA_SHA``)?"""
    try:
        rows = con.execute("SELECT value FROM store_meta WHERE key = 'schema'").fetchall()
    except duckdb.CatalogException:  # a store written before the schema was recorded
        return False
    return rows == [(SCHEMA_SHA,)]


def _open(path: Path, read_only: bool, wait_s: float):
    if not read_only:  # DuckDB refuses a read-write connection beside this process's read-only one
        _shared.close_idle(str(path))
    deadline = time.monotonic() + wait_s
    delay = 0.02
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as e:
            if "lock" not in str(e).lower() or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


@contextmanager
def connect(path: str | os.PathLike | None = None, read_only: bool = False):
    """A connection to the store (created with its schema on first write); an absent store reads as empty."""
    path = db_path(path)
    if str(path) == MEMORY:
        con = _memory_store().cursor()
        try:
            yield con
        finally:
            con.close()
        return
    if read_only and not path.exists():
        con = duckdb.connect(":memory:")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = open_file(path, read_only)
    try:
        if (read_only and not path.exists()) or (not read_only and not _current(con)):
            con.execute(SCHEMA)
        yield con
    finally:
        con.close()


def _memory_store():
    """The process's in-memory store, made with the schema on first use."""
    global _memory
    with _memory_lock:
        if _memory is None:
            _memory = duckdb.connect(MEMORY)
            _memory.execute(SCHEMA)
    return _memory


class _ReadersWriter:
    """The process's sessions of the store: any number of reads at once, or one write. A waiting write goes
    before new reads. A thread may nest sessions of the kind it holds, not a write in its read or the reverse
    (DuckDB refuses a read-only connection beside a read-write one)."""

    def __init__(self):
        self.changed = threading.Condition()
        self.readers: dict[int, int] = {}  # thread → its read sessions under way
        self.writer: int | None = None  # the thread writing
        self.writes = 0  # its write sessions under way
        self.writers_waiting = 0

    def begin_read(self) -> None:
        me = threading.get_ident()
        with self.changed:
            if self.writer == me:
                raise RuntimeError("a read session inside a write session of the same thread")
            # a thread that already reads goes on past a waiting write, which would otherwise wait for it forever
            self.changed.wait_for(lambda: self.writer is None and (not self.writers_waiting or me in self.readers))
            self.readers[me] = self.readers.get(me, 0) + 1

    def end_read(self) -> None:
        me = threading.get_ident()
        with self.changed:
            self.readers[me] -= 1
            if not self.readers[me]:
                del self.readers[me]
                self.changed.notify_all()

    def begin_write(self) -> None:
        me = threading.get_ident()
        with self.changed:
            if me in self.readers:
                raise RuntimeError("a write session inside a read session of the same thread")
            if self.writer != me:
                self.writers_waiting += 1
                try:
                    self.changed.wait_for(lambda: self.writer is None and not self.readers)
                finally:
                    self.writers_waiting -= 1
                    self.changed.notify_all()
                self.writer = me
            self.writes += 1

    def end_write(self) -> None:
        with self.changed:
            self.writes -= 1
            if not self.writes:
                self.writer = None
                self.changed.notify_all()

    @contextmanager
    def reading(self):
        self.begin_read()
        try:
            yield
        finally:
            self.end_read()

    @contextmanager
    def writing(self):
        self.begin_write()
        try:
            yield
        finally:
            self.end_write()


@dataclass
class _Shared:
    """A file's shared read-only connection."""
    con: object
    identity: tuple[int, int] | None  # the file it was opened on (:func:`_identity`)
    opened: float = field(default_factory=time.monotonic)
    reads: int = 1  # the reads using it


class _SharedReads:
    """One read-only connection per file for the reads under way, opened by the first and closed READ_LINGER_S
    after the last, or by the last at once when it has been open READ_HOLD_S (:meth:`close_idle`: at once); each
    read gets a cursor of its own (a DuckDB connection serves one thread, its cursors one each)."""

    def __init__(self):
        self.changed = threading.Condition()
        self.connections: dict[str, _Shared] = {}  # by file
        self.opening: set[str] = set()  # files whose first reader is still opening them

    @contextmanager
    def cursor(self, path: Path, open_connection):
        key = str(path)
        con = self._join(key, open_connection)
        try:
            with self.changed:
                cursor = con.cursor()
            try:
                yield cursor
            finally:
                cursor.close()
        finally:
            self._leave(key)

    def _join(self, key: str, open_connection):
        with self.changed:
            self.changed.wait_for(lambda: key not in self.opening)
            shared = self.connections.get(key)
            if shared and not shared.reads and shared.identity != _identity(key):  # replaced while it lingered
                self._close(key)
            elif shared:
                shared.reads += 1
                return shared.con
            self.opening.add(key)
        try:  # outside the lock: opening may wait for another process to let go of the file
            con = open_connection()
        except BaseException:
            with self.changed:
                self.opening.discard(key)
                self.changed.notify_all()
            raise
        with self.changed:
            self.opening.discard(key)
            self.connections[key] = _Shared(con, _identity(key))
            self.changed.notify_all()
        return con

    def _leave(self, key: str) -> None:
        with self.changed:
            shared = self.connections[key]
            shared.reads -= 1
            if shared.reads:
                return
            if time.monotonic() - shared.opened >= READ_HOLD_S:
                self._close(key)
                return
            closer = threading.Timer(READ_LINGER_S, self.close_idle, args=(key, shared.con))
            closer.daemon = True
            closer.start()

    def close_idle(self, key: str, con=None) -> None:
        """Close the file's connection now if no read is using it (before this process opens it to write; ``con``:
        only if it is still that connection, for a timer set by an earlier read)."""
        with self.changed:
            shared = self.connections.get(key)
            if shared and not shared.reads and con in (None, shared.con):
                self._close(key)

    def _close(self, key: str) -> None:
        self.connections.pop(key).con.close()  # the file is free for another process until the next read


def _identity(key: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(key)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


_sessions = _ReadersWriter()
_shared = _SharedReads()


class _ProcessLock:
    """``with process_lock:`` holds the store for a write with no session open, for code that opens its own
    connections (:func:`connect`) in a process that serves sessions: the dashboard starting a background run."""

    def __enter__(self):
        _sessions.begin_write()
        return self

    def __exit__(self, *exc) -> None:
        _sessions.end_write()


process_lock = _ProcessLock()


@contextmanager
def session(db=None, read_only: bool = True, wait_s: float | None = None):
    """A short connection to the store; reads of this process proceed together, a write alone (see the module
    docstring); other processes wait on the file lock.

    ``wait_s``: give up with :class:`StoreBusy` when another process holds the file that long (default: the
    store's own, longer wait).
    """
    path = db_path(db)
    if read_only:
        with _sessions.reading(), _read_connection(path, wait_s) as con:
            yield con
        return
    with _sessions.writing():
        if wait_s is not None and path.exists():  # wait for the file briefly, then open it as usual
            open_read_only(path, wait_s).close()
        with connect(db, read_only=False) as con:
            yield con


@contextmanager
def _read_connection(path: Path, wait_s: float | None):
    """A read session's connection: a cursor of the file's shared read-only connection; the process's store
    (``:memory:``) and a file not made yet read as :func:`connect` reads them."""
    if str(path) == MEMORY or not path.exists():
        with connect(path, read_only=True) as con:
            yield con
        return
    opener = partial(open_file, path, True) if wait_s is None else partial(open_read_only, path, wait_s)
    with _shared.cursor(path, opener) as con:
        yield con


def open_read_only(path: Path, wait_s: float):
    """Open an existing store read-only, or raise :class:`StoreBusy` after ``wait_s`` while another process holds it."""
    try:
        return open_file(path, read_only=True, wait_s=wait_s)
    except duckdb.IOException as e:
        if "lock" not in str(e).lower():
            raise
        raise StoreBusy(f"{path.name} is held by another process (a run writing its results)") from None


def transaction(db, work, wait_s: float | None = None):
    """Run ``work(con)`` in one transaction of a :func:`session`, retrying when a concurrent writer made it fail.

    ``wait_s``: raise StoreBusy when another process holds the file that long (default: the store's wait)."""
    deadline = time.monotonic() + RETRY_S
    delay = 0.02
    while True:
        try:
            with session(db, read_only=False, wait_s=wait_s) as con:
                con.begin()
                try:
                    result = work(con)
                    con.commit()
                except BaseException:
                    con.rollback()
                    raise
                return result
        except (duckdb.TransactionException, duckdb.ConnectionException):
            if time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
