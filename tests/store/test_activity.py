"""The server activity rows `study status` reads: times kept on buckets, so that the rows of many
processes add up to one distribution, and a percentile read to within a bucket."""

from __future__ import annotations

from collections import Counter

from study.store import create_tables, reading, writing
from study.store.activity import BUCKET_EDGES_MS, Interval, bucket, percentile, record, recent


def test_a_time_falls_in_the_bucket_whose_upper_edge_is_at_or_above_it():
    for milliseconds in (0.1, 0.5, 3.0, 41.0, 950.0):
        index = bucket(milliseconds)
        assert BUCKET_EDGES_MS[index] >= milliseconds
        assert index == 0 or BUCKET_EDGES_MS[index - 1] < milliseconds
        assert BUCKET_EDGES_MS[index] <= milliseconds * 1.25 or index == 0


def test_percentiles_of_a_histogram_name_the_bucket_holding_them():
    histogram = Counter({bucket(4.0): 98, bucket(300.0): 2})
    assert percentile(histogram, 0.5) == BUCKET_EDGES_MS[bucket(4.0)]
    assert percentile(histogram, 0.98) == BUCKET_EDGES_MS[bucket(4.0)]
    assert percentile(histogram, 0.99) == BUCKET_EDGES_MS[bucket(300.0)]
    assert percentile(Counter(), 0.5) is None


def test_the_last_minute_sums_every_process_and_leaves_out_older_rows(engine):
    now = 1_800_000_000.0
    old = Interval("host-a:1", started_at=now - 200, ended_at=now - 190, requests=500, event_requests=400,
                   event_queue_max=90)  # fmt: skip
    old.event_ms[bucket(900.0)] = 400
    a = Interval("host-a:1", started_at=now - 20, ended_at=now - 10, requests=30, event_requests=20,
                 suggestion_requests=3, busy_refusals=1, event_queue_max=4)  # fmt: skip
    a.event_ms[bucket(2.0)] = 20
    b = Interval("host-b:7", started_at=now - 15, ended_at=now - 5, requests=12, event_requests=10,
                 event_queue_max=11)  # fmt: skip
    b.event_ms[bucket(30.0)] = 10
    with writing(engine) as connection:
        for interval in (old, a, b):
            record(connection, interval)
    with reading(engine) as connection:
        found = recent(connection, "no outcome", 40, now=now)
    assert (found.processes, found.requests, found.event_requests) == (2, 42, 30)
    assert (found.suggestion_requests, found.busy_refusals, found.in_flight) == (3, 1, 0)
    assert found.event_queue_max == 11  # the deepest of one process in the minute, not a sum
    assert percentile(found.event_ms, 0.5) == BUCKET_EDGES_MS[bucket(2.0)]
    assert percentile(found.event_ms, 0.99) == BUCKET_EDGES_MS[bucket(30.0)]


def test_a_database_made_before_the_queue_column_gets_it_and_its_rows_read_as_no_queue(engine):
    # A study database from an earlier version of the package: server_activity without
    # event_queue_max, holding a row. Starting the new version adds the column.
    now = 1_800_000_000.0
    with writing(engine) as connection:
        connection.exec_driver_sql("ALTER TABLE server_activity DROP COLUMN event_queue_max")
        connection.exec_driver_sql(
            "INSERT INTO server_activity (process, started_at, ended_at, requests, event_requests,"
            " suggestion_requests, busy_refusals, event_ms_histogram)"
            f" VALUES ('host-a:1', {now - 20}, {now - 10}, 5, 5, 0, 0, '{{}}')"
        )
    create_tables(engine)
    create_tables(engine)  # and again, finding it there
    with writing(engine) as connection:
        record(connection, Interval("host-b:2", started_at=now - 9, ended_at=now - 5, requests=1, event_queue_max=3))
    with reading(engine) as connection:
        found = recent(connection, "no outcome", 40, now=now)
    assert (found.processes, found.requests, found.event_queue_max) == (2, 6, 3)
