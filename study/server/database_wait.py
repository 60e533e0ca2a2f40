"""A gunicorn worker that boots while the study's PostgreSQL does not answer (a restart or a
failover under way, the network between) waits for it, then boots. gunicorn starts a worker
again whenever one is recycled (max_requests) or killed, and its master halts the whole server
when a worker fails to boot ("Worker failed to boot", exit 3): every writer of the launch would
lose the server, and nothing starts it again. The boot creates the tables and reads the stored
sessions (study.server.wsgi), so it needs the database.

The wait is bounded (WAIT_SECONDS), with one line in the log naming the database (password
hidden) and that the worker waits; past it, the boot fails with the database and the fix
(study.store.engine), as it always did. A database that answers but refuses the study (a wrong
password, a missing database) fails the boot at once: waiting would not mend it
(study.server.database_trouble.does_not_answer). SQLite never waits.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, TypeVar

from sqlalchemy.engine import make_url

from study.server.database_trouble import does_not_answer
from study.store.engine import shown_url

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Long enough for a restart or a managed database's failover (typically 20-60 s). gunicorn's
# worker timeout does not cut it short: it counts from a worker's first heartbeat, which its
# serving loop gives (gunicorn 27, gunicorn/workers/workertmp.py).
WAIT_SECONDS = 60.0
# The pause between tries doubles from the first to the longest: a restart that takes a second
# is caught at once, and a long one is not asked a hundred times a minute by every worker.
FIRST_PAUSE, LONGEST_PAUSE = 0.25, 4.0


def when_answering(url: str, build: Callable[[], T], what: str) -> T:
    """`build()`, tried again while the database at `url` does not answer, for up to
    WAIT_SECONDS; any other error, and the last one, is raised as it comes. `what` is the
    process for the log ("this gunicorn worker")."""
    deadline = time.monotonic() + WAIT_SECONDS
    pause = FIRST_PAUSE
    waited = False
    while True:
        try:
            built = build()
        except Exception as error:  # noqa: BLE001 - only a database that does not answer is waited for
            if not does_not_answer(error, url) or time.monotonic() + pause > deadline:
                raise
            if not waited:
                address = make_url(url)
                logger.warning(
                    "%s cannot start yet: the study's database %s (PostgreSQL at %s:%s) does not answer "
                    "(%s). Waiting up to %d s for it (a restart or a failover) before starting.",
                    what, shown_url(url), address.host or "the local socket", address.port or 5432,
                    " ".join(str(getattr(error, "orig", None) or error).split()), WAIT_SECONDS,
                )  # fmt: skip
                waited = True
            time.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE)
            continue
        if waited:
            logger.warning("%s: the study's database %s answers; starting.", what, shown_url(url))
        return built
