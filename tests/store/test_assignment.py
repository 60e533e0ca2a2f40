"""study.server.assignment on a real database: conditions take turns within a prompt's genre."""

from __future__ import annotations

import threading
from collections import Counter


from study.server import assignment
from study.store import reading, writing
from study.store import sessions as session_store


def start_writing(engine, study, prompt, access_code: str) -> str:
    """What the prompt page does when a writer picks `prompt`: the condition, in one transaction."""
    with writing(engine) as connection:
        session = session_store.create(connection, access_code=access_code)
        condition = assignment.choose_condition(connection, study, prompt)
        session_store.update_session(
            connection, session["session_id"], prompt_code=prompt.code,
            condition=condition.name, stage="writing",
        )
    return condition.name


def prompts_of(study, genre):
    return [p for p in study.prompts if p.genre == genre]


def test_sessions_on_one_prompt_cycle_through_the_conditions_of_its_genre(study, engine):
    prompt = prompts_of(study, "creative")[0]
    names = [c.name for c in study.conditions_for("creative")]

    chosen = [start_writing(engine, study, prompt, f"lab-{i}") for i in range(3 * len(names))]

    assert chosen == names * 3


def test_a_prompt_only_gets_conditions_of_its_genre(study, engine):
    prompt = prompts_of(study, "argumentative")[0]
    allowed = {c.name for c in study.conditions_for("argumentative")}

    chosen = {start_writing(engine, study, prompt, f"lab-{i}") for i in range(4)}

    assert chosen == allowed


def test_ties_on_a_new_prompt_go_to_the_condition_used_least_overall(study, engine):
    first, second = prompts_of(study, "creative")[:2]
    low, high = (c.name for c in study.conditions_for("creative"))

    assert start_writing(engine, study, first, "a") == low
    # The second prompt has no sessions yet; overall, `low` has one and `high` none.
    assert start_writing(engine, study, second, "b") == high
    assert start_writing(engine, study, second, "c") == low


def test_concurrent_starts_stay_balanced(study, engine):
    prompt = prompts_of(study, "creative")[0]
    barrier = threading.Barrier(12)

    def start(i):
        barrier.wait()
        start_writing(engine, study, prompt, f"lab-{i}")

    threads = [threading.Thread(target=start, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    with reading(engine) as connection:
        counts = session_store.condition_counts(connection, prompt.code)
    assert counts == Counter({c.name: 6 for c in study.conditions_for("creative")})
