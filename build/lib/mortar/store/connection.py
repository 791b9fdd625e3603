"""Where the store lives and how to open it.

DuckDB lets one process write a file at a time, so connections are short: open, read or write, close.
Inside one process it also refuses a read-only connection next to a read-write one and aborts one of
two concurrent schema updates; :func:`session` therefore serialises connections within the process
(the dashboard serves every browser session from one process, in threads), and :func:`transaction`
retries a write that a concurrent writer made fail.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import duckdb

from mortar.store.schema import SCHEMA, SCHEMA_SHA

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DB = PROJECT_ROOT / "data" / "mortar.duckdb"
LOCK_WAIT_S = 30.0  # how long to wait for another process (a running run, the dashboard) to let go
RETRY_S = 30.0  # how long a write keeps retrying a transaction another writer made fail

process_lock = threading.RLock()  # one connection at a time in this process (see the module docstring)
MEMORY = ":memory:"  # as ``db``: a store that lives as long as the process (scripts, pytest), no file
_memory = None


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
    with process_lock:
        if _memory is None:
            _memory = duckdb.connect(MEMORY)
            _memory.execute(SCHEMA)
    return _memory


@contextmanager
def session(db=None, read_only: bool = True, wait_s: float | None = None):
    """A short connection to the store; one at a time in this process (other processes wait on the file lock).

    ``wait_s``: give up with :class:`StoreBusy` when another process holds the file that long (default: the
    store's own, longer wait).
    """
    path = db_path(db)
    with process_lock:
        if wait_s is not None and read_only and path.exists():
            con = open_read_only(path, wait_s)  # what connect does for an existing file, with a short wait
            try:
                yield con
            finally:
                con.close()
        else:
            if wait_s is not None and path.exists():  # a write: wait for the file briefly, then open it as usual
                open_read_only(path, wait_s).close()
            with connect(db, read_only=read_only) as con:
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
