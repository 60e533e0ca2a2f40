"""Editor events: stored once each, whatever the browser resends.

The browser numbers a session's events 0, 1, 2, ... and resends any batch it has no
acknowledgement for; (session_id, seq) is the primary key and inserts skip existing keys, so
a resend stores nothing twice and an acknowledgement means the event is committed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import orjson
from sqlalchemy import Connection, Engine, Table, func, select
from sqlalchemy.dialects import postgresql, sqlite

from study.store.db import events, writing


@dataclass(frozen=True)
class BatchResult:
    acked: list[int]
    stored: int

    @property
    def duplicates(self) -> int:
        return len(self.acked) - self.stored


def ingest(engine: Engine, session_id: str, batch: list[dict], table: Table = events) -> BatchResult:
    """Store a checked batch of `{"seq": n, **record}` events in one transaction (`table`:
    the editor's `events`, or the chat page's `chat_events`)."""
    now = time.time()
    rows = []
    for item in batch:
        record = {key: value for key, value in item.items() if key != "seq"}
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
    insert = (postgresql if engine.dialect.name == "postgresql" else sqlite).insert
    # RETURNING names the rows actually inserted: executemany's rowcount is not summed by
    # every driver (psycopg reports the last statement's only).
    statement = insert(table).on_conflict_do_nothing().returning(table.c.seq)
    with writing(engine) as connection:
        stored = len(connection.execute(statement, rows).all()) if rows else 0
    return BatchResult(acked=sorted({row["seq"] for row in rows}), stored=stored)


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


def missing_seqs(
    connection: Connection, session_id: str, last_seq: int, table: Table = events
) -> list[int]:
    """Sequence numbers 0..last_seq that the server has not stored."""
    have = set(stored_seqs(connection, session_id, table))
    return [seq for seq in range(last_seq + 1) if seq not in have]


def count(connection: Connection, session_id: str) -> int:
    return connection.execute(
        select(func.count()).select_from(events).where(events.c.session_id == session_id)
    ).scalar_one()
