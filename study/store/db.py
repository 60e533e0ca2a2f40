"""The study database's tables (the engine and its transactions: study.store.engine).

One SQLAlchemy URL serves SQLite (the default, `DIR/study.db`) and PostgreSQL. Participant
identity (worker, assignment, access code) sits in `sessions` next to a random `session_id`;
everything exported or released is keyed by the session id only.
"""

from __future__ import annotations

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
    inspect,
    literal,
    text,
)
from sqlalchemy.schema import CreateColumn

from study.store.earlier_versions import move_survey_answers

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


# -- Rounds and reviewing (study.review) ------------------------------------------------------
# Reviewers see a submission by its random pseudonym (review_submissions.submission_id), never
# by a worker id: the way from a submission to its session, and so to the worker, stays here.

session_rounds = Table(
    "session_rounds",
    metadata,
    # Which round of the study ([[rounds]] in study.toml) a session was started in; a session
    # without a row belongs to the study's default round (study.review.rounds).
    Column("session_id", String(32), primary_key=True),
    Column("round", String(64), nullable=False),
    Index("session_rounds_by_round", "round"),
)

reviewers = Table(
    "reviewers",
    metadata,
    Column("reviewer_id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("password_hash", String(255), nullable=False),  # salted scrypt (werkzeug.security)
    Column("role", String(16), nullable=False),  # reviewer | researcher
    Column("active", Integer, nullable=False, default=1),
    Column("created_at", Float, nullable=False),
)

review_logins = Table(
    "review_logins",
    metadata,
    # The cookie holds a random token; only its SHA-256 is stored, so a copy of the database
    # cannot be used to log in.
    Column("token_hash", String(64), primary_key=True),
    Column("reviewer_id", Integer, nullable=False),
    Column("csrf_token", String(64), nullable=False),  # sent back with every POST
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("ended_at", Float),  # logged out
)

review_submissions = Table(
    "review_submissions",
    metadata,
    Column("submission_id", String(16), primary_key=True),  # the pseudonym reviewers see
    Column("session_id", String(32), nullable=False, unique=True),
    Column("round", String(64)),
    Column("created_at", Float, nullable=False),
    # Why the rules disqualified the session without review (no interaction with the AI), or NULL.
    Column("disqualified", Text),
)

review_assignments = Table(
    "review_assignments",
    metadata,
    Column("submission_id", String(16), primary_key=True),
    Column("reviewer_id", Integer, primary_key=True, autoincrement=False),
    Column("assigned_at", Float, nullable=False),
)

review_ratings = Table(
    "review_ratings",
    metadata,
    Column("submission_id", String(16), primary_key=True),
    Column("reviewer_id", Integer, primary_key=True, autoincrement=False),
    Column("score", Integer, nullable=False),
    Column("comment", Text, nullable=False, default=""),
    Column("rated_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    # 1 for the first rating, one more at each change: a page saves only over the version it
    # showed (study.review.ratings.rate's `seen`), so a stale tab cannot overwrite unnoticed.
    Column("version", Integer, nullable=False, default=1),
)

review_decisions = Table(
    "review_decisions",
    metadata,
    # A researcher's adjudication: the final score, whatever the ratings say.
    Column("submission_id", String(16), primary_key=True),
    Column("score", Integer, nullable=False),
    Column("reviewer_id", Integer, nullable=False),
    Column("note", Text, nullable=False, default=""),
    Column("decided_at", Float, nullable=False),
)

review_audit = Table(
    "review_audit",
    metadata,
    # Append-only: every rating, edit, decision, grant and payment, with who and when.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", Float, nullable=False),
    Column("actor", String(64), nullable=False),
    Column("action", String(32), nullable=False),
    Column("submission_id", String(16)),
    Column("detail", Text, nullable=False, default="{}"),  # JSON
    Index("review_audit_by_submission", "submission_id", "id"),
)

review_grants = Table(
    "review_grants",
    metadata,
    # The study's qualification as `study qualify` granted it, per environment (sandbox, live).
    Column("environment", String(255), primary_key=True),
    Column("submission_id", String(16), primary_key=True),
    Column("worker_id", String(64), nullable=False),
    Column("qualification_type_id", String(64), nullable=False),
    Column("value", Integer, nullable=False),
    Column("granted_at", Float, nullable=False),
)


# -- Surveys (study.survey) -------------------------------------------------------------------

survey_responses = Table(
    "survey_responses",
    metadata,
    # One row per survey asked in a session, and per occasion of an in-session survey (the
    # exchange count it followed; 0 for surveys placed on the participant's path).
    Column("session_id", String(32), primary_key=True),
    Column("survey", String(64), primary_key=True),
    Column("occasion", Integer, primary_key=True, autoincrement=False),
    Column("placement", String(16), nullable=False),
    Column("answers", Text, nullable=False),  # JSON: item id -> answer, only shown questions
    Column("page", Integer, nullable=False),  # the next page to answer (pages done + 1)
    Column("started_at", Float, nullable=False),
    Column("submitted_at", Float),  # NULL until the last page is answered
)


# -- The chat document-creation study (study.paradigms.chat) ---------------------------------

chat_sessions = Table(
    "chat_sessions",
    metadata,
    Column("session_id", String(32), primary_key=True),
    # Assigned once and stored, so a reload never changes them (CollabLLM App. E apologises
    # for a refresh that could assign another document type).
    Column("document_type", String(64), nullable=False),
    Column("offered", Text, nullable=False),  # JSON: the intent keys shown, in order
    Column("intent", String(128)),  # "creative_writing/39", once chosen or assigned
    Column("prewriting", Text),  # JSON: [{"question", "answer", "added"}]; never sent to the model
    Column("document", Text, nullable=False, default=""),  # the document pane, from its events
    Column("assigned_at", Float, nullable=False),
    Column("intent_at", Float),
    Column("prewriting_at", Float),
    Column("chat_started_at", Float),
    Column("chat_finished_at", Float),
)

chat_messages = Table(
    "chat_messages",
    metadata,
    Column("session_id", String(32), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),  # 0, 1, 2, ... in the conversation
    Column("role", String(16), nullable=False),  # user | assistant
    Column("content", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    # The browser's id for a user message: a resend after a lost answer stores nothing twice.
    Column("client_id", String(64)),
    Column("model", String(128)),
    Column("latency_ms", Float),
    UniqueConstraint("session_id", "client_id", name="one_message_per_client_id"),
)

chat_events = Table(
    "chat_events",
    metadata,
    # Same shape and rules as `events`, for the chat page's log (schemas/chat-event-batch...).
    Column("session_id", String(32), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("event_name", String(32), nullable=False),
    Column("event_timestamp", BigInteger, nullable=False),
    Column("record", Text, nullable=False),
    Column("received_at", Float, nullable=False),
)


# -- Simulated writers (study.simulate) -------------------------------------------------------

simulated_sessions = Table(
    "simulated_sessions",
    metadata,
    # A session written by `study simulate`, not by a person: every export, report and release
    # marks it so it is never mistaken for (or paid as) a participant's.
    Column("session_id", String(32), primary_key=True),
    Column("persona", Text, nullable=False),
    Column("intent", Text, nullable=False),
    Column("model", String(128), nullable=False),  # the model behind the simulated writer
    Column("created_at", Float, nullable=False),
)

simulated_conversations = Table(
    "simulated_conversations",
    metadata,
    # How a simulated chat user's conversation went (CollabLLM's user simulator, spec B4.2):
    # the goal document it held and why the conversation ended, for `study report`'s comparison
    # of simulated with human conversations.
    Column("session_id", String(32), primary_key=True),
    Column("goal_source", String(16), nullable=False),  # file | drafted | notes
    Column("goal_document", Text, nullable=False),
    # termination_marker (the user said it was done), turn_limit, or fallback (the model's
    # answers were unusable and the persona's habit ended the chat once the study allowed it)
    Column("end_reason", String(24), nullable=False),
    Column("exchanges", Integer, nullable=False),
    Column("first_wish_to_end", Integer),  # the exchange the marker first came at, if ever
    Column("last_thought", Text, nullable=False),  # the user's reasoning at its last message
    Column("created_at", Float, nullable=False),
)


server_activity = Table(
    "server_activity",
    metadata,
    # What each server process answered, one row per process and interval of a few seconds
    # (study.server.activity), for `study status`'s last minute; rows older than an hour are
    # deleted as new ones are written. Counts only: no session, address or path.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("process", String(128), nullable=False),  # host name and process id
    Column("started_at", Float, nullable=False),
    Column("ended_at", Float, nullable=False),
    Column("requests", Integer, nullable=False),
    Column("event_requests", Integer, nullable=False),
    Column("suggestion_requests", Integer, nullable=False),  # Tab, ghost text and chat replies
    Column("busy_refusals", Integer, nullable=False),  # model-call requests refused 503 or 429
    # JSON {bucket: count}: the time each event request spent in the server, on the buckets of
    # study.store.activity (what the writer's acknowledgement waited for, network aside).
    Column("event_ms_histogram", Text, nullable=False),
    # The most event batches that waited at once behind a group being written in the process
    # (study.store.group_commit.deepest_waiting): the database's queue, for the operator.
    Column("event_queue_max", Integer, nullable=False, server_default="0"),
    Index("server_activity_by_time", "ended_at"),
)


# PostgreSQL: the advisory lock servers take in turn to create the tables (create_tables).
_SCHEMA_LOCK = 0x5714D7_5C4E


def storable_text(text: str) -> str:
    """`text` without NUL, for a text column: PostgreSQL's text cannot hold one (the statement
    fails, a 500 for the participant) where SQLite stores it, and no reader can see it. A paste
    can carry one; an event's record keeps it, escaped in its JSON."""
    return text.replace("\x00", "") if "\x00" in text else text


def create_tables(engine: Engine) -> None:
    if engine.dialect.name == "postgresql":
        # Several hosts started together on a new database each create the missing tables; two
        # concurrent CREATE TABLEs make one fail (a unique violation in pg_type) and that host
        # does not boot. An advisory lock makes them take turns: the second finds the tables.
        with engine.begin() as connection:
            create_tables_in(connection)
        return
    with engine.connect() as connection:
        if _has_everything(connection):  # the usual start: nothing to create, no write lock taken
            return
    # SQLite: under the write lock, for the same reason. Each process looks for the tables in
    # a read, then creates them; a process that read before another wrote finds its read out of
    # date when it writes, and SQLite refuses it at once ("database is locked", the busy timeout
    # not waited), so of two `study serve` processes started together on a new study one failed.
    with engine.connect().execution_options(sqlite_begin="IMMEDIATE") as connection, connection.begin():
        _create_missing(connection)


def create_tables_in(connection: Connection) -> None:
    """PostgreSQL: create_tables inside the caller's transaction, under the same advisory lock.
    `study copy-database` creates the tables and copies the rows in one transaction, so a copy
    that fails leaves not even empty tables behind."""
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK})
    _create_missing(connection)


def _has_everything(connection: Connection) -> bool:
    inspector = inspect(connection)
    if not {table.name for table in metadata.sorted_tables} <= set(inspector.get_table_names()):
        return False
    indexes = {index["name"] for found in inspector.get_multi_indexes().values() for index in found}
    declared = {index.name for table in metadata.sorted_tables for index in table.indexes}
    return declared <= indexes and not _missing_columns(connection)


def _create_missing(bind: Connection) -> None:
    earlier = set(inspect(bind).get_table_names())
    metadata.create_all(bind)
    _add_missing_columns(bind)
    # create_all adds indexes only with a new table: an index added to an existing table later
    # (suggestion_requests_by_time) is created here for databases made before it.
    for table in metadata.sorted_tables:
        for index in table.indexes:
            index.create(bind, checkfirst=True)
    if "sessions" in earlier and "survey_responses" not in earlier:
        # A database of a version before the survey engine: its answers are moved once, with
        # the table made for them.
        move_survey_answers(bind)


def _add_missing_columns(bind: Connection) -> None:
    # create_all leaves an existing table as it is: a column added to a table later
    # (server_activity.event_queue_max) is added here to databases made before it, from its
    # declaration, with its default, so the rows already there get it.
    for table, column in _missing_columns(bind):
        ddl = str(CreateColumn(column).compile(dialect=bind.dialect))
        if column.server_default is None and column.default is not None and column.default.is_scalar:
            # A NOT NULL column with only a Python default (sessions.missing_events): without a
            # DEFAULT here both SQLite and PostgreSQL refuse to add it to a table with rows, and
            # a study database made before it could no longer be opened by any command.
            value = literal(column.default.arg, column.type).compile(
                dialect=bind.dialect, compile_kwargs={"literal_binds": True}
            )
            ddl += f" DEFAULT {value}"
        bind.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {ddl}"))


def _missing_columns(bind: Connection) -> list[tuple[Table, Column]]:
    # Every table's columns in one query where the dialect can (PostgreSQL: one catalog query
    # instead of one per table, at every server start and command).
    found = inspect(bind).get_multi_columns(filter_names=[table.name for table in metadata.sorted_tables])
    present = {name: {column["name"] for column in columns} for (_schema, name), columns in found.items()}
    return [
        (table, column)
        for table in metadata.sorted_tables
        if table.name in present
        for column in table.columns
        if column.name not in present[table.name]
    ]
