"""Statements sent to PostgreSQL in one round (study.store.pg_rounds), on a real server: what a
failed round leaves, and prepared statements that outlive other transactions' rollbacks."""

from __future__ import annotations

import psycopg
import pytest

from study.store import make_engine

pytestmark = pytest.mark.postgres

pg_rounds = pytest.importorskip("study.store.pg_rounds")


@pytest.fixture
def driver(postgres_url):
    """One connection of the study's engine, as the group commit holds one."""
    engine = make_engine(postgres_url)
    raw = engine.raw_connection()
    driver = raw.driver_connection
    driver.execute("DROP TABLE IF EXISTS rounds")
    driver.execute("CREATE TABLE rounds (id integer PRIMARY KEY, note text NOT NULL)")
    driver.commit()
    yield driver
    raw.close()
    engine.dispose()


def _notes(driver) -> list[tuple]:
    (rows,) = pg_rounds.send(driver, [("SELECT id, note FROM rounds ORDER BY id", ())])
    return rows


def _round(driver, statements, begin=True):
    try:
        rows = pg_rounds.send(driver, statements, begin=begin)
        driver.commit()
        return rows
    except psycopg.Error:
        driver.rollback()
        raise


def test_a_round_answers_each_statement_in_order(driver):
    rows = _round(driver, [
        ("INSERT INTO rounds VALUES (?, ?) RETURNING id", (1, "one")),
        ("INSERT INTO rounds VALUES (?, ?)", (2, "two")),
        ("SELECT note FROM rounds WHERE id >= ? ORDER BY id", (1,)),
        ("SELECT count(*), ?::float8 * 2 FROM rounds", (1.25,)),
    ])  # fmt: skip
    assert rows == [[(1,)], [], [("one",), ("two",)], [(2, 2.5)]]


def test_a_failed_statement_leaves_nothing_of_its_round_and_the_connection_usable(driver):
    _round(driver, [("INSERT INTO rounds VALUES (?, ?)", (1, "kept"))])
    with pytest.raises(psycopg.errors.UniqueViolation):
        _round(driver, [
            ("INSERT INTO rounds VALUES (?, ?)", (2, "lost")),
            ("INSERT INTO rounds VALUES (?, ?)", (1, "a second 1")),
            # First used after the error: its preparing is skipped, so it must be prepared again.
            ("UPDATE rounds SET note = ? WHERE id = ?", ("changed", 1)),
        ])  # fmt: skip
    assert _notes(driver) == [(1, "kept")]
    _round(driver, [
        ("INSERT INTO rounds VALUES (?, ?)", (2, "two")),
        ("UPDATE rounds SET note = ? WHERE id = ?", ("changed", 1)),
    ])  # fmt: skip
    assert _notes(driver) == [(1, "changed"), (2, "two")]


def test_prepared_statements_outlive_another_transactions_rollback(driver):
    # psycopg, preparing statements of its own, would send DEALLOCATE ALL when a transaction on
    # the connection rolls back, and the rounds' next use of their statements would fail.
    assert _round(driver, [("SELECT count(*) FROM rounds WHERE id > ?", (0,))]) == [[(0,)]]
    for number in range(8):  # past psycopg's default threshold for preparing a statement
        driver.execute("SELECT %s + 1", (number,))
    driver.rollback()
    assert _round(driver, [("SELECT count(*) FROM rounds WHERE id > ?", (0,))]) == [[(0,)]]


def test_a_value_of_another_type_is_refused_before_anything_is_sent(driver):
    with pytest.raises(TypeError, match="not bool"):
        _round(driver, [("INSERT INTO rounds VALUES (?, ?)", (True, "yes"))])
    _round(driver, [("INSERT INTO rounds VALUES (?, ?)", (1, "after"))])
    assert _notes(driver) == [(1, "after")]


def test_statements_without_begin_run_as_one_transaction(driver):
    with pytest.raises(psycopg.errors.NotNullViolation):
        _round(driver, [
            ("INSERT INTO rounds VALUES (?, ?)", (1, "kept")),
            ("INSERT INTO rounds VALUES (?, ?)", (2, None)),
        ], begin=False)  # fmt: skip
    # A pipeline without BEGIN runs up to its sync in one implicit transaction: both or none.
    assert _notes(driver) == []
