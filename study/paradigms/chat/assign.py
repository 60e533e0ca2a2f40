"""Which assistant and document type a chat session gets, and which intents it is offered.

The rule (random and balanced, spec C6.2 and C6.6):
  the assistant (condition) with the fewest sessions; among equals, one at random;
  then the document type with the fewest sessions of that assistant, then the fewest overall;
  among equals, one at random.
So every assistant sees every document type in turn. It runs inside the write transaction
that stores the choice (SQLite serialises them), so concurrent starts see each other. The
intents offered are a random subset (`intents_shown`, default 12) of the type's bank.
"""

from __future__ import annotations

import random

from sqlalchemy import Connection

from study.config import Condition, Study
from study.paradigms.chat import store as chat_store
from study.store import sessions as session_store

_random = random.SystemRandom()


def choose_condition(connection: Connection, study: Study) -> Condition | None:
    """The rule (module docstring) over the assistants not closed with `assign = false`; None
    when every one is closed: the study takes no new participant."""
    candidates = [c for c in study.conditions if c.assign]
    if not candidates:
        return None
    counts = session_store.condition_counts(connection)
    fewest = min(counts[c.name] for c in candidates)
    return _random.choice([c for c in candidates if counts[c.name] == fewest])


def choose_type(connection: Connection, study: Study, condition: str) -> str:
    within = chat_store.type_counts(connection, condition)
    overall = chat_store.type_counts(connection)
    keys = {t.name: (within.get(t.name, 0), overall.get(t.name, 0)) for t in study.chat.document_types}
    best = min(keys.values())
    return _random.choice([name for name, key in keys.items() if key == best])


def offer(study: Study, document_type: str) -> list[str]:
    bank = study.chat.intents_of(document_type)
    chosen = _random.sample(bank, min(study.chat.intents_shown, len(bank)))
    return [intent.key for intent in chosen]


def label(study: Study, condition_name: str) -> str:
    """What participants see instead of the condition's name: "A", "B", ... by its order in
    study.toml (the arm stays anonymous, spec C6.6)."""
    names = [c.name for c in study.conditions]
    return chr(ord("A") + names.index(condition_name)) if condition_name in names else "?"
