"""Which prompts a writer may take, and which condition a new session gets.

The condition rule (balanced, deterministic, documented in the README):
  among the conditions of the prompt's genre, take the one with the fewest sessions on this
  prompt; break ties by the fewest sessions overall, then by the order in study.toml.
So every prompt sees every condition of its genre in turn, and the totals stay level too.
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


def available_prompts(connection: Connection, study: Study, session: dict) -> list[Prompt]:
    """Prompts of the session's round (study.review.rounds) this writer has taken fewer than
    `max_per_prompt` times, in study order."""
    taken = session_store.prompt_counts(connection, session)
    offered = rounds.prompt_codes(connection, study, session["session_id"])
    return [
        p
        for p in study.prompts
        if taken[p.code] < study.max_per_prompt and (offered is None or p.code in offered)
    ]


def hold_choice(connection: Connection) -> None:
    """Take the turn to choose a condition, until this transaction commits its choice: on
    PostgreSQL a transaction-scoped advisory lock, after which READ COMMITTED shows the next
    chooser counts that include it (SQLite's write transaction already serialises choosers).
    Within subjects (study.server.within) a new participant's Latin square row takes it too."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _CONDITION_LOCK})


def choose_condition(connection: Connection, study: Study, prompt: Prompt) -> Condition:
    hold_choice(connection)
    candidates = study.conditions_for(prompt.genre)
    on_prompt = session_store.condition_counts(connection, prompt.code)
    overall = session_store.condition_counts(connection)
    order = {c.name: i for i, c in enumerate(candidates)}
    return min(candidates, key=lambda c: (on_prompt[c.name], overall[c.name], order[c.name]))


def assign_prompt(connection: Connection, study: Study, session: dict) -> Prompt | None:
    """For prompt_selection = "assign": the available prompt this writer has used least; ties
    go to the prompt with the fewest sessions overall, then to the order in study.toml. (By
    order alone every new writer, who has used none, would get the first prompt.)"""
    available = available_prompts(connection, study, session)
    if not available:
        return None
    taken = session_store.prompt_counts(connection, session)
    overall = session_store.sessions_per_prompt(connection)
    order = {p.code: i for i, p in enumerate(study.prompts)}
    return min(available, key=lambda p: (taken[p.code], overall[p.code], order[p.code]))
