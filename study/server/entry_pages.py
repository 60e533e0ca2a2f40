"""The answers every way into the study shares (study.server.participant's access codes, and
each recruitment provider's participant path, study.providers.ParticipantPath): the refusals a
participant reads, and the per-address throttle on new sessions."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import current_app, render_template, request

from study.server import page_security
from study.server.context import study


def message(title: str, text: str, status: int):
    return render_template("message.html", study=study(), title=title, message=text), status


def cannot_start(text: str):
    return message("Cannot start", text, 400)


def refuse_round(text: str):
    return message("Not this round", text, 403)


def refuse_repeat(text: str):
    return message("Already taken part", text, 403)


def too_many_starts():
    return message("Please wait", "Too many sessions were started from your network in the last "
                   "hour; please try again later.", 429)  # fmt: skip


def start_allowed(connection) -> bool:
    """Whether this address may start another session; counted inside the caller's transaction
    (`connection`) when the count is kept in the study database."""
    # Loopback is not throttled: it is a reverse proxy on this machine (which would otherwise
    # put every writer under one address), a test or a benchmark (README, "Running a study").
    if page_security.is_loopback(request.remote_addr):
        return True
    return current_app.extensions["study.start_throttle"].allow(request.remote_addr, connection)


def loopback_request() -> bool:
    """The request came over loopback to a loopback host (a test, never a worker)."""
    return page_security.is_loopback(request.remote_addr) and page_security.is_loopback(
        urlsplit("//" + request.host).hostname
    )
