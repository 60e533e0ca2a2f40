"""PostgreSQL plans the event API's statements once per connection, not at every batch: the
statements study.store.pg_rounds prepares keep a generic plan. By default (plan_cache_mode
auto) PostgreSQL plans a prepared statement anew at each execution for as long as the plan for
its values looks cheaper than the generic one, which at a 1,000-writer launch cost 14% of
PostgreSQL's CPU on the two cores it shares with the server (docs/benchmarks.md)."""

from __future__ import annotations

import pytest

from .records import Editor
from .test_events_api import app, batch_of, client, post, session_id  # noqa: F401 - fixtures

pytestmark = pytest.mark.postgres

# PostgreSQL tries a prepared statement's custom plans this many times before weighing the
# generic one (plancache.c).
CUSTOM_TRIALS = 5


@pytest.fixture(params=["postgresql"])
def database_url(request):
    return request.getfixturevalue("postgres_url")


def _plans(engine) -> dict[str, tuple[int, int]]:
    """Every statement prepared on the engine's pooled connections: (generic plans, custom
    plans), each connection's counted apart (the worst kept)."""
    held = [engine.raw_connection() for _ in range(engine.pool.checkedin())]
    found: dict[str, tuple[int, int]] = {}
    try:
        for raw in held:
            rows = raw.driver_connection.execute(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            ).fetchall()
            raw.driver_connection.rollback()
            for statement, generic, custom in rows:
                if custom > found.get(statement, (0, -1))[1]:
                    found[statement] = (generic, custom)
    finally:
        for raw in held:
            raw.close()
    return found


def test_a_writers_batches_are_planned_once_not_at_every_batch(client, engine, session_id):  # noqa: F811
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("a" * 40))).status_code == 200
    # Other writers' events, and the statistics autovacuum keeps on a launch's growing table.
    with engine.connect() as connection:
        connection.exec_driver_sql(
            "INSERT INTO events SELECT md5(writer::text), seq, 'text-insert', 0, '{}', 0"
            " FROM generate_series(1, 100) AS writer, generate_series(0, 99) AS seq"
        )
        connection.exec_driver_sql("ANALYZE events")
        connection.commit()
    for _ in range(3 * CUSTOM_TRIALS):
        assert post(client, session_id, batch_of(*editor.type("ab"))).status_code == 200

    plans = _plans(engine)
    counted = [statement for statement in plans if "count(*) FROM events" in statement]
    assert counted, f"the batches' count of stored events was not prepared: {list(plans)}"
    replanned = {statement: plan for statement, plan in plans.items() if plan[1] > CUSTOM_TRIALS}
    assert not replanned, f"planned again at every batch (generic plans, custom plans): {replanned}"
