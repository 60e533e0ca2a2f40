"""The study database: tables and the engine.

One SQLAlchemy URL serves SQLite (the default, `DIR/study.db`) and PostgreSQL. Participant
identity (worker, assignment, access code) sits in `sessions` next to a random `session_id`;
everything exported or released is keyed by the session id only.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Engine,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
)

metadata = MetaData()

sessions = Table(
    "sessions",
    metadata,
    Column("session_id", String(32), primary_key=True),
    # Who: an MTurk worker (with the assignment and HIT that brought them) or a lab access code.
    Column("worker_id", String(64), index=True),
    Column("assignment_id", String(64)),
    Column("hit_id", String(64)),
    Column("turk_submit_to", String(255)),
    Column("access_code", String(64), index=True),
    # What: the prompt and the condition, fixed once the writer picks a prompt.
    Column("prompt_code", String(64)),
    Column("condition", String(64)),
    # Where the writer is on the participant path (see study.server.flow.STAGES).
    Column("stage", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("writing_started_at", Float),
    Column("writing_finished_at", Float),
    Column("completed_at", Float),
    Column("verification_code", String(32), unique=True),
    Column("final_text", Text),
    Column("self_evaluation", Text),  # JSON
    Column("survey", Text),  # JSON
    UniqueConstraint("assignment_id", name="one_session_per_assignment"),
)

events = Table(
    "events",
    metadata,
    Column("session_id", String(32), primary_key=True),
    # The browser numbers a session's events 0, 1, 2, ...; (session_id, seq) makes resends
    # idempotent and gives the export its order (eventNum).
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("event_name", String(32), nullable=False),
    Column("event_timestamp", BigInteger, nullable=False),
    Column("record", Text, nullable=False),  # the CoAuthor record as JSON, without eventNum
    Column("received_at", Float, nullable=False),
)

suggestion_requests = Table(
    "suggestion_requests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(32), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("condition", String(64), nullable=False),
    Column("model", String(128), nullable=False),
    Column("parameters", Text, nullable=False),  # JSON: mode and decoding parameters sent
    Column("raw", Text, nullable=False),  # JSON: every choice as the endpoint returned it
    Column("suggestions", Text, nullable=False),  # JSON: what the writer was shown
    Column("latency_ms", Float),
    Column("error", Text),
    Index("suggestion_requests_by_session", "session_id", "created_at"),
)


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets WAL, a busy timeout and explicit write locking."""
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True, future=True)

    engine = create_engine(
        url,
        # The driver's own transaction handling is turned off so that we can say BEGIN IMMEDIATE
        # for writes (see _begin); a deferred transaction that reads and then writes can fail at
        # once with "database is locked" instead of waiting its turn.
        connect_args={"isolation_level": None, "check_same_thread": False, "timeout": 30},
        pool_size=8,
        max_overflow=16,
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable against a killed server process (the WAL is in the OS cache);
        # only a power cut can lose the last transactions.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


def create_tables(engine: Engine) -> None:
    metadata.create_all(engine)


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """A transaction that will write: it takes SQLite's write lock up front."""
    with engine.connect().execution_options(sqlite_begin="IMMEDIATE") as connection:
        with connection.begin():
            yield connection


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as connection:
        with connection.begin():
            yield connection
