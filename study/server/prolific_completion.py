"""Where a Prolific participant goes at the end: Prolific's completion URL ([prolific]
completion_url) with the completion code of the Prolific study their session came from.

The completion page redirects there (study.server.participant.complete). Browsers apply a
page's `form-action` policy to the whole redirect chain of a form's POST, and the last form of
the path (the survey) is answered by that redirect, so every page of a Prolific session allows
posting towards the completion URL's origin (study.server.stages.at_stage).
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from study.prolific import settings as prolific_settings
from study.server.context import engine, study
from study.store import reading
from study.store import prolific as prolific_store


def completion_url(session: dict) -> str | None:
    """Prolific's completion URL with this session's study's code; None if not from Prolific."""
    if not session.get("hit_id") or not session.get("worker_id"):
        return None
    with reading(engine()) as connection:
        known = prolific_store.study_row(connection, session["hit_id"])
    if known is None:
        return None
    base = prolific_settings.from_study(study()).completion_url
    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}{urlencode({'cc': known['completion_code']})}"


def origin(session: dict) -> str | None:
    """The completion URL's origin, for the page's form-action; None if not from Prolific."""
    url = completion_url(session)
    if url is None:
        return None
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
