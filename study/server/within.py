"""Within-subjects assignment (`[design] assignment = "within"`; Dhillon et al. CHI 2024,
MindCopilot's user study, issue 21 item 2): each participant writes once in every arm of the
prompt's genre, one session per arm, in an order counterbalanced across participants.

The order is a row of a Latin square over the arms in study.toml order: participant r (the
r-th to begin, counted from 0) takes row r mod k, and row r is Williams' design when k is even
(every arm follows every other arm once: first-order carry-over balanced) and the cyclic
square when k is odd (every arm in every position equally often). After each session the
participant answers its survey (the per-arm questionnaire), and the completion page offers the
next arm's session until every arm is done.
"""

from __future__ import annotations

from sqlalchemy import Connection

from study.config import Condition, Prompt, Study
from study.store import participants


def latin_square(k: int) -> list[list[int]]:
    """k rows of arm indices, each a permutation of range(k) (module docstring)."""
    if k % 2 == 0:
        first, low, high = [0], 1, k - 1
        while len(first) < k:
            first.append(low)
            low += 1
            if len(first) < k:
                first.append(high)
                high -= 1
        return [[(arm + r) % k for arm in first] for r in range(k)]
    return [[(r + j) % k for j in range(k)] for r in range(k)]


def order(arms: list[Condition], rank: int) -> list[Condition]:
    """The arms in the order participant `rank` takes them."""
    row = latin_square(len(arms))[rank % len(arms)]
    return [arms[i] for i in row]


def next_condition(connection: Connection, study: Study, prompt: Prompt, session: dict) -> Condition | None:
    """The arm this participant's session takes next, or None when every arm is done."""
    arms = study.conditions_for(prompt.genre)
    key = participants.participant_key(session)
    if key is None:
        return arms[0]
    done = set(participants.assigned_conditions(connection, key, excluding=session["session_id"]))
    for arm in order(arms, participants.arrival_rank(connection, key)):
        if arm.name not in done:
            return arm
    return None


def remaining(connection: Connection, study: Study, session: dict) -> int:
    """How many arms of the session's genre this participant has not written in yet."""
    key = participants.participant_key(session)
    if key is None or not session.get("prompt_code"):
        return 0
    arms = {c.name for c in study.conditions_for(study.prompt(session["prompt_code"]).genre)}
    return len(arms - set(participants.assigned_conditions(connection, key, excluding="")))


def every_arm_done(connection: Connection, study: Study, session: dict) -> bool:
    """Whether this participant has written in every arm of every genre the prompts offer: no
    other session is left for them."""
    key = participants.participant_key(session)
    if key is None:
        return False
    genres = {p.genre for p in study.prompts}
    arms = {c.name for c in study.conditions if c.genre in genres}
    return arms <= set(participants.assigned_conditions(connection, key, excluding=""))
