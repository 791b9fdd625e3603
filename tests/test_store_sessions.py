"""Sessions of the store in one process (mortar.store.session): reads proceed together on cursors of one shared
read-only connection, a write waits for them and they for it, and the file is let go shortly after the last read."""

import subprocess
import sys
import threading
import time

import pytest

from mortar import store
from mortar.store import connection

WAIT_S = 10  # far longer than any step here takes; a test that waits this long has deadlocked

OPEN_FOR_WRITING = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE IF NOT EXISTS outside (i INTEGER)")
con.close()
"""


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "s.duckdb"
    with store.connect(path) as con:
        con.execute("CREATE TABLE notes (i INTEGER)")
    return path


def in_thread(work) -> tuple[threading.Thread, list]:
    """Start ``work()`` in a thread; what it raises lands in the list returned."""
    errors = []

    def run():
        try:
            work()
        except Exception as e:  # reported by the test
            errors.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors


def finished(*started) -> bool:
    """Whether the threads ``in_thread`` started all ended within WAIT_S, none of them raising."""
    for thread, _ in started:
        thread.join(WAIT_S)
    return not any(thread.is_alive() or errors for thread, errors in started)


def notes(db) -> int:
    with store.session(db) as con:
        return con.execute("SELECT count(*) FROM notes").fetchone()[0]


def add_note(db) -> None:
    store.transaction(db, lambda con: con.execute("INSERT INTO notes VALUES (1)"))


def other_process_opens(db) -> bool:
    """Whether another process can open the store for writing right now (without waiting)."""
    done = subprocess.run([sys.executable, "-c", OPEN_FOR_WRITING, str(db)], capture_output=True, text=True)
    assert done.returncode == 0 or "lock" in done.stderr.lower(), done.stderr
    return done.returncode == 0


@pytest.mark.parametrize("where", ["file", store.MEMORY])
def test_two_threads_read_at_the_same_time(db, where):
    """Both threads are inside a read session together: one lock for every session would leave the barrier
    waiting for the second thread until it broke."""
    target = db if where == "file" else store.MEMORY
    both_inside = threading.Barrier(2, timeout=WAIT_S)
    with store.session(target) as con:  # the process's in-memory store may hold other tests' runs
        runs = con.execute("SELECT count(*) FROM runs").fetchone()

    def read():
        with store.session(target) as con:
            assert con.execute("SELECT 42").fetchone() == (42,)
            both_inside.wait()
            assert con.execute("SELECT count(*) FROM runs").fetchone() == runs

    started = [in_thread(read) for _ in range(2)]
    for thread, errors in started:
        thread.join(WAIT_S)
        assert not errors, errors


def test_a_write_waits_for_the_readers_and_they_see_it_after(db):
    inside, leave, written = threading.Event(), threading.Event(), threading.Event()

    def read():
        with store.session(db) as con:
            inside.set()
            leave.wait(WAIT_S)
            assert con.execute("SELECT count(*) FROM notes").fetchone() == (0,)

    reader = in_thread(read)
    assert inside.wait(WAIT_S)
    writer = in_thread(lambda: (add_note(db), written.set()))
    assert not written.wait(0.5)  # the reader is still inside
    leave.set()
    assert written.wait(WAIT_S)
    assert finished(reader, writer)
    assert notes(db) == 1


def test_reads_wait_while_a_write_is_under_way(db):
    writing, finish, read_done = threading.Event(), threading.Event(), threading.Event()
    seen = []

    def write():
        with store.session(db, read_only=False) as con:
            con.execute("INSERT INTO notes VALUES (1)")
            writing.set()
            finish.wait(WAIT_S)

    writer = in_thread(write)
    assert writing.wait(WAIT_S)
    reader = in_thread(lambda: (seen.append(notes(db)), read_done.set()))
    assert not read_done.wait(0.5)  # the write is still under way
    finish.set()
    assert read_done.wait(WAIT_S)
    assert finished(reader, writer)
    assert seen == [1]


def test_a_thread_reading_reads_again_past_a_waiting_write(db):
    """A nested read of a thread that reads goes on although a write waits (the write waits for that thread)."""
    inside, nested = threading.Event(), threading.Event()

    def read_twice():
        with store.session(db):
            inside.set()
            wait_for_writer()
            with store.session(db) as con:
                con.execute("SELECT 1").fetchone()
                nested.set()

    def wait_for_writer():
        deadline = time.monotonic() + WAIT_S
        while not connection._sessions.writers_waiting and time.monotonic() < deadline:
            time.sleep(0.01)

    reader = in_thread(read_twice)
    assert inside.wait(WAIT_S)
    writer = in_thread(lambda: add_note(db))
    assert nested.wait(WAIT_S)
    assert finished(reader, writer)
    assert notes(db) == 1


def test_the_file_is_let_go_after_the_last_reader(db):
    first_in, second_in, leave_first, leave_second = (threading.Event() for _ in range(4))

    def read(entered, leave):
        with store.session(db) as con:
            con.execute("SELECT count(*) FROM notes").fetchone()
            entered.set()
            leave.wait(WAIT_S)

    first, first_errors = in_thread(lambda: read(first_in, leave_first))
    assert first_in.wait(WAIT_S)
    second, second_errors = in_thread(lambda: read(second_in, leave_second))
    assert second_in.wait(WAIT_S)
    assert not other_process_opens(db)  # two readers hold it
    leave_first.set()
    first.join(WAIT_S)
    assert not other_process_opens(db)  # the second reader still holds it
    leave_second.set()
    second.join(WAIT_S)
    assert not first_errors and not second_errors
    assert let_go(db)
    assert other_process_opens(db)


def let_go(db) -> bool:
    """Whether the process closes the file's shared connection within WAIT_S (READ_LINGER_S after the last read)."""
    deadline = time.monotonic() + WAIT_S
    while str(db) in connection._shared.connections and time.monotonic() < deadline:
        time.sleep(0.01)
    return str(db) not in connection._shared.connections


@pytest.fixture
def opens(monkeypatch) -> list:
    """Every opening of a file by a read session."""
    opened = []

    def counted(path, wait_s):
        opened.append(path)
        return connection.open_file(path, True, wait_s)
    monkeypatch.setattr(connection, "open_read_only", counted)
    return opened


def test_reads_in_a_row_open_the_file_once_and_a_write_after_them_goes_ahead(db, opens):
    """The reads of a page view come one after another: the first opens the file, the others find its connection
    still open; a write of this process right after them closes it instead of waiting for it."""
    for _ in range(3):
        with store.session(db, wait_s=WAIT_S) as con:
            con.execute("SELECT count(*) FROM notes").fetchone()
    assert opens == [db]
    add_note(db)
    with store.session(db, wait_s=WAIT_S) as con:
        assert con.execute("SELECT count(*) FROM notes").fetchone() == (1,)
    assert let_go(db)
    assert other_process_opens(db)


def test_a_store_replaced_while_its_connection_lingers_is_read_afresh(db, opens, tmp_path):
    with store.session(db, wait_s=WAIT_S) as con:
        assert con.execute("SELECT count(*) FROM notes").fetchone() == (0,)
    with store.connect(tmp_path / "other.duckdb") as con:
        con.execute("CREATE TABLE notes (i INTEGER)")
        con.execute("INSERT INTO notes VALUES (1), (2)")
    (tmp_path / "other.duckdb").replace(db)
    with store.session(db, wait_s=WAIT_S) as con:
        assert con.execute("SELECT count(*) FROM notes").fetchone() == (2,)
    assert opens == [db, db]


def test_a_read_of_a_held_file_gives_up_and_the_next_reader_can_open_it(db, tmp_path):
    """A first reader that cannot open the file (another process writes) leaves no shared connection behind."""
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time, duckdb\ncon = duckdb.connect(sys.argv[1])\n"
                               "print('holding', flush=True)\ntime.sleep(60)", str(db)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(store.StoreBusy):
            with store.session(db, wait_s=0.2):
                pass
    finally:
        holder.terminate()
        holder.wait()
    with store.session(db, wait_s=WAIT_S) as con:
        assert con.execute("SELECT count(*) FROM notes").fetchone() == (0,)
    assert let_go(db)
    assert other_process_opens(db)


def test_a_write_inside_a_read_of_the_same_thread_is_refused(db):
    with store.session(db):
        with pytest.raises(RuntimeError):
            add_note(db)
    add_note(db)
    assert notes(db) == 1


def test_a_connection_held_long_enough_is_let_go_by_the_last_read_at_once(db, opens, monkeypatch):
    """Sessions reading one after another would keep the file open for good: past READ_HOLD_S, the last read
    closes it without lingering, so a run in another process gets to write."""
    monkeypatch.setattr(connection, "READ_HOLD_S", 0.0)
    monkeypatch.setattr(connection, "READ_LINGER_S", WAIT_S)
    with store.session(db, wait_s=WAIT_S) as con:
        con.execute("SELECT count(*) FROM notes").fetchone()
    assert str(db) not in connection._shared.connections
    assert other_process_opens(db)
