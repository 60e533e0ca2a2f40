"""The judging round's tables (study.judging): items, the judges' tasks, and their ratings.

Kept apart from the sessions: an item names its session, but nothing a judge is shown does (the
item's id is a random pseudonym), and a task knows its judge's worker id only to pay them and
to keep one judge from rating an item twice.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, Index, Integer, String, Table, Text, UniqueConstraint

from study.store.db import metadata

judging_items = Table(
    "judging_items",
    metadata,
    Column("item_id", String(16), primary_key=True),  # the pseudonym judges' pages carry
    # The session the text came from; NULL for a gold item (the [judging] gold file).
    Column("session_id", String(32), index=True),
    Column("unit", String(16), nullable=False),  # document | sentence | gold
    Column("position", Integer, nullable=False),  # the sentence's index in its document (0: whole)
    Column("text", Text, nullable=False),
    Column("gold_score", Integer),  # the known answer of a gold item
    Column("created_at", Float, nullable=False),
)

judging_tasks = Table(
    "judging_tasks",
    metadata,
    # What one judge rates in one sitting (one MTurk assignment): a batch of items.
    Column("task_id", String(32), primary_key=True),  # random: the page's address
    Column("pass_no", Integer, nullable=False),  # the design's pass (0..k-1) the task belongs to
    Column("number", Integer, nullable=False),  # order of handing out
    Column("judge", String(64)),  # worker id or access code, once claimed
    Column("assignment_id", String(64)),
    Column("hit_id", String(64)),
    Column("turk_submit_to", String(255)),
    Column("claimed_at", Float),
    Column("submitted_at", Float),
    Column("verification_code", String(32), unique=True),
    UniqueConstraint("assignment_id", name="one_task_per_judging_assignment"),
    Index("judging_tasks_by_judge", "judge"),
    Index("judging_tasks_by_number", "number"),
)

judging_task_items = Table(
    "judging_task_items",
    metadata,
    Column("task_id", String(32), primary_key=True),
    Column("item_id", String(16), primary_key=True),
    Column("position", Integer, nullable=False),  # the order the judge sees
    Index("judging_task_items_by_item", "item_id"),
)

judging_ratings = Table(
    "judging_ratings",
    metadata,
    Column("task_id", String(32), primary_key=True),
    Column("item_id", String(16), primary_key=True),
    Column("score", Integer, nullable=False),
    Column("rated_at", Float, nullable=False),
)
