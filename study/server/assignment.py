"""Which prompts a writer may take, and which condition a new session gets.

The condition rule (balanced, deterministic, documented in the README):
  among the conditions of the prompt's genre, take the one with the fewest sessions on this
  prompt; break ties by the fewest sessions overall, then by the order in study.toml.
So every prompt sees every condition of its genre in turn, and the totals stay level too.
A condition closed with `assign = false` (a pilot showed it broken) takes no more turns; the
sessions already given it go on as they were.
It runs inside the write transaction that binds the prompt, so concurrent sessions see each
other's choices: SQLite serialises write transactions, and on PostgreSQL the choice takes a
transaction-scoped advisory lock, so that two simultaneous starts cannot see the same counts.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from study.config import Condition, Prompt, Study
from study.review import rounds
from study.store import sessions as session_store

# Any fixed 64-bit number: it names the "choosing a condition" lock among advisory locks.
_CONDITION_LOCK = 0x5374756479436F6E  # "StudyCon"


def available_prompts(
    connection: Connection, study: Study, session: dict, genres: set[str] | None = None
) -> list[Prompt]:
    """Prompts of the session's round (study.review.rounds) this writer has taken fewer than
    `max_per_prompt` times, in study order; only those of `genres` when given (open_genres:
    a prompt whose every arm is closed has no condition to give)."""
    taken = session_store.prompt_counts(connection, session)
    offered = rounds.prompt_codes(connection, study, session["session_id"])
    return [
        p
        for p in study.prompts
        if taken[p.code] < study.max_per_prompt
        and (offered is None or p.code in offered)
        and (genres is None or p.genre in genres)
    ]


def open_genres(study: Study) -> set[str]:
    """The genres a new session may be given an arm in: those with an arm not closed
    (`assign = false`). Within subjects, study.server.within.open_genres adds the genres a
    participant is still owed an arm in."""
    return {c.genre for c in study.conditions if c.assign}


def hold_choice(connection: Connection) -> None:
    """Take the turn to choose a condition, until this transaction commits its choice: on
    PostgreSQL a transaction-scoped advisory lock, after which READ COMMITTED shows the next
    chooser counts that include it (SQLite's write transaction already serialises choosers).
    Within subjects (study.server.within) a new participant's Latin square row takes it too."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _CONDITION_LOCK})


def choose_condition(connection: Connection, study: Study, prompt: Prompt) -> Condition:
    """The balanced rule (module docstring) over the genre's open arms: a closed one
    (`assign = false`) is given to no new session, and the others keep taking turns. The
    prompt page offers no prompt of a genre whose every arm is closed (open_genres)."""
    hold_choice(connection)
    candidates = study.open_conditions_for(prompt.genre)
    on_prompt = session_store.condition_counts(connection, prompt.code)
    overall = session_store.condition_counts(connection)
    order = {c.name: i for i, c in enumerate(candidates)}
    return min(candidates, key=lambda c: (on_prompt[c.name], overall[c.name], order[c.name]))


def assign_prompt(
    connection: Connection, study: Study, session: dict, genres: set[str] | None = None
) -> Prompt | None:
    """For prompt_selection = "assign": the available prompt this writer has used least; ties
    go to the prompt with the fewest sessions overall, then to the order in study.toml. (By
    order alone every new writer, who has used none, would get the first prompt.)"""
    available = available_prompts(connection, study, session, genres)
    if not available:
        return None
    taken = session_store.prompt_counts(connection, session)
    overall = session_store.sessions_per_prompt(connection)
    order = {p.code: i for i, p in enumerate(study.prompts)}
    return min(available, key=lambda p: (taken[p.code], overall[p.code], order[p.code]))
