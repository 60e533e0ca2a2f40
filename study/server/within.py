"""Within-subjects assignment (`[design] assignment = "within"`; Dhillon et al. CHI 2024,
MindCopilot's user study, issue 21 item 2): each participant writes once in every arm of the
prompt's genre, one session per arm, in an order counterbalanced across participants.

The order is a row of Williams' design over the k arms in study.toml order (`latin_square`):
every arm in every position equally often, and every arm directly after every other equally
often (first-order carry-over balanced). For an even k that is one Latin square of k rows; for
an odd k no k rows can balance carry-over, so it is two squares, the k rows and their mirror
images, 2k rows. Participant r (the r-th to begin, counted from 0) takes row r mod the rows.

Before Williams' design for an odd k, an odd k took the cyclic square (`cyclic_square`: row r
is r, r+1, ...; positions balanced, carry-over not). A participant keeps the square they began
in: a sequence is stored with its square, and one stored without (an older version) is read as
that version gave it, the cyclic square for an odd k. A study in progress goes on counting its
participants, so the next one takes row (their count) mod 2k; for k = 3 the cyclic rows are
Williams' first three, the next three being their mirror images. After each session the
participant answers its survey (the per-arm questionnaire), and the completion page offers the
next arm's session until every arm is done.

A participant keeps the arm list (and row) they began the genre with: it is stored with each of
their sessions (sessions.within_order), so an arm added, removed or moved in study.toml mid-study
changes no one's order part-way through. A new participant's rank counts only those who began
with the same arm list, so a changed list starts a square of its own at row 0, balanced among
its own participants. An arm a participant part-way through is still owed and study.toml no
longer has stops `study serve` at its start (owed_arms_lost). Participants who began before the
list was stored (an older database) have none: they take study.toml's arms in the row of their
arrival rank among everyone, as before, and count as having begun with study.toml's list of
the day when a new participant's row is chosen.

An arm closed with `assign = false` is left out of a new participant's list (a list of its own,
so its own square), while participants part-way through still write in it when their order
reaches it: their order was fixed when they began, and skipping it would leave each one arm
short of their paired comparison and move the arms after it to other positions of their row.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection

from study.config import Condition, Prompt, Study
from study.server import assignment
from study.store import participants
from study.store import sessions as session_store


WILLIAMS, CYCLIC = "williams", "cyclic"  # the squares, by the name a stored sequence gives them


def latin_square(k: int) -> list[list[int]]:
    """Williams' design over k arms (Williams 1949; module docstring): rows of arm indices, each
    a permutation of range(k), k rows for an even k and 2k for an odd k (the k rows, then each
    of them reversed)."""
    first, low, high = [0], 1, k - 1
    while len(first) < k:
        first.append(low)
        low += 1
        if len(first) < k:
            first.append(high)
            high -= 1
    rows = [[(arm + r) % k for arm in first] for r in range(k)]
    return rows if k % 2 == 0 else rows + [row[::-1] for row in rows]


def cyclic_square(k: int) -> list[list[int]]:
    """The square an odd k took before Williams' design for it (module docstring): k rows."""
    return [[(r + j) % k for j in range(k)] for r in range(k)]


def square_before(k: int) -> str:
    """The square of a participant who began before squares were stored: Williams' for an even
    k (as now), the cyclic square for an odd k."""
    return WILLIAMS if k % 2 == 0 else CYCLIC


def square_rows(k: int, square: str) -> list[list[int]]:
    return cyclic_square(k) if square == CYCLIC else latin_square(k)


def order(arms: list[Condition], rank: int) -> list[Condition]:
    """The arms in the order participant `rank` took them, for a participant from before
    sequences were stored (their square is the one of that version)."""
    rows = square_rows(len(arms), square_before(len(arms)))
    return [arms[i] for i in rows[rank % len(rows)]]


@dataclass(frozen=True)
class Sequence:
    """The arms of one genre as the participant began them (study.toml order then), their row
    and the square it is a row of (WILLIAMS for whoever begins now)."""

    genre: str
    arms: tuple[str, ...]
    row: int
    square: str = WILLIAMS

    def order(self) -> list[str]:
        return [self.arms[i] for i in square_rows(len(self.arms), self.square)[self.row]]

    def stored(self) -> str:
        return json.dumps({"genre": self.genre, "arms": list(self.arms), "row": self.row, "square": self.square})

    @classmethod
    def read(cls, stored: str) -> Sequence:
        data = json.loads(stored)
        arms = tuple(data["arms"])
        # Stored without a square: by a version that gave an odd k the cyclic square.
        return cls(data["genre"], arms, int(data["row"]), data.get("square") or square_before(len(arms)))


def next_condition(
    connection: Connection, study: Study, prompt: Prompt, session: dict
) -> tuple[Condition | None, str | None]:
    """The arm this participant's session takes next (None when every arm is done) and the
    sequence to store with the session (None for a participant from before it was stored)."""
    arms = study.conditions_for(prompt.genre)
    # A newcomer's arms; the prompt page offers no prompt of a genre with none (open_genres).
    open_arms = study.open_conditions_for(prompt.genre)
    key = participants.participant_key(session)
    if key is None:
        return open_arms[0], None
    done = set(participants.assigned_conditions(connection, key, excluding=session["session_id"]))
    parts = _parts(connection, key)
    if _from_before(parts):  # they began with every arm of study.toml's, closed ones included
        for arm in order(arms, participants.arrival_rank(connection, key)):
            if arm.name not in done:
                return arm, None
        return None, None
    sequence = _sequences(parts).get(prompt.genre)
    if sequence is None:
        assignment.hold_choice(connection)  # two participants beginning at once get two rows
        names = tuple(arm.name for arm in open_arms)
        everyone = tuple(arm.name for arm in arms)
        rank = _began_with(connection, names, everyone)
        sequence = Sequence(prompt.genre, names, rank % len(latin_square(len(names))))
    for name in sequence.order():
        if name not in done:
            return study.condition(name), sequence.stored()
    return None, None


def _parts(connection: Connection, key: tuple[str, str]) -> list[tuple[tuple[str, str], str, str | None]]:
    return [part for part in participants.assigned_sessions(connection, key) if part[0] == key]


def _from_before(parts) -> bool:
    """Whether the participant began before sequences were stored (a session of theirs has
    none): they keep study.toml's arms and their arrival rank, as that version gave them."""
    return any(stored is None for _, _, stored in parts)


def _sequences(parts) -> dict[str, Sequence]:
    """A participant's sequence per genre, from their sessions (oldest first)."""
    found: dict[str, Sequence] = {}
    for _, _, stored in parts:
        if stored is not None:
            sequence = Sequence.read(stored)
            found.setdefault(sequence.genre, sequence)
    return found


def _began_with(connection: Connection, arms: tuple[str, ...], everyone: tuple[str, ...]) -> int:
    """How many participants began with this arm list, in either square (the next one's rank:
    a study in progress goes on from its count, module docstring), counting those
    from before sequences were stored as having begun with it when it is study.toml's whole
    list (`everyone`, closed arms included): study.toml gives it them now."""
    sequences, older = set(), set()
    for key, _, stored in participants.assigned_sessions(connection):
        if stored is None:
            older.add(key)
        elif Sequence.read(stored).arms == arms:
            sequences.add(key)
    return len(sequences) + (len(older - sequences) if arms == everyone else 0)


def _arm_lists(study: Study, connection: Connection, key) -> dict[str, set[str]]:
    """Per genre the arms this participant is to write in: their sequence's, else the open
    arms a newcomer gets (study.toml's all, for a participant from before sequences)."""
    parts = _parts(connection, key)
    genres = {p.genre for p in study.prompts}
    if _from_before(parts):
        return {genre: {c.name for c in study.conditions_for(genre)} for genre in genres}
    lists = {genre: {c.name for c in study.open_conditions_for(genre)} for genre in genres}
    lists.update({genre: set(s.arms) for genre, s in _sequences(parts).items() if genre in lists})
    return lists


def open_genres(connection: Connection, study: Study, session: dict) -> set[str]:
    """The genres whose prompts this participant may take: those with an open arm, and those
    their own arm list has arms in, closed or not (their order was fixed when they began), less
    those whose every arm they have written in: a prompt of such a genre has no arm left for
    them, and the session that chose it would stay at the prompt stage for good."""
    found = assignment.open_genres(study)
    key = participants.participant_key(session)
    if key is None:
        return found
    lists = _arm_lists(study, connection, key)
    done = set(participants.assigned_conditions(connection, key, excluding=""))
    finished = {genre for genre, arms in lists.items() if arms and arms <= done}
    return (found | {genre for genre, arms in lists.items() if arms}) - finished


def unwritten_first(connection: Connection, study: Study, session: dict, available: list[Prompt]) -> list[Prompt]:
    """The prompts this participant may take for their next arm: those they have not written
    yet, in each genre where any remain. Dhillon et al. gave each condition a prompt of its own:
    a prompt written in two arms would make the prompt part of the comparison of the arms. A
    genre whose every prompt they have written (fewer prompts than arms) keeps them all, so
    they can still write in every arm."""
    written = session_store.prompt_counts(connection, session)
    fresh = {p.genre for p in available if not written[p.code]}
    return [p for p in available if not written[p.code] or p.genre not in fresh]


def remaining(connection: Connection, study: Study, session: dict) -> int:
    """How many arms of the session's genre this participant has not written in yet."""
    key = participants.participant_key(session)
    if key is None or not session.get("prompt_code"):
        return 0
    arms = _arm_lists(study, connection, key).get(study.prompt(session["prompt_code"]).genre, set())
    return len(arms - set(participants.assigned_conditions(connection, key, excluding="")))


def owed_arms(connection: Connection, study: Study, session: dict) -> set[str]:
    """The arms this participant has still to write in, every genre's, by their own arm lists
    (a sequence keeps the list they began with), and those of their other sessions whose writing
    ends after this one's: two sessions open at once (two tabs, two MTurk assignments) are given
    every arm, but only the one whose writing ends last follows them all, and it alone owes
    none (an end-of-study survey's session, study.survey.placement). None for a session no
    participant key ties to others (its participant writes no other session)."""
    key = participants.participant_key(session)
    if key is None:
        return set()
    done = set(participants.assigned_conditions(connection, key, excluding=""))
    later = participants.arms_ending_after(connection, key, session)
    return (set().union(*_arm_lists(study, connection, key).values()) - done) | later


def every_arm_done(connection: Connection, study: Study, session: dict) -> bool:
    """Whether this participant has written in every arm of every genre the prompts offer: no
    other session is left for them."""
    key = participants.participant_key(session)
    if key is None:
        return False
    done = set(participants.assigned_conditions(connection, key, excluding=""))
    # A newcomer has done nothing, even where every arm is closed to them (none left to give).
    return bool(done) and set().union(*_arm_lists(study, connection, key).values()) <= done


def arm_lists_begun(connection: Connection) -> tuple[Counter, int]:
    """How many participants began with each arm list (a tuple of names, study.toml order
    then), and how many began before arm lists were stored, for `study status`."""
    lists: dict[tuple[str, ...], set] = {}
    older = set()
    for key, _, stored in participants.assigned_sessions(connection):
        if stored is None:
            older.add(key)
        else:
            lists.setdefault(Sequence.read(stored).arms, set()).add(key)
    began = Counter({arms: len(keys) for arms, keys in lists.items()})
    return began, len(older - set().union(*lists.values()))


def owed_arms_lost(connection: Connection, study: Study, toml: Path) -> list[str]:
    """Why `study serve` cannot go on with participants part-way through their sequence: an arm
    they still have to write in that study.toml no longer has (removed or renamed). Taking
    them through the rest of their list without it would leave them short of an arm that the
    paired analysis (each writer's own difference) expects, without anyone deciding so."""
    done: dict[tuple[str, str], set[str]] = {}
    sequences: dict[tuple[str, str], list[str]] = {}
    for key, condition, stored in participants.assigned_sessions(connection):
        done.setdefault(key, set()).add(condition)
        if stored is not None:
            sequences.setdefault(key, []).append(stored)
    known = {c.name for c in study.conditions}
    owed_by: Counter = Counter()
    for key, stored in sequences.items():
        owed = {name for s in {Sequence.read(text) for text in stored} for name in s.arms} - done[key]
        owed_by.update(owed - known)
    return [
        f"{toml}: conditions: no entry with name = '{name}', an arm {count} participant(s) part-way "
        f"through a within-subjects sequence have still to write in (their order was fixed when they "
        f"began). Fix: restore that [[conditions]] entry (a renamed one keeps its old name) until "
        f"they have written in it; to give it to no new participant, keep the entry with "
        f"assign = false. `study status` counts the participants who began with each arm list."
        for name, count in sorted(owed_by.items())
    ]
