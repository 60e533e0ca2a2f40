"""What a pilot covers: which prompt each simulated writer takes, and what the pilot left out.

A pilot pilots the study only if every prompt (and so every condition, which the server
assigns per prompt's genre, balanced) is written at least once. In a study with rounds the
writers enter one round, as a participant's link without ?round= does (study.review.rounds),
and can write only the prompts it offers: the pilot covers that round, not the whole study.
Drawing prompts at random leaves whole genres out of a small pilot, so writers take the genre,
then the prompt, drawn least so far in the run; ties are broken by the writer's seeded
generator.
"""

from __future__ import annotations

import math
import random
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, select

from study.config import Condition, Prompt, Study
from study.review import rounds
from study.review.settings import Round
from study.export import within_design
from study.server.within import WILLIAMS, latin_square
from study.store.db import sessions


@dataclass(frozen=True)
class Scope:
    """What a pilot's writers can write: the round they enter (None: a study without rounds),
    its prompts, and the conditions of those prompts' genres, in study.toml order."""

    round: Round | None
    prompts: tuple[Prompt, ...]
    conditions: tuple[Condition, ...]
    # Arms of the round's genres closed to new participants (`assign = false`): the server gives
    # no new writer one, so no number of writers pilots them.
    closed: tuple[Condition, ...] = ()


def scope(study: Study) -> Scope:
    """The pilot's scope: simulated writers enter with an access code and no ?round=, so the
    server puts them in its default round, by the rule it applies to every entry, and are given
    only arms open to new participants (study.server.assignment), so prompts of a genre whose
    every arm is closed are not offered to them either."""
    entered = rounds.round_named(study, None)
    offered = rounds.offered_prompts(study, entered)
    arms = study.conditions
    if rounds.offered_codes(entered) is not None:
        # The server gives a session an arm of its prompt's genre: a round of creative prompts
        # never assigns the argumentative arms.
        arms = [c for c in arms if c.genre in {p.genre for p in offered}]
    open_genres = {c.genre for c in arms if c.assign}
    return Scope(entered, tuple(p for p in offered if p.genre in open_genres),
                 tuple(c for c in arms if c.assign), tuple(c for c in arms if not c.assign))  # fmt: skip


def closed_to_pilots(study: Study, covered: Scope) -> str | None:
    """Why no simulated writer could enter the pilot's round, with what to do; None if they can.
    Simulated writers are newcomers: none has passed a round."""
    required = rounds.required_round(covered.round)
    if not required:
        return None
    return (
        f"{study.directory / 'study.toml'}: rounds: round '{covered.round.name}', which a task link "
        f"without ?round= enters, admits only writers who passed round '{required}'; no simulated "
        "writer has, so the server would turn every one away. Fix: pilot in a copy of this folder "
        f"in which '{required}' is the round a link without ?round= enters (default = true on it, "
        "and on no other round), so that the pilot's sessions stay out of this study's database; "
        "see README, Simulated writers."
    )


class PromptDraws:
    """The prompt each writer of one run takes (shared by the run's writers, thread-safe)."""

    def __init__(self, study: Study) -> None:
        self.genre_of = {p.code: p.genre for p in study.prompts}
        self.genres: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.lock = threading.Lock()

    def pick(self, offered: Sequence[str], rng: random.Random) -> str:
        with self.lock:
            least = min(offered, key=lambda c: (self.genres[self.genre_of.get(c)], self.codes[c]))
            key = (self.genres[self.genre_of.get(least)], self.codes[least])
            ties = [c for c in offered if (self.genres[self.genre_of.get(c)], self.codes[c]) == key]
            code = rng.choice(ties)
            self.genres[self.genre_of.get(code)] += 1
            self.codes[code] += 1
            return code


def default_writers(study: Study, covered: Scope) -> int:
    """A pilot's default size: one writer per prompt of its scope (every condition then gets
    sessions too; within subjects, whole squares of writers with a session per prompt);
    a study on a paradigm's own path has no prompts (a chat study's users are assigned their
    assistant), so one per condition."""
    if study.paradigm != "writing":
        return max(1, len(covered.conditions))
    if study.assignment == "within":
        # Each writer writes once in every arm of every genre: enough writers for a session on
        # every prompt, in whole squares (as many writers as a genre's square has rows use each
        # row once: k for k arms, 2k for an odd k, study.server.within), so each arm is written
        # as often in each position and after each other arm.
        arms = [len(study.conditions_for(genre)) for genre in sorted({p.genre for p in covered.prompts})]
        square = math.lcm(*(len(latin_square(k)) for k in arms)) if arms else 1
        needed = max(square, -(-len(covered.prompts) // max(1, sum(arms))))
        return -(-needed // square) * square
    return max(1, len(covered.prompts), len(covered.conditions))


def left_out(study: Study, covered: Scope, connection: Connection) -> tuple[list[str], list[str]]:
    """The prompts and conditions of the scope with no finished session (in its round, if it
    has one) in the study's database, in study.toml order."""
    # Finished sessions only, as `study export` exports them: a writer stopped half-way (an
    # interrupted run, a page the simulator did not expect) piloted nothing past its stop.
    query = select(sessions.c.prompt_code, sessions.c.condition).where(sessions.c.writing_finished_at.is_not(None))
    if covered.round is not None:
        # Another round's session on the same prompt piloted other instructions and entry rules.
        query = query.where(rounds.sessions_in(study, covered.round.name))
    rows = connection.execute(query).all()
    prompts = {row.prompt_code for row in rows}
    conditions = {row.condition for row in rows}
    unwritten = [p.code for p in covered.prompts if p.code not in prompts] if study.paradigm == "writing" else []
    return unwritten, [c.name for c in covered.conditions if c.name not in conditions]


def rows_left_out(study: Study, covered: Scope, connection: Connection) -> list[str]:
    """Within subjects: per genre of the scope, the rows of the Latin square over its open arms
    (study.server.within: the arm list a newcomer begins with) that no participant has written
    every arm of, as "of 'creative': 4, 5 (of 6)"; empty between subjects. A pilot of fewer
    writers than a square has rows piloted some orders of the arms and not others."""
    if study.assignment != "within":
        return []
    began = within_design.read(connection, study).participants
    missing = []
    for genre in sorted({p.genre for p in covered.prompts}):
        arms = tuple(c.name for c in study.open_conditions_for(genre))
        done = {p.row for p in began if (p.genre, p.arms, p.square) == (genre, arms, WILLIAMS) and p.every_arm}
        rows = [str(r) for r in range(len(latin_square(len(arms)))) if r not in done]
        if rows and len(arms) > 1:
            missing.append(f"of '{genre}': {', '.join(rows)} (of {len(latin_square(len(arms)))})")
    return missing
