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
from study.server.within import CYCLIC, Sequence, square_before, square_rows
from study.store import participants
from study.store.db import sessions


@dataclass
class Participant:
    genre: str
    arms: tuple[str, ...]  # the arm list they began with (study.toml order then)
    row: int | None  # their Latin-square row; None: began before rows were stored
    completed: dict[str, str] = field(default_factory=dict)  # arm -> their completed session
    position: dict[str, int] = field(default_factory=dict)  # completed session -> 1, 2, ... in their order
    square: str = ""  # the square their row is of (study.server.within); "": as before squares were stored

    def __post_init__(self) -> None:
        self.square = self.square or square_before(len(self.arms))

    @property
    def every_arm(self) -> bool:
        return set(self.arms) <= set(self.completed)


@dataclass
class WithinDesign:
    participants: list[Participant]
    arms: list[str]  # every arm in study.toml order, then any only the database names

    def lists(self) -> list[tuple[str, tuple[str, ...], int | None, str, list[Participant]]]:
        """(genre, arm list, row, square, its participants) for each list and row begun, in order."""
        groups: dict[tuple, list[Participant]] = {}
        for person in self.participants:
            groups.setdefault((person.genre, person.arms, person.row, person.square), []).append(person)
        return [(*key, groups[key]) for key in sorted(groups, key=list_order)]


def list_order(key: tuple) -> tuple:
    """How lists are sorted, by (genre, arm list, row, square): a row of the cyclic square after
    the same row of Williams' design."""
    genre, arms, row, square = key
    return genre, arms, -1 if row is None else row, square == CYCLIC


def order_of(arms: tuple[str, ...], row: int | None, square: str = "") -> list[str]:
    """The arms in the order of `row` of the square over them (as study.server.within; "":
    the square of a participant from before squares were stored)."""
    if row is None:
        return list(arms)
    return [arms[i] for i in square_rows(len(arms), square or square_before(len(arms)))[row]]


def row_label(row: int | None, square: str) -> str | int:
    """A list's row as the report and the card show it: the row of a participant who began in
    the cyclic square (an odd number of arms, before Williams' design for it) says so."""
    if row is None:
        return "before rows were stored"
    return f"{row} (cyclic square)" if square == CYCLIC else row


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
            person = found[(key, genre)] = Participant(genre, arms, stored.row if stored else None,
                                                       square=stored.square if stored else "")
        if row["completed_at"] and row["condition"] not in person.completed:
            person.completed[row["condition"]] = row["session_id"]
            person.position[row["session_id"]] = len(person.completed)
    planned = [c.name for c in study.conditions]
    seen = sorted({arm for p in found.values() for arm in (*p.arms, *p.completed)} - set(planned))
    return WithinDesign(list(found.values()), planned + seen)
