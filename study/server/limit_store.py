"""Where the task server counts what its limits count, so that a limit is one limit however many
worker processes (`study serve` runs one per core) or hosts serve the study.

- The model-call limits and slots (study.server.model_calls) count the rows the study database
  keeps of every model call anyway: nothing to add, and they survive a restart.
- The new-session throttle per address (study.server.throttle) counts in a `LimitStore`:
  `DatabaseStore`, a table of the study database (the default: no extra server), or
  `RedisStore`, Redis when `STUDY_REDIS_URL` is set (an atomic script per count, no write to the
  study database, for several hosts or a database that should not take these writes).

A store that cannot be reached raises LimitStoreUnavailable, whose message names the setting
and the fix; `study serve` checks Redis before it starts.
"""

from __future__ import annotations

import hashlib
import logging
import os
import uuid
from urllib.parse import urlsplit

from sqlalchemy import Connection, Engine, delete, func, insert, select
from sqlalchemy.exc import SQLAlchemyError

from study.store import writing
from study.store.db import start_throttle
from study.store.coordination import clock, take_turn

REDIS_URL_VARIABLE = "STUDY_REDIS_URL"

logger = logging.getLogger(__name__)


class LimitStoreUnavailable(RuntimeError):
    """The limit store does not answer; str() says which one and what to do."""


def address_key(namespace: str, address: str) -> str:
    # Counted under a hash: neither store keeps the address itself, and each entry is deleted
    # once its window has passed. (A hash of an IPv4 address can be reversed by trying them all:
    # this keeps addresses out of sight in a dump, not secret from someone who looks.)
    return hashlib.sha256(f"{namespace}\0{address}".encode()).hexdigest()[:32]


class DatabaseStore:
    """Counts in the study database's `start_throttle` table (one row per counted event)."""

    name = "the study database"

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def hit(self, key: str, limit: int, window: float, connection: Connection | None = None) -> bool:
        """Count one event for `key` unless `limit` are counted in the last `window` seconds;
        False when the limit is reached (nothing counted then). Inside `connection`'s
        transaction when given (a write of the same thread must not wait for itself)."""
        if connection is not None:
            return self._hit(connection, key, limit, window)
        try:
            with writing(self.engine) as own:
                return self._hit(own, key, limit, window)
        except SQLAlchemyError as error:
            raise LimitStoreUnavailable(f"the study database did not answer a limit count: {error}") from error

    @staticmethod
    def _hit(connection: Connection, key: str, limit: int, window: float) -> bool:
        # Two hosts counting the same key at once would both see a free place and both take
        # it (a start past the limit under a burst, on PostgreSQL): they count in turn.
        take_turn(connection, f"limit:{key}")
        now = clock(connection)
        table = start_throttle
        connection.execute(delete(table).where(table.c.at <= now - window))
        counted = connection.execute(
            select(func.count()).select_from(table).where(table.c.key == key)
        ).scalar_one()
        if counted >= limit:
            return False
        connection.execute(insert(table).values(key=key, at=now))
        return True

    def check(self) -> None:
        """Nothing to check: the server cannot start without its database."""


# KEYS[1]: the counter; ARGV: window, limit, a unique member. Atomic in Redis, so two hosts
# counting the same address at once cannot both take the last place; timed by Redis's clock,
# which every host shares where their own clocks may disagree.
_HIT_SCRIPT = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local window, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= limit then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(window))
return 1
"""


class RedisStore:
    """Counts in Redis: a sorted set of timestamps per key, trimmed to the window."""

    def __init__(self, url: str, namespace: str) -> None:
        try:
            import redis
        except ImportError:
            raise LimitStoreUnavailable(
                f"{REDIS_URL_VARIABLE} is set but the Redis client is not installed: "
                f"pip install -e '.[scale]' (or unset {REDIS_URL_VARIABLE})"
            ) from None

        self.url = url
        self.address = _without_password(url)  # as the server shows it: password hidden
        self.name = f"Redis ({self.address})"
        self.namespace = namespace
        self._errors = (redis.RedisError, OSError)
        try:
            self.client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        except ValueError as error:
            raise LimitStoreUnavailable(
                f"{REDIS_URL_VARIABLE}={_without_password(url)}: {error}. Give a URL such as "
                f"redis://host:6379/0, or unset it to keep limits in the study database."
            ) from None
        self._hit = self.client.register_script(_HIT_SCRIPT)

    def _unavailable(self, error: Exception) -> LimitStoreUnavailable:
        return LimitStoreUnavailable(
            f"{REDIS_URL_VARIABLE}={_without_password(self.url)}: Redis does not answer ({error}). "
            f"Start redis-server there (or fix the URL), or unset {REDIS_URL_VARIABLE} to keep "
            f"the limits in the study database."
        )

    def hit(self, key: str, limit: int, window: float, connection: Connection | None = None) -> bool:
        return self.take(key, limit, window) is not None

    def take(self, key: str, limit: int, window: float) -> str | None:
        """Count one event for `key` unless `limit` are counted in the last `window` seconds: the
        count's own token, for `give_back`, or None when the limit is reached (nothing counted)."""
        member = uuid.uuid4().hex
        try:
            counted = self._hit(keys=[self._key(key)], args=[window, limit, member])
        except self._errors as error:
            raise self._unavailable(error) from None
        return member if counted else None

    def give_back(self, key: str, member: str) -> None:
        """Uncount the event `take` counted as `member`: what it counted did not happen. A Redis
        that does not answer now only keeps the count until its window passes, so this logs
        rather than fail a request that has already been answered."""
        try:
            self.client.zrem(self._key(key), member)
        except self._errors as error:
            logger.warning("%s: a count could not be given back (%s); it lapses with its window", self.name, error)

    def _key(self, key: str) -> str:
        return f"study:{self.namespace}:limit:{key}"

    def check(self) -> None:
        """A count, not only a PING: a Redis that answers but cannot take one (a read-only
        replica, a user without the right to run scripts) stops the server here, rather than
        refusing every new participant once it runs. The count's key expires within a second."""
        try:
            self.client.ping()
            self._hit(keys=[f"study:{self.namespace}:limit:check:{uuid.uuid4().hex}"], args=[1, 1, "check"])
        except self._errors as error:
            raise self._unavailable(error) from None


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    shown = url
    if parts.password:
        shown = shown.replace(f":{parts.password}@", ":***@", 1)
    if parts.query:
        # redis-py also takes the password from the query (a unix:// socket's only place for it).
        query = "&".join(
            f"{name}=***" if name == "password" else field
            for field in parts.query.split("&") for name in [field.partition("=")[0]]
        )  # fmt: skip
        shown = shown.replace(f"?{parts.query}", f"?{query}", 1)
    return shown


def from_environment(engine: Engine, namespace: str) -> DatabaseStore | RedisStore:
    """Redis when STUDY_REDIS_URL is set, else the study database."""
    url = os.environ.get(REDIS_URL_VARIABLE, "").strip()
    if not url:
        return DatabaseStore(engine)
    return RedisStore(url, namespace)
