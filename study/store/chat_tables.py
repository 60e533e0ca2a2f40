"""The chat document-creation study's tables (study.paradigms.chat; its queries are
study/paradigms/chat/store.py). Declared in the core's storage rather than the paradigm's
folder because every server creates the schema, including one that never imports the paradigm.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Float, Integer, String, Table, Text, UniqueConstraint

from study.store.db import metadata

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
