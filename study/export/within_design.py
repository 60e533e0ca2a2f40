"""A within-subjects study's design as it ran (`[design] assignment = "within"`,
study.server.within), read from the study database: which arm lists and Latin-square rows
participants began with, how far each got, and each participant's completed session in each
arm, so `study report` can set a participant's arms next to each other and a release can carry
the design (study.release.within, within.json) for its readers to do the same.

Participants are numbered here, never named: the report may be mailed, and an access code or
worker id is not for its readers (a release names them by their pseudonym, study.release.within).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Connection, select

from study.config import Study
from study.server.within import Sequence, latin_square
from study.store import participants
from study.store.db import sessions


@dataclass
class Participant:
    genre: str
    arms: tuple[str, ...]  # the arm list they began with (study.toml order then)
    row: int | None  # their Latin-square row; None: began before rows were stored
    completed: dict[str, str] = field(default_factory=dict)  # arm -> their completed session
    position: dict[str, int] = field(default_factory=dict)  # completed session -> 1, 2, ... in their order

    @property
    def every_arm(self) -> bool:
        return set(self.arms) <= set(self.completed)


@dataclass
class WithinDesign:
    participants: list[Participant]
    arms: list[str]  # every arm in study.toml order, then any only the database names

    def lists(self) -> list[tuple[str, tuple[str, ...], int | None, list[Participant]]]:
        """(genre, arm list, row, its participants) for each list and row begun, in order."""
        groups: dict[tuple, list[Participant]] = {}
        for person in self.participants:
            groups.setdefault((person.genre, person.arms, person.row), []).append(person)
        order = lambda key: (key[0], key[1], -1 if key[2] is None else key[2])  # noqa: E731
        return [(*key, groups[key]) for key in sorted(groups, key=order)]


def order_of(arms: tuple[str, ...], row: int | None) -> list[str]:
    """The arms in the order of `row` of the Latin square over them (as study.server.within)."""
    return list(arms) if row is None else [arms[i] for i in latin_square(len(arms))[row]]


def read(connection: Connection, study: Study) -> WithinDesign:
    query = (
        select(sessions.c.session_id, sessions.c.worker_id, sessions.c.access_code, sessions.c.prompt_code,
               sessions.c.condition, sessions.c.within_order, sessions.c.completed_at)
        .where(sessions.c.condition.is_not(None))
        .order_by(sessions.c.created_at, sessions.c.session_id)
    )  # fmt: skip
    genre_of_prompt = {p.code: p.genre for p in study.prompts}
    genre_of_arm = {c.name: c.genre for c in study.conditions}
    found: dict[tuple, Participant] = {}
    for row in connection.execute(query).mappings():
        key = participants.participant_key(dict(row))
        if key is None:
            continue
        stored = Sequence.read(row["within_order"]) if row["within_order"] else None
        genre = (stored.genre if stored
                 else genre_of_prompt.get(row["prompt_code"]) or genre_of_arm.get(row["condition"], ""))  # fmt: skip
        person = found.get((key, genre))
        if person is None:
            # One who began before lists were stored took study.toml's arms (server.within).
            arms = stored.arms if stored else tuple(c.name for c in study.conditions_for(genre))
            person = found[(key, genre)] = Participant(genre, arms, stored.row if stored else None)
        if row["completed_at"] and row["condition"] not in person.completed:
            person.completed[row["condition"]] = row["session_id"]
            person.position[row["session_id"]] = len(person.completed)
    planned = [c.name for c in study.conditions]
    seen = sorted({arm for p in found.values() for arm in (*p.arms, *p.completed)} - set(planned))
    return WithinDesign(list(found.values()), planned + seen)
