"""SQLite writers take turns (study.store.write_turn.WriteTurn) instead of meeting SQLite's busy
handler: several processes with several threads each write to one file at once, with the busy
timeout at 0, and none is told "database is locked"."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from sqlalchemy import text

from study.store import make_engine, reading, writing
from study.store.driver import driver_fetch
from study.store.transactions import keep_write_connection

WRITER = textwrap.dedent(
    """
    import sys, threading
    from sqlalchemy import event, text
    from study.store import make_engine, writing

    engine = make_engine(sys.argv[1])

    @event.listens_for(engine, "connect")
    def no_waiting(dbapi_connection, _record):
        # After make_engine's own pragmas: a writer that found the lock taken would fail at once.
        dbapi_connection.execute("PRAGMA busy_timeout=0")

    failures = []

    def write(thread):
        for i in range(150):
            try:
                with writing(engine) as connection:
                    before = connection.execute(text("SELECT count(*) FROM log")).scalar_one()
                    connection.execute(text("INSERT INTO log VALUES (:who, :n)"),
                                       {"who": f"{sys.argv[2]}-{thread}", "n": before})
            except Exception as error:
                failures.append(repr(error))

    threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    print(len(failures), failures[:1])
    sys.exit(1 if failures else 0)
    """
)


def test_three_processes_of_four_threads_write_without_a_busy_wait(tmp_path):
    url = f"sqlite:///{tmp_path / 'study.db'}"
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE log (who TEXT, n INTEGER)"))
    engine.dispose()

    writers = [subprocess.Popen([sys.executable, "-c", WRITER, url, str(p)],
                                stdout=subprocess.PIPE, text=True) for p in range(3)]
    outputs = [(w.wait(timeout=120), w.stdout.read()) for w in writers]

    assert all(code == 0 for code, _ in outputs), outputs
    with reading(engine) as connection:
        counts = [n for (n,) in connection.execute(text("SELECT n FROM log ORDER BY n"))]
    # Each write counted the rows before it inside its own turn: 0, 1, 2, ... without repeats.
    assert counts == list(range(3 * 4 * 150))
    assert (tmp_path / "study.db-lock").stat().st_mode & 0o777 == 0o600


def test_an_engine_let_go_leaves_no_file_of_its_database_open(tmp_path):
    """A test suite or a notebook makes and drops many engines: each one's files, the write
    turn's lock file among them, close once it is gone."""
    paths = []
    for number in range(20):
        path = tmp_path / f"study-{number}.db"
        engine = make_engine(f"sqlite:///{path}")
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE log (n INTEGER)"))
        with writing(engine) as connection:
            connection.execute(text("INSERT INTO log VALUES (1)"))
        paths.append(str(path))
        del engine, connection
    # SQLAlchemy's engines sit in reference cycles, so they go with the garbage collector's full
    # pass; and the WAL checkpoint thread lets go of a database a moment after its last write.
    deadline = time.monotonic() + 10
    while _open_on(paths) and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    assert _open_on(paths) == []


def _open_on(paths: list[str]) -> list[str]:
    """This process's open files among `paths` and theirs (-wal, -shm, -lock)."""
    found = []
    for descriptor in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{descriptor}")
        except OSError:
            continue
        if any(target.startswith(path) for path in paths):
            found.append(target)
    return found


# A served worker's kept write connection (study.store.transactions.keep_write_connection).


def _kept_log(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'study.db'}")
    keep_write_connection(engine)
    with writing(engine) as connection:
        connection.execute(text("CREATE TABLE log (n INTEGER)"))
    return engine


def _in_a_forked_child(work) -> int:
    """The exit status of a forked child that runs `work()`: 0 when it returns True, 1 when it
    returns False, 2 when it raises."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's exit status is the assertion
        try:
            os._exit(0 if work() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status)


def _stored(engine) -> list[int]:
    with reading(engine) as connection:
        return list(connection.execute(text("SELECT n FROM log ORDER BY n")).scalars())


def test_on_the_kept_connection_a_write_that_fails_leaves_nothing_and_the_next_is_stored(tmp_path):
    engine = _kept_log(tmp_path)
    with pytest.raises(RuntimeError):
        with writing(engine) as connection:
            connection.execute(text("INSERT INTO log VALUES (1)"))
            raise RuntimeError("the check refused it")
    with writing(engine) as connection:
        connection.execute(text("INSERT INTO log VALUES (2)"))
    assert _stored(engine) == [2]


@pytest.mark.parametrize("kept", [True, False], ids=["kept", "pooled"])
@pytest.mark.parametrize("through", ["driver", "driver-and-sqlalchemy"])
def test_a_write_is_one_transaction_whichever_way_its_statements_go(tmp_path, kept, through):
    # SQLite's write transaction is begun and committed on the driver; a statement through
    # SQLAlchemy inside it must join it, not commit apart from it.
    engine = make_engine(f"sqlite:///{tmp_path / 'study.db'}")
    if kept:
        keep_write_connection(engine)
    with writing(engine) as connection:
        connection.execute(text("CREATE TABLE log (n INTEGER)"))

    def write(connection, first: int) -> None:
        driver_fetch(connection, "INSERT INTO log VALUES (?)", (first,))
        if through == "driver":
            driver_fetch(connection, "INSERT INTO log VALUES (?)", (first + 1,))
        else:
            connection.execute(text("INSERT INTO log VALUES (:n)"), {"n": first + 1})

    with pytest.raises(RuntimeError):
        with writing(engine) as connection:
            write(connection, 1)
            raise RuntimeError("the check refused it")
    assert _stored(engine) == []
    with writing(engine) as connection:
        write(connection, 3)
    with writing(engine) as connection:  # and the next one begins afresh
        write(connection, 5)
    assert _stored(engine) == [3, 4, 5, 6]


def test_dispose_closes_the_kept_connection(tmp_path):
    engine = _kept_log(tmp_path)
    database = str(tmp_path / "study.db")
    with writing(engine) as connection:
        connection.execute(text("INSERT INTO log VALUES (1)"))
    assert [name for name in _open_on([database]) if not name.endswith("-lock")]
    engine.dispose()
    assert [name for name in _open_on([database]) if not name.endswith("-lock")] == []
    with writing(engine) as connection:  # and the engine still writes afterwards
        connection.execute(text("INSERT INTO log VALUES (2)"))
    assert _stored(engine) == [1, 2]


def test_a_forked_child_writes_on_its_own_connection_and_the_parent_goes_on(tmp_path):
    engine = _kept_log(tmp_path)
    with writing(engine) as connection:
        connection.execute(text("INSERT INTO log VALUES (1)"))

    def child():
        with writing(engine) as connection:
            connection.execute(text("INSERT INTO log VALUES (2)"))
        return True

    assert _in_a_forked_child(child) == 0
    with writing(engine) as connection:
        connection.execute(text("INSERT INTO log VALUES (3)"))
    assert _stored(engine) == [1, 2, 3]


def test_a_forked_childs_threads_find_the_turn_their_own_at_once(tmp_path):
    # A worker `study serve` forks gets its first requests on many threads at once: none finds
    # the parent's turn to make anew (each would make its own lock and open file).
    engine = _kept_log(tmp_path)
    with writing(engine) as connection:
        connection.execute(text("INSERT INTO log VALUES (0)"))

    def child():
        from study.store.write_turn import WriteTurn

        made_anew = []
        original = WriteTurn._reset
        WriteTurn._reset = lambda turn: (made_anew.append(1), original(turn))[1]
        start = threading.Barrier(8)

        def write(n):
            start.wait(5)
            with writing(engine) as connection:
                connection.execute(text(f"INSERT INTO log VALUES ({n})"))

        threads = [threading.Thread(target=write, args=(n,)) for n in range(1, 9)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        return not made_anew and not any(t.is_alive() for t in threads)

    assert _in_a_forked_child(child) == 0
    assert _stored(engine) == list(range(9))
