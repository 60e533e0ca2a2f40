"""What the task servers answered lately, kept in the study database (table `server_activity`) so
that `study status` sums every worker process and host: requests, event requests and how long
they took, model calls in flight and refused.

Each process adds one row per interval (study.server.activity); times are kept as a histogram
on fixed buckets, so the rows of many processes add up to one distribution and a percentile is
read from it (to within a bucket: each is 25% wider than the one before).
"""

from __future__ import annotations

import bisect
import json
import time
from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import Column, Connection, Float, Index, Integer, String, Table, Text, delete, func, insert, select

from study.store.db import events, metadata, suggestion_requests


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

# Upper edges of the buckets in ms: 0.5 ms to about 100 s in steps of 25%; the last bucket is
# open-ended.
BUCKET_EDGES_MS = tuple(0.5 * 1.25**i for i in range(56))
KEEP_SECONDS = 3600


def bucket(milliseconds: float) -> int:
    """The index of the bucket a time falls in."""
    return bisect.bisect_left(BUCKET_EDGES_MS, milliseconds)


def percentile(histogram: Counter, fraction: float) -> float | None:
    """The upper edge (ms) of the bucket holding the `fraction` quantile; None when empty."""
    total = sum(histogram.values())
    if not total:
        return None
    rank = fraction * total
    seen = 0
    for index in sorted(histogram):
        seen += histogram[index]
        if seen >= rank:
            return BUCKET_EDGES_MS[min(index, len(BUCKET_EDGES_MS) - 1)]
    return BUCKET_EDGES_MS[-1]


@dataclass
class Interval:
    """One process's counts over one interval."""

    process: str
    started_at: float
    ended_at: float = 0.0
    requests: int = 0
    event_requests: int = 0
    suggestion_requests: int = 0
    busy_refusals: int = 0
    event_ms: Counter = field(default_factory=Counter)  # bucket -> requests
    event_queue_max: int = 0  # the most event batches waiting at once for the database


def record(connection: Connection, interval: Interval) -> None:
    """Store one interval, and forget those past the hour."""
    connection.execute(
        delete(server_activity).where(server_activity.c.ended_at < interval.ended_at - KEEP_SECONDS)
    )
    connection.execute(insert(server_activity).values(
        process=interval.process, started_at=interval.started_at, ended_at=interval.ended_at,
        requests=interval.requests, event_requests=interval.event_requests,
        suggestion_requests=interval.suggestion_requests, busy_refusals=interval.busy_refusals,
        event_ms_histogram=json.dumps({str(k): v for k, v in sorted(interval.event_ms.items())}),
        event_queue_max=interval.event_queue_max,
    ))  # fmt: skip


@dataclass(frozen=True)
class Recent:
    """The last `seconds` of every server process together."""

    seconds: float
    processes: int
    requests: int
    event_requests: int
    suggestion_requests: int
    busy_refusals: int
    event_ms: Counter
    event_queue_max: int  # the most event batches that waited at once for the database (one process)
    events: int  # events stored (from the events table itself)
    in_flight: int  # model calls asked and not answered yet, on every process
    # When the oldest of them was asked (its row's created_at), None when none is in flight: an
    # operator tells a slow model (an old call) from a busy one (many young calls).
    oldest_in_flight_at: float | None = None


def recent(connection: Connection, in_flight_marker: str, in_flight_seconds: float,
           seconds: float = 60, now: float | None = None) -> Recent:  # fmt: skip
    """Sum the intervals that ended in the last `seconds`; `in_flight_marker` is the error text
    a model call's row holds until its outcome is written (study.server.model_calls)."""
    now = time.time() if now is None else now
    since = now - seconds
    rows = connection.execute(
        select(server_activity).where(server_activity.c.ended_at > since)
    ).mappings().all()
    histogram: Counter = Counter()
    for row in rows:
        histogram.update({int(k): v for k, v in json.loads(row["event_ms_histogram"]).items()})
    stored = connection.execute(
        select(func.count()).select_from(events).where(events.c.received_at > since)
    ).scalar_one()
    in_flight, oldest_in_flight_at = connection.execute(
        select(func.count(), func.min(suggestion_requests.c.created_at))
        .select_from(suggestion_requests)
        .where(suggestion_requests.c.created_at > now - in_flight_seconds)
        .where(suggestion_requests.c.error == in_flight_marker)
    ).one()
    return Recent(
        seconds=seconds,
        processes=len({row["process"] for row in rows}),
        requests=sum(row["requests"] for row in rows),
        event_requests=sum(row["event_requests"] for row in rows),
        suggestion_requests=sum(row["suggestion_requests"] for row in rows),
        busy_refusals=sum(row["busy_refusals"] for row in rows),
        event_ms=histogram,
        event_queue_max=max((row["event_queue_max"] for row in rows), default=0),
        events=stored,
        in_flight=in_flight,
        oldest_in_flight_at=oldest_in_flight_at,
    )
