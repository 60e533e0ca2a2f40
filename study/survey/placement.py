"""Which surveys a session owes at each point of the participant's path.

- before_writing: on the "presurvey" stage, before the prompt (or the chat study's intent);
- after_session: on the "survey" stage of every session;
- end_of_study: on the "survey" stage too, after the after_session surveys, but once per
  participant (the same worker or access code): a participant doing several sessions answers it
  in the first session that reaches the end;
- in_session: inside the chat, after every `every` exchanges, blocking until answered
  (CollabLLM's periodic rating); `occasion` is the exchange count it follows.
A survey may be limited to a paradigm (`paradigms`), e.g. CoAuthor's to writing sessions.
"""

from __future__ import annotations

from sqlalchemy import Connection

from study.store import surveys as survey_store
from study.survey.questions import Survey

# The stage whose page asks in_session surveys; a session past it takes no new answers to them.
IN_SESSION_STAGE = "chat"

STAGE_PLACEMENTS = {
    "presurvey": ("before_writing",),
    "survey": ("after_session", "end_of_study"),
}


def stage_surveys(connection: Connection, surveys, paradigm: str, session: dict, stage: str) -> list[Survey]:
    """The surveys asked on `stage` of this session, in order (submitted ones included, except
    end-of-study surveys the participant submitted in another session)."""
    placements = STAGE_PLACEMENTS[stage]
    due = []
    for placement in placements:
        for survey in surveys:
            if survey.placement != placement or not survey.asks_in(paradigm):
                continue
            if placement == "end_of_study":
                own = survey_store.get(connection, session["session_id"], survey.name)
                if own is None and survey_store.submitted_by_participant(connection, session, survey.name):
                    continue
            due.append(survey)
    return due


def in_session_due(surveys, paradigm: str, exchanges: int, answered: set[tuple[str, int]]) -> list[tuple[Survey, int]]:
    """In-session surveys owed after `exchanges` exchanges: (survey, occasion) for each
    checkpoint k, 2k, ... <= exchanges not yet answered. Pure, for the chat API and its tests."""
    owed = []
    for survey in surveys:
        if survey.placement != "in_session" or not survey.asks_in(paradigm):
            continue
        for occasion in range(survey.every, exchanges + 1, survey.every):
            if (survey.name, occasion) not in answered:
                owed.append((survey, occasion))
    return owed
