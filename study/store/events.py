"""Editor events: stored once each, whatever the browser resends.

The browser numbers a session's events 0, 1, 2, ... and resends any batch it has no
acknowledgement for; (session_id, seq) is the primary key and inserts skip existing keys, so
a resend stores nothing twice and an acknowledgement means the event is committed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from sqlalchemy import Connection, Engine, Table, func, select, text

from study.store.db import events, sessions
from study.store import group_commit


@dataclass(frozen=True)
class BatchResult:
    acked: list[int]
    stored: int

    @property
    def duplicates(self) -> int:
        return len(self.acked) - self.stored


class Refused(ValueError):
    """The check given to `ingest` refused the batch; nothing of it was stored."""


class Conflict(Refused):
    """A batch's event takes a seq the session has stored for another event: another window or
    browser wrote the session meanwhile (a resend carries the very event stored). Nothing of the
    batch was stored; the event API answers 409."""


class Full(Refused):
    """The session has stored all it may (study.server.limits: max_events, max_bytes): no later
    event of it will be stored. The event API says so (`full`), so the page stops logging and
    lets the writer finish with what is stored."""


class SessionMoved(RuntimeError):
    """The session's stage or condition is no longer what `ingest` was told to expect (another
    worker process moved it on); nothing of the batch was stored."""


@dataclass(frozen=True)
class Totals:
    """What a session has stored: how many events, the highest seq, and their size in bytes."""

    count: int
    last_seq: int | None
    bytes: int


# (connection, rows about to be inserted, (events stored, highest seq or None)) -> None, or
# raises Refused. On PostgreSQL a check may first be run before its transaction, given
# WITHOUT_DATABASE for the connection (`ingest`, "in one round trip"); one that needs the
# database then raises NeedsDatabase by using it, and is run again under the lock.
BatchCheck = Callable[[Connection, list[dict], tuple[int, int | None]], None]


class NeedsDatabase(Exception):
    """A batch check run WITHOUT_DATABASE used the connection: it cannot decide before its
    transaction, so the batch goes the usual way."""


class _WithoutDatabase:
    def __getattr__(self, name: str):
        raise NeedsDatabase(f"the check used connection.{name}")


WITHOUT_DATABASE = _WithoutDatabase()


# A batch's rows go in one INSERT, sent to the driver directly by the group's stages
# (study.store.group_commit: the event API's CPU budget).
_COLUMNS = ("session_id", "seq", "event_name", "event_timestamp", "record", "received_at")
# PostgreSQL: the rows as one JSON text, so the statement's text is the same for every batch
# and psycopg converts it once, and its one parameter costs nothing to send. As a multi-row
# VALUES (six parameters a row, past psycopg's cache of 50) it was parsed again for every
# batch, a fifth of an event request's CPU; as one array per column psycopg's dumpers still
# cost a seventh.
_JSON_ROWS = (
    "json_to_recordset(?::json) AS"
    " r(session_id varchar, seq integer, event_name varchar, event_timestamp bigint, record text, received_at float8)"
)
_POSTGRES_INSERT = (
    f"INSERT INTO {{table}} ({', '.join(_COLUMNS)}) SELECT {', '.join(_COLUMNS)} FROM {_JSON_ROWS}"
    " ON CONFLICT DO NOTHING RETURNING seq"
)


def _sqlite_insert(table: Table, rows: list[dict]) -> tuple[str, list]:
    # SQLite's driver has no arrays, and its statement cache keeps a text per batch size.
    insert = (
        f"INSERT INTO {table.name} ({', '.join(_COLUMNS)}) VALUES "
        + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(rows))
        + " ON CONFLICT DO NOTHING"
    )
    return insert, [row[column] for row in rows for column in _COLUMNS]


def ingest(
    engine: Engine,
    session_id: str,
    batch: list[dict],
    check: BatchCheck | None = None,
    table: Table = events,
    expect: tuple[str, str | None] | None = None,
    known: tuple[int, int] | None = None,
) -> BatchResult:
    """Store a checked batch of `{"seq": n, **record}` events in one transaction (`table`: the
    editor's `events`, or the chat page's `chat_events`).

    `check` runs inside that transaction, before anything is written, and sees the rows as
    they will be stored and what the session has stored (its count of events and highest seq,
    asked together with the other batches' in one round trip); it may raise Refused. SQLite's
    write lock (and on PostgreSQL a lock on the session's row, taken here) keeps two batches of
    one session from being checked against the same stored state. The transaction is shared with the other
    batches that arrived meanwhile (study.store.group_commit, in stages); the caller must not be
    inside a `writing` transaction.

    `expect`: the session's (stage, condition) the batch was prepared for, confirmed under the
    same lock before anything is checked or written; SessionMoved when they differ. The event
    API remembers the sessions at their writing stage instead of reading each one before every
    batch (study.server.events_api).

    `known`: (count, highest seq) of the session's events as this process saw them committed,
    with no seq missing (count == highest seq + 1). Events are never deleted and a seq is stored
    once, so everything up to that seq is still exactly what it was, and only the events above it
    are counted: a count of all of them costs O(events) with the write lock held, for every batch
    of a session that grows to thousands.

    In one round trip (PostgreSQL): a batch with a `known` state, the usual case (a writer's
    browser keeps posting to the worker that stored its last batch), has its check run before
    the transaction, against `known`, and is then stored in one round trip: BEGIN, the session's
    row lock, an INSERT that writes only while the session still has exactly `known` stored and
    the `expect`ed stage and condition, and COMMIT. The usual way takes three (the reads under
    the lock, the insert, COMMIT), each a wait for the server and for the process's GIL: at 200
    writers, four alternated pairs, 1.06, 0.81, 1.14 and 0.94 ms of server CPU per event request
    against 1.35, 1.07, 1.16 and 1.28 (docs/benchmarks.md). When the INSERT's condition does not
    hold (another worker stored events of the session, the session moved on), or the check
    refuses the batch or needs the database (NeedsDatabase), nothing is written and the batch
    goes the usual way, its check run again under the lock, as the authority.
    """
    now = time.time()
    rows = []
    for item in batch:
        # The record without its seq: copied in C, not key by key in Python (every event of
        # every batch passes here).
        record = dict(item)
        del record["seq"]
        rows.append(
            {
                "session_id": session_id,
                "seq": item["seq"],
                "event_name": record["eventName"],
                "event_timestamp": record["eventTimestamp"],
                "record": orjson.dumps(record).decode(),
                "received_at": now,
            }
        )

    def work(connection: Connection):
        sqlite = connection.dialect.name == "sqlite"
        if check is not None or expect is not None:
            above = known[1] if known is not None else -1
            session, totals = yield from _read(sqlite, session_id, table, expect is not None, check is not None, above)
            if known is not None and totals is not None:
                totals = (known[0] + totals[0], totals[1])
            if expect is not None and session != [expect]:
                return SessionMoved(f"session {session_id} is no longer at {expect}")
        if check is not None:
            try:
                check(connection, rows, totals)
            except Refused as refusal:  # refused alone: the group's other batches go on
                return refusal
        if not rows:
            return 0
        # How many rows were new. SQLite: its count of the statement's changes, in the same
        # stage (RETURNING would hand each row back on its own, and every row the driver
        # fetches lets go of the GIL and waits to take it back while the write turn is held).
        # PostgreSQL: RETURNING, answered in the same round trip (study.store.pg_rounds; psycopg's
        # rowcount is not summed over a stage).
        if sqlite:
            insert, parameters = _sqlite_insert(table, rows)
            _, ((inserted,),) = yield [(insert, parameters), ("SELECT changes()", ())]
            return inserted
        (returned,) = yield [(_POSTGRES_INSERT.format(table=table.name), (orjson.dumps(rows).decode(),))]
        return len(returned)

    # Stored in this process's next group commit (study.store.group_commit): answered only
    # once that transaction is committed.
    stored = None
    if engine.dialect.name == "postgresql" and known is not None and check is not None and expect is not None:
        stored = _in_one_round(engine, session_id, rows, check, table, expect, known)
    if stored is None:
        stored = group_commit.run_staged(engine, work, key=session_id)
    if isinstance(stored, (Refused, SessionMoved)):
        raise stored
    return BatchResult(acked=sorted({row["seq"] for row in rows}), stored=stored)


# What a session has stored, asked by every batch's check (events stored above a seq, highest
# seq or None): index-only (`{table}` is one of our own tables' names, never input).
_COUNT_AND_LAST = (
    "SELECT (SELECT count(*) FROM {table} WHERE session_id = ? AND seq > ?),"
    " (SELECT max(seq) FROM {table} WHERE session_id = ?)"
)
# PostgreSQL: this transaction's prepared statements keep their generic plan (an index range of
# one session), planned once per connection. By default (plan_cache_mode auto) a statement is
# planned anew at each execution for as long as a plan for its values looks cheaper than the
# generic one, and the count of events above the last seq always did: the seq is past the
# table's statistics, so its plan estimated no rows. That was 14% of PostgreSQL's CPU at a
# 1,000-writer launch (docs/benchmarks.md; tests/store/test_planned_once.py).
_PLANNED_ONCE = ("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)", ())
# The session's stage and condition, under the batch's lock (on PostgreSQL taking its row's).
_SESSION = f"SELECT stage, condition FROM {sessions.name} WHERE session_id = ? {{lock}}"
# SQLite, where the write lock is held already: both in one statement.
_SESSION_AND_COUNT = (
    "SELECT stage, condition, (SELECT count(*) FROM {table} WHERE session_id = ?1 AND seq > ?2),"
    " (SELECT max(seq) FROM {table} WHERE session_id = ?1)"
    f" FROM {sessions.name} WHERE session_id = ?1"
)


# PostgreSQL, in the session's row lock (`_SESSION`, the statement before it, so that its
# snapshot sees every batch committed before the lock was granted): the batch's rows, inserted
# only if the session's highest stored seq is still `known`'s (everything up to it is stored
# and never deleted, so then the session has exactly `known` stored) and it is at the expected
# stage and condition; whether that held, and how many rows were new.
_INSERT_IF_KNOWN = (
    "WITH known AS (SELECT"
    " (SELECT max(seq) FROM {table} WHERE session_id = ?) = ?"
    f" AND EXISTS (SELECT FROM {sessions.name} WHERE session_id = ? AND stage = ? AND condition = ?) AS held),"
    f" inserted AS (INSERT INTO {{table}} ({', '.join(_COLUMNS)}) SELECT {', '.join(_COLUMNS)}"
    f" FROM known, {_JSON_ROWS} WHERE known.held ON CONFLICT DO NOTHING RETURNING seq)"
    " SELECT (SELECT held FROM known), (SELECT count(*) FROM inserted)"
)


def _in_one_round(
    engine: Engine, session_id: str, rows: list[dict], check: BatchCheck, table: Table,
    expect: tuple[str, str | None], known: tuple[int, int],
) -> int | None:  # fmt: skip
    """`ingest` in one round trip (its docstring): how many rows were new, or None when the batch
    must go the usual way (nothing of it was written)."""
    try:
        check(WITHOUT_DATABASE, rows, known)
    except (NeedsDatabase, Refused):
        return None
    stage, condition = expect
    last_seq = known[1]  # known[0] == last_seq + 1
    parameters = (session_id, last_seq, session_id, stage, condition, orjson.dumps(rows).decode())

    def work(_connection: Connection):
        *_, ((held, inserted),) = yield group_commit.Last([
            _PLANNED_ONCE,
            (_SESSION.format(lock="FOR UPDATE"), (session_id,)),
            (_INSERT_IF_KNOWN.format(table=table.name), parameters),
        ])  # fmt: skip
        return inserted if held else None

    return group_commit.run_staged(engine, work, key=session_id)


def _read(sqlite: bool, session_id: str, table: Table, session: bool, stored: bool, above: int):
    """A batch's reads under its lock, as one stage of group_commit.run_staged: the session's
    [(stage, condition)] (when `session`) and what it has stored, (count of events above seq
    `above`, highest seq) (when `stored`). PostgreSQL locks the session's row first (every batch
    of one session then counts after the previous one committed); on SQLite the write lock is
    held already."""
    if sqlite and session and stored:
        answer = yield [(_SESSION_AND_COUNT.format(table=table.name), (session_id, above))]
        rows = answer[0]
        return [tuple(row[:2]) for row in rows], (tuple(rows[0][2:]) if rows else (0, None))
    reads = []
    if not sqlite:
        reads += [_PLANNED_ONCE, (_SESSION.format(lock="FOR UPDATE"), (session_id,))]
    elif session:
        reads.append((_SESSION.format(lock=""), (session_id,)))
    if stored:
        reads.append((_COUNT_AND_LAST.format(table=table.name), (session_id, above, session_id)))
    answers = yield reads
    if not sqlite:
        answers = answers[1:]  # _PLANNED_ONCE's
    found = [tuple(row) for row in answers[0]] if session else None
    return found, (tuple(answers[-1][0]) if stored else None)


def after_storing(stored: tuple[int, int | None], new: list[dict]) -> tuple[int, int]:
    """A session's stored (count, highest seq) once `new`, events it had not stored, are."""
    count, last_seq = stored
    return count + len(new), max([item["seq"] for item in new] + [last_seq if last_seq is not None else -1])


def records(connection: Connection, session_id: str, table: Table = events) -> list[dict]:
    """A session's events in order, as CoAuthor records without eventNum."""
    rows = connection.execute(
        select(table.c.record).where(table.c.session_id == session_id).order_by(table.c.seq)
    )
    return [orjson.loads(row[0]) for row in rows]


def stored_seqs(connection: Connection, session_id: str, table: Table = events) -> list[int]:
    rows = connection.execute(
        select(table.c.seq).where(table.c.session_id == session_id).order_by(table.c.seq)
    )
    return [row[0] for row in rows]


def last_seq(connection: Connection, session_id: str, table: Table = events) -> int | None:
    """The session's highest stored seq (None: nothing stored), from the index alone."""
    return connection.execute(select(func.max(table.c.seq)).where(table.c.session_id == session_id)).scalar_one()


def totals(connection: Connection, session_id: str, table: Table = events) -> Totals:
    count, last_seq, size = connection.execute(
        select(func.count(), func.max(table.c.seq), func.coalesce(func.sum(func.length(table.c.record)), 0))
        .where(table.c.session_id == session_id)
    ).one()
    return Totals(count=count, last_seq=last_seq, bytes=int(size))


def missing_count(connection: Connection, session_id: str, last_seq: int, table: Table = events) -> int:
    """How many of the sequence numbers 0..last_seq the server has not stored. Counted in SQL:
    the answer costs the same for last_seq = 10 and last_seq = 10**12."""
    if last_seq < 0:
        return 0
    stored = connection.execute(
        select(func.count())
        .select_from(table)
        .where(table.c.session_id == session_id, table.c.seq <= last_seq)
    ).scalar_one()
    return last_seq + 1 - stored


# Each stored event followed by a gap: the first missing seq after it and the last one before
# the next stored event (NULL after the highest stored event).
# (`{table}` is one of our own tables' names, never input.)
_GAPS = """
    SELECT gap_start, gap_end FROM (
        SELECT seq + 1 AS gap_start, LEAD(seq) OVER (ORDER BY seq) - 1 AS gap_end
        FROM {table} WHERE session_id = :session_id AND seq <= :last_seq
    ) AS following
    WHERE gap_end IS NULL OR gap_end >= gap_start
    ORDER BY gap_start
"""


def missing_seqs(
    connection: Connection, session_id: str, last_seq: int, limit: int = 50, table: Table = events
) -> list[int]:
    """The first `limit` sequence numbers of 0..last_seq that the server has not stored. The
    gaps are found in SQL, so a huge last_seq costs nothing more (no range is ever built)."""
    first = connection.execute(
        select(func.min(table.c.seq)).where(table.c.session_id == session_id)
    ).scalar_one()
    gaps: list[tuple[int, int]] = []
    if first is None or first > 0:
        gaps.append((0, last_seq if first is None else min(first - 1, last_seq)))
    if first is not None:
        gaps_query = text(_GAPS.format(table=table.name))
        rows = connection.execute(gaps_query, {"session_id": session_id, "last_seq": last_seq})
        gaps += [(start, last_seq if end is None else end) for start, end in rows]
    missing: list[int] = []
    for start, end in gaps:
        if start > end:
            continue
        missing.extend(range(start, min(end, start + limit - len(missing) - 1) + 1))
        if len(missing) >= limit:
            break
    return missing[:limit]


def count(connection: Connection, session_id: str) -> int:
    return connection.execute(
        select(func.count()).select_from(events).where(events.c.session_id == session_id)
    ).scalar_one()
