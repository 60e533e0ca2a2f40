"""The answers every way into the study shares (study.server.participant's access codes, and
each recruitment provider's participant path, study.providers.ParticipantPath): the refusals a
participant reads, and the per-address throttle on new sessions."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from flask import current_app, g, render_template, request

from study import control_arm, paradigms
from study.config_texts import min_writing_text, study_duration
from study.server import page_security
from study.server.context import engine, study
from study.server.limit_store import DatabaseStore
from study.server.proxy import TRUSTED_PROXIES
from study.store import writing

logger = logging.getLogger(__name__)


def message(title: str, text: str, status: int):
    return render_template("message.html", study=study(), title=title, message=text), status


def preview(*, prolific: bool = False):
    """The task as a worker sees it before taking part (MTurk's preview, Prolific's): nothing is
    stored. It states the timer's minimum as the instructions do (min_writing_text); a study on
    a paradigm's own path (a chat study's) has neither the Tab editor nor that timer, so its
    preview states the study's duration instead, as its consent page does. Beside a control arm
    (study.control_arm) it promises no AI: the worker does not know their arm, and some will
    have none."""
    return render_template(
        "preview.html", study=study(), prolific=prolific, min_writing=min_writing_text(study()),
        own_path=paradigms.path_hooks(study()) is not None, duration=study_duration(study()),
        control_arm=bool(control_arm.control_names(study().conditions)),
    )  # fmt: skip


def cannot_start(text: str):
    return message("Cannot start", text, 400)


def refuse_round(text: str):
    return message("Not this round", text, 403)


def refuse_repeat(text: str):
    return message("Already taken part", text, 403)


def too_many_starts():
    return message("Please wait", "Too many sessions were started from your network in the last "
                   "hour; please try again later.", 429)  # fmt: skip


class _CountOutside(Exception):
    """start_allowed inside an entry's transaction, with the starts counted outside the study
    database (Redis): `entering` counts the start with no transaction open, then runs again."""


def entering(work):
    """The answer `work(connection)` gives in a write transaction: an entry that may start a
    session (calling `start_allowed` before it creates one). With the starts counted in Redis, the count is not
    taken while the transaction holds the database's write lock (on SQLite every writer's
    event batches wait behind it): a Redis that does not answer would hold them all up for its
    socket timeout. The transaction stops where it would count, the start is counted with no
    transaction open, and `work` runs again with the answer. A count the second run does not
    use (the session is there by then: a double-click's other request made it) is given back,
    so only sessions created use up the address's hour, as in the study database."""
    try:
        with writing(engine()) as connection:
            return work(connection)
    except _CountOutside:
        pass
    throttle = current_app.extensions["study.start_throttle"]
    taken = throttle.take(request.remote_addr)
    g.study_start_allowed = taken is not None
    created = False
    try:
        with writing(engine()) as connection:
            answer = work(connection)
        created = g.get("study_start_used", False)  # committed: the session is there
        return answer
    finally:
        g.pop("study_start_allowed", None)
        g.pop("study_start_used", None)
        if taken is not None and not created:
            throttle.give_back(taken)


def start_allowed(connection) -> bool:
    """Whether this address may start another session; counted inside the caller's transaction
    (`connection`) when the count is kept in the study database, else before it (`entering`)."""
    # Loopback is not throttled: it is a reverse proxy on this machine (which would otherwise
    # put every writer under one address), a test or a benchmark (README, "Running a study").
    # Nor is a peer without an address: a Unix socket's (gunicorn -b unix:...), which only a
    # process on this machine can reach.
    if not request.remote_addr or page_security.is_loopback(request.remote_addr):
        _proxy_not_trusted()
        return True
    throttle = current_app.extensions["study.start_throttle"]
    if isinstance(throttle.store, DatabaseStore) or throttle.per_hour <= 0:
        return throttle.allow(request.remote_addr, connection)
    if "study_start_allowed" in g:
        # The caller creates the session when this is True (`entering` keeps the count then).
        g.study_start_used = g.study_start_allowed
        return g.study_start_allowed
    raise _CountOutside


def _proxy_not_trusted() -> None:
    """Tell the operator, once per server process, when a proxy on this machine forwards its
    clients (X-Forwarded-For) but STUDY_TRUSTED_PROXIES is unset: every writer then arrives from
    the proxy's loopback address, which is not throttled, so anyone may start sessions without
    limit, and nothing else would say so (study.server.proxy)."""
    if current_app.config.get(TRUSTED_PROXIES) or "X-Forwarded-For" not in request.headers:
        return
    if current_app.extensions.setdefault("study.untrusted_proxy_told", False):
        return
    current_app.extensions["study.untrusted_proxy_told"] = True
    logger.warning(
        "new sessions arrive through a proxy on this machine (they carry X-Forwarded-For), but "
        "%s is not set: every participant counts as the proxy's loopback address, which is not "
        "throttled, so [session] new_sessions_per_ip_per_hour limits no one. Fix: restart the "
        "server with %s=1 (the number of proxies in front of it), bound to loopback only.",
        TRUSTED_PROXIES, TRUSTED_PROXIES,
    )


def loopback_request() -> bool:
    """The request came over loopback to a loopback host (a test, never a worker)."""
    return page_security.is_loopback(request.remote_addr) and page_security.is_loopback(
        urlsplit("//" + request.host).hostname
    )
