"""Which surveys a session owes at each point of the participant's path.

- before_writing: on the "presurvey" stage, before the prompt (or the chat study's intent);
- after_session: on the "survey" stage of every session;
- end_of_study: on the "survey" stage too, after the after_session surveys, but once per
  participant (the same worker or access code). Between subjects a participant doing several
  sessions answers it in the first session that reaches the end. Within subjects it is asked
  after the participant's last arm, in the session that leaves no arm owed (`owed_arms`, from
  study.server.within): Dhillon et al.'s and MindCopilot's post-study questions (which arm was
  preferred, the whole study's workload) need every arm seen. A participant who stops before
  their last arm is not asked it;
- in_session: inside the chat, after every `every` exchanges, blocking until answered
  (CollabLLM's periodic rating); `occasion` is the exchange count it follows.
A survey may be limited to a paradigm (`paradigms`), e.g. CoAuthor's to writing sessions, and
to arms (`arms`: [[conditions]] names), e.g. "How helpful were the AI's suggestions?" to the AI
arms of a study with a no-AI control arm. The session's arm (its stored `condition`) decides:
between subjects a participant is asked the surveys of the one arm they wrote in; within
subjects each session's survey stage asks its own arm's, after that arm's session. An
`end_of_study` survey limited to arms is asked once per participant, in a session of a listed
arm: between subjects the first that reaches the end, within subjects the one that leaves no
listed arm owed. A participant who writes in none of them is never asked it. A
session has no arm before its prompt (a chat study's intent), so a before_writing survey cannot
be limited to arms (study.survey.checks refuses it).
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


def stage_surveys(
    connection: Connection, surveys, paradigm: str, session: dict, stage: str, owed_arms: set[str] | None = None
) -> list[Survey]:
    """The surveys asked on `stage` of this session, in order (submitted ones included, except
    end-of-study surveys the participant submitted in another session). `owed_arms`: within
    subjects, the arms the participant has still to write in, this session's counted as written
    (and those of their sessions whose writing ends after this one's: study.server.within.owed_arms);
    None between subjects."""
    placements = STAGE_PLACEMENTS[stage]
    due = []
    for placement in placements:
        for survey in surveys:
            if survey.placement != placement or not survey.asks_in(paradigm):
                continue
            if not survey.asks_of(session.get("condition")):
                continue
            if placement == "end_of_study":
                own = survey_store.get(connection, session["session_id"], survey.name)
                # One begun here is finished here, whatever was assigned since (another tab).
                if own is None and (
                    _arm_still_owed(survey, owed_arms)
                    or survey_store.submitted_by_participant(connection, session, survey.name)
                ):
                    continue
            due.append(survey)
    return due


def _arm_still_owed(survey: Survey, owed_arms: set[str] | None) -> bool:
    """Whether, within subjects, the participant still owes an arm this end-of-study survey is
    about (its `arms`, else any): it waits for their last such session."""
    if owed_arms is None:
        return False
    return bool(owed_arms & set(survey.arms)) if survey.arms else bool(owed_arms)


def in_session_due(
    surveys, paradigm: str, arm: str | None, exchanges: int, answered: set[tuple[str, int]]
) -> list[tuple[Survey, int]]:
    """In-session surveys a session in `arm` owes after `exchanges` exchanges: (survey, occasion)
    for each checkpoint k, 2k, ... <= exchanges not yet answered. Pure, for the chat API."""
    owed = []
    for survey in in_session(surveys, paradigm, arm):
        for occasion in range(survey.every, exchanges + 1, survey.every):
            if (survey.name, occasion) not in answered:
                owed.append((survey, occasion))
    return owed


def in_session(surveys, paradigm: str, arm: str | None) -> list[Survey]:
    """The in-session surveys a session of `paradigm` in `arm` is asked (the chat page's forms)."""
    return [s for s in surveys if s.placement == "in_session" and s.asks_in(paradigm) and s.asks_of(arm)]
