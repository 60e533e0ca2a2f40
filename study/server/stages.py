"""Where a session is on the participant's path, and how it moves on.

A session is always at exactly one stage (study.store.sessions.STAGES); `at_stage` serves a
page only to a session at that page's stage and redirects any other to its own, `advance`
moves a session one stage on (skipping an empty pre-survey), and `stage_url` is the page of a
session's current stage, whichever paradigm serves it. The writing path
(study.server.participant) and every paradigm's pages use these, so none imports another.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from urllib.parse import urlsplit

from flask import current_app, g, redirect, request, url_for

from study import paradigms, providers
from study.config_types import GENRE_NOUNS
from study.review import rounds
from study.server import entry_pages, within
from study.server.context import engine, session_or_404, study
from study.store import sessions as session_store
from study.store import reading, writing
from study.survey import placement


def stage_url(session: dict) -> str:
    return url_for(stage_endpoint(session), session_id=session["session_id"])


def stage_endpoint(session: dict) -> str:
    """The Flask endpoint of the session's current stage's page: the one the session's paradigm
    serves (study.paradigms.of_session; its pages mounted by create_app), else the core path's
    (study.server.participant)."""
    paradigm = paradigms.of_session(study(), session.get("condition"))
    served = current_app.extensions["study.stage_endpoints"].get(paradigm.name, {}) if paradigm else {}
    return served.get(session["stage"], f"participant.{session['stage']}")


def at_stage(stage: str):
    """The page of one stage: the view runs only for a session at that stage (and gets it);
    a session anywhere else is redirected to its own stage's page, and an unfinished session
    of a writer who withdrew is refused (study.review.rounds.resume_refusal)."""

    def decorate(view):
        @functools.wraps(view)
        def checked(session_id: str):
            session = session_or_404(session_id)
            with reading(engine()) as connection:
                refusal = rounds.resume_refusal(connection, session)
            if refusal:
                return entry_pages.message("Withdrawn", refusal, 403)
            # The right stage on another paradigm's page (a session whose paradigm serves its
            # own writing page, at the core's) goes to its own page too.
            if session["stage"] != stage or request.endpoint != stage_endpoint(session):
                return redirect(stage_url(session))
            # A session of a provider with its own completion URL (Prolific) ends with a
            # redirect there, which answers its last form: its pages may post towards it.
            g.submit_origin = completion_origin(session)
            return view(session_id, session)

        return checked

    return decorate


def completion_url(session: dict) -> str | None:
    """Where a provider with a participant path of its own sends this session at the end
    (study.providers.ParticipantPath); None for MTurk's HITs and lab sessions."""
    for path in providers.participant_paths():
        if (url := path.completion_url(session)) is not None:
            return url
    return None


def submission_deadline(session: dict) -> float | None:
    """The latest time (epoch seconds) the session's platform takes its submission (MTurk's
    assignment time, Prolific's maximum time); None for a lab session."""
    for path in providers.participant_paths():
        if (deadline := path.submission_deadline(session)) is not None:
            return deadline
    return None


def platform_clock(session: dict) -> dict:
    """The boot data of a page the participant writes on (the editor, the chat) for the
    platform's clock (study/static/submit-clock.js): the seconds left before its platform stops
    taking the work; nothing for a lab session."""
    deadline = submission_deadline(session)
    return {} if deadline is None else {"submitSecondsLeft": round(deadline - time.time())}


def completion_origin(session: dict) -> str | None:
    url = completion_url(session)
    if url is None:
        return None
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def advance(session_id: str, from_stage: str, **values) -> dict:
    stages = paradigms.path(study()) or session_store.STAGES
    with writing(engine()) as connection:
        session = session_store.get(connection, session_id)
        if session["stage"] == from_stage:
            values["stage"] = stages[stages.index(from_stage) + 1]
            if values["stage"] == "presurvey" and not placement.stage_surveys(
                connection, study().surveys, study().paradigm, session, "presurvey"
            ):
                values["stage"] = stages[stages.index("presurvey") + 1]  # nothing to ask first
            session_store.update_session(connection, session_id, **values)
            session = session_store.get(connection, session_id)
    return session


def lost_names(study_config, engine) -> str | None:
    """Why the study cannot serve the sessions still on their path, or None: a condition or
    prompt they were given that study.toml no longer has (renamed or removed since). Each of
    their pages and event batches would fail with a KeyError, until the end of the study."""
    with reading(engine) as connection:
        in_use = session_store.names_in_progress(connection)
        # Within subjects, an arm is in use before its session begins: participants part-way
        # through their sequence are owed it (study.server.within).
        owed = (within.owed_arms_lost(connection, study_config, study_config.directory / "study.toml")
                if study_config.assignment == "within" else [])
    known = {"condition": {c.name for c in study_config.conditions}}
    if paradigms.path_hooks(study_config) is None:  # a chat study's prompt_code is its intent
        known["prompt_code"] = {p.code for p in study_config.prompts}
    problems = []
    for key, names in known.items():
        what, label = ("conditions", "name") if key == "condition" else ("prompts", "code")
        # Removing an arm is how a researcher would stop giving it: the key that does so is the fix.
        closing = "; to give it to no new session, keep the entry with assign = false" if key == "condition" else ""
        for name, count in sorted(in_use[key].items()):
            if name not in names:
                problems.append(
                    f"{study_config.directory / 'study.toml'}: {what}: no entry with {label} = '{name}', "
                    f"which {count} session(s) not yet complete were given. Fix: restore that "
                    f"[[{what}]] entry (a renamed one keeps its old {label}) until they are complete{closing}."
                )
    # A paradigm changed under the same name (tab -> none): their pages would switch to the new
    # one mid-session, and their logs be read as the new one's.
    now = {c.name: c.paradigm for c in study_config.conditions}
    for (name, paradigm), count in sorted(in_use["paradigm"].items()):
        if name in now and now[name] != paradigm:
            problems.append(
                f"{study_config.directory / 'study.toml'}: conditions: the entry with name = '{name}' says "
                f"paradigm = '{now[name]}', but {count} session(s) not yet complete began with paradigm = "
                f"'{paradigm}'. Fix: restore paradigm = \"{paradigm}\" until they are complete, or give "
                f"the new paradigm a [[conditions]] entry of its own name."
            )
    left = _left_in_study_db(study_config, engine)
    return "\n".join([*problems, *owed, *([left] if left else [])]) or None


def _left_in_study_db(study_config, engine) -> str | None:
    """Why [study] database, changed (to PostgreSQL, say) while writers were still in sessions
    that the folder's study.db holds, cannot serve them, or None: it does not have them, so
    their pages and event batches would no longer be found."""
    from sqlalchemy.exc import SQLAlchemyError

    from study.store.engine import make_engine, shown_url, without_password

    folder_db = study_config.directory / "study.db"
    served = engine.url.database if engine.dialect.name == "sqlite" else None
    if not folder_db.is_file() or (served and Path(served).resolve() == folder_db.resolve()):
        return None
    earlier = make_engine(f"sqlite:///{folder_db}")
    try:
        with reading(earlier) as connection:
            waiting = session_store.ids_in_progress(connection)
    except SQLAlchemyError:
        return None  # not a study's database: nothing of this study to lose
    finally:
        earlier.dispose()
    if waiting:
        with reading(engine) as connection:
            waiting -= session_store.stored_ids(connection, waiting)
    if not waiting:
        return None
    return (
        f"{study_config.directory / 'study.toml'}: [study] database names {shown_url(engine.url)}, "
        f"which does not have the {len(waiting)} session(s) not yet complete that {folder_db} "
        f"holds: served from it, their writers would lose their place. Fix: to move them (and "
        f"everything else {folder_db.name} holds) into it, set [study] database = \"\" again, stop "
        f"the servers, run `study copy-database {study_config.directory} --to {without_password(engine.url)}` "
        f"into an empty database, then set [study] database back; or keep [study] database = \"\" "
        f"until they are complete (study status shows them), then change it; or, to leave them "
        f"unfinished, move {folder_db.name} (and its -wal and -shm files) out of the folder."
    )


def noun(session: dict) -> str:
    if session.get("prompt_code"):
        return study().prompt(session["prompt_code"]).noun
    genres = {p.genre for p in study().prompts}
    return " or ".join(sorted({GENRE_NOUNS.get(g, "text") for g in genres}))
