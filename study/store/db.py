"""The study database's metadata and the participant path's tables: sessions, their events and
model calls, and the start throttle. Each other area declares its tables on this metadata in its
own module (study.store.review_tables, chat_tables, surveys, simulated, activity, judging, mturk,
prolific, withdrawals), every one of which study.store imports; creating and upgrading the schema is
study.store.schema, the engine study.store.engine, its transactions study.store.transactions.

One SQLAlchemy URL serves SQLite (the default, `DIR/study.db`) and PostgreSQL. Participant
identity (worker, assignment, access code) sits in `sessions` next to a random `session_id`;
everything exported or released is keyed by the session id only.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
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
    # The condition's paradigm when the session was given it: study.toml may change an arm's
    # paradigm under the same name later (study.export.as_run). NULL in a session begun before
    # this column was added.
    Column("paradigm", String(16)),
    # Within subjects (study.server.within): the arm list, in study.toml order, and the Latin
    # square row this participant began the genre's sequence with, as JSON; every session of
    # the sequence carries it, so an arm added, removed or moved in study.toml later changes
    # nobody's order mid-sequence. NULL between subjects and in a session begun before this
    # column was added (that participant keeps the order study.toml gives).
    Column("within_order", Text),
    # Where the writer is on the participant path (see study.server.flow.STAGES).
    Column("stage", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("writing_started_at", Float),
    Column("writing_finished_at", Float),
    Column("completed_at", Float),
    Column("verification_code", String(32), unique=True),
    Column("final_text", Text),
    # Events the browser numbered but lost before the server acknowledged them (normally 0).
    Column("missing_events", Integer, nullable=False, default=0),
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
    # The server process that made the call (study.server.serving_process): a process of the
    # same host settles the calls of one killed mid-call, whose rows would otherwise hold the
    # model-call slots until their time window passed. NULL where /proc cannot say, and in rows
    # from before these columns (added to an existing database by _add_missing_columns).
    Column("server_host", Text),
    Column("server_process", String(64)),
    Index("suggestion_requests_by_session", "session_id", "created_at"),
    # The study-wide model-call counts (study.server.model_calls) read the last minute's rows.
    Index("suggestion_requests_by_time", "created_at"),
    # The calls in flight (rows whose outcome is still the placeholder) are counted on every
    # model call, inside the write transaction: without this index that count read each row of
    # the last minute (7.6 ms at 3,000 rows, the write lock held meanwhile; 12 us with it).
    Index("suggestion_requests_by_outcome", "error", "created_at"),
)

# New sessions started per address (study.server.limit_store.DatabaseStore): one row per start,
# deleted when its hour has passed, under a hash of the address rather than the address.
start_throttle = Table(
    "start_throttle",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(64), nullable=False),
    Column("at", Float, nullable=False),
    Index("start_throttle_by_key", "key", "at"),
    Index("start_throttle_by_time", "at"),
)


def storable_text(text: str) -> str:
    """`text` without NUL, for a text column: PostgreSQL's text cannot hold one (the statement
    fails, a 500 for the participant) where SQLite stores it, and no reader can see it. A paste
    can carry one; an event's record keeps it, escaped in its JSON."""
    return text.replace("\x00", "") if "\x00" in text else text
