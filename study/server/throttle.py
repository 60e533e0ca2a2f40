"""How many new sessions one IP address (one IPv6 network of 64 bits) may start per hour.

A bot that opens /task with made-up worker ids or access codes creates a session per request;
this bounds it. The starts are counted in the limit store (study.server.limit_store: the study
database, or Redis when STUDY_REDIS_URL is set) under a hash of the address and forgotten after
the hour, so the limit is one limit for every worker process and host serving the study
(README, "Running a study").
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from sqlalchemy import Connection

from study.server.limit_store import DatabaseStore, RedisStore, address_key
from study.server.page_security import canonical_address

WINDOW_SECONDS = 3600


class StartThrottle:
    def __init__(self, per_hour: int, store: DatabaseStore | RedisStore, namespace: str) -> None:
        self.per_hour = per_hour
        self.store = store
        self.namespace = namespace

    def allow(self, address: str | None, connection: Connection | None = None) -> bool:
        """Count one new session for `address`; False when it has used up its hour. Raises
        LimitStoreUnavailable when the store does not answer. In the study database the count
        joins `connection`'s transaction when given (the one creating the session)."""
        if self.per_hour <= 0:
            return True
        return self.store.hit(self._key(address), self.per_hour, WINDOW_SECONDS, connection)

    def take(self, address: str | None) -> Taken | None:
        """RedisStore: count one new session for `address` before the transaction that may create
        it (study.server.entry_pages.entering); what to `give_back` if it creates none, or None
        when the address has used up its hour (nothing counted then)."""
        key = self._key(address)
        member = self.store.take(key, self.per_hour, WINDOW_SECONDS)
        return None if member is None else Taken(key, member)

    def give_back(self, taken: Taken) -> None:
        """Uncount a start that created no session (a second click that found the session the
        first made, a transaction that failed): only sessions created use up the hour, as with
        the study database's count, made inside the transaction that creates the session."""
        self.store.give_back(taken.key, taken.member)

    def _key(self, address: str | None) -> str:
        return f"starts:{address_key(self.namespace, counted_as(address) if address else '?')}"


@dataclass(frozen=True)
class Taken:
    """One start counted in Redis: its key and its own member of the key's sorted set."""

    key: str
    member: str


def counted_as(address: str) -> str:
    """The client `address` is counted as: an IPv4 address itself, an IPv6 address its /64.
    An IPv6 subscriber (a home line, a phone) is handed a whole /64 and may pick a fresh address
    in it for every request, so one address is not one client there (RFC 6177)."""
    address = canonical_address(address)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return address
