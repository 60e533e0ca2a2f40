"""Hosts whose clocks disagree (a VM that lost its NTP, a host an hour ahead) still keep one
new-session limit per address: the limit store counts by its own clock, not each host's."""

from __future__ import annotations

import time

import pytest

from study.server.limit_store import DatabaseStore, RedisStore
from study.server.throttle import StartThrottle
from study.store import create_tables, make_engine

HOUR = 3600
ADDRESS = "198.51.100.7"


@pytest.fixture(params=[pytest.param("postgresql", marks=pytest.mark.postgres), "redis"])
def store_for_each_host(request):
    """A function making one host's store: each host has its own client or engine, as it would."""
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        yield lambda: RedisStore(url, "clocks")
        return
    engine = make_engine(request.getfixturevalue("new_postgres_database"))
    create_tables(engine)
    yield lambda: DatabaseStore(engine)
    engine.dispose()


def test_a_host_whose_clock_is_ahead_does_not_reset_an_addresss_start_limit(store_for_each_host, monkeypatch):
    on_time = StartThrottle(3, store_for_each_host(), "clocks")
    ahead = StartThrottle(3, store_for_each_host(), "clocks")
    real_time = time.time

    def on_the_host_ahead(address: str) -> bool:
        with monkeypatch.context() as clock:
            clock.setattr(time, "time", lambda: real_time() + 2 * HOUR)
            return ahead.allow(address)

    assert [on_time.allow(ADDRESS) for _ in range(3)] == [True, True, True]
    # The address has used its hour, whichever host it asks next.
    assert on_the_host_ahead(ADDRESS) is False
    assert on_time.allow(ADDRESS) is False
    assert on_the_host_ahead("198.51.100.8") is True  # another address is not held back


@pytest.mark.postgres
def test_a_host_whose_clock_is_behind_keeps_the_study_wide_model_call_limit(study_folder, new_postgres_database, model_url, monkeypatch):
    from study import config
    from study.server import create_app
    from tests.server.flow import start, to_writing

    from .test_shared_limits import configure

    configure(study_folder, model_url, suggestions__model_calls_per_minute=2,
              suggestions__max_requests_per_minute=10, study__database=f'"{new_postgres_database}"')  # fmt: skip
    on_time, behind = (create_app(config.load(study_folder)).test_client() for _ in range(2))
    real_time = time.time

    def ask(host, session_id: str) -> int:
        with monkeypatch.context() as clock:
            if host is behind:
                clock.setattr(time, "time", lambda: real_time() - 5 * 60)
            return host.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once upon a time"}).status_code

    writers = []
    for i, host in enumerate((behind, on_time)):
        writers.append(start(host, access_code=f"writer-{i}"))
        to_writing(host, writers[-1])
    assert [ask(behind, writers[0]) for _ in range(2)] == [200, 200]
    # Two calls this minute for the whole study, whichever host's clock recorded them.
    assert ask(on_time, writers[1]) == 429


@pytest.mark.postgres
def test_a_host_whose_clock_is_ahead_still_makes_a_guessing_address_wait(new_postgres_database, monkeypatch):
    from study.review import logins
    from study.store import writing

    engine = make_engine(new_postgres_database)
    create_tables(engine)
    for _ in range(logins.FREE_FAILURES):  # the free failures, on the host that is on time
        with writing(engine) as connection:
            logins.record_failure(connection, "ada", ADDRESS)
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + HOUR)  # the next guess, on the host ahead
    with writing(engine) as connection:
        wait = logins.wait_seconds(connection, ADDRESS)
    engine.dispose()
    assert wait > 0
