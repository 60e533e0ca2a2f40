"""What writers in several processes, and on several hosts, coordinate through the database
beside their transactions: a turn by name for a count that is read and then written, and one
clock, the database host's.
"""

from __future__ import annotations

import hashlib
import time

from sqlalchemy import Connection, text


def take_turn(connection: Connection, name: str) -> None:
    """Inside a write transaction: wait until no other transaction anywhere holds the turn for
    `name`, and hold it until this one ends. Counts that are read, then written (a throttle's)
    need it on PostgreSQL, which lets writers run side by side; on SQLite the write lock that
    every `writing` transaction takes up front already makes them take turns."""
    if connection.dialect.name != "postgresql":
        return
    number = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    connection.execute(text("SELECT pg_advisory_xact_lock(:number)"), {"number": number})


def clock(connection: Connection) -> float:
    """Now, in seconds since the epoch, by the clock of the database's host on PostgreSQL, which
    several hosts share while their own clocks may disagree (a count of the last hour taken by
    one host an hour ahead would forget every other host's); a SQLite file has one host."""
    if connection.dialect.name != "postgresql":
        return time.time()
    return connection.execute(text("SELECT extract(epoch FROM clock_timestamp())::float8")).scalar_one()
