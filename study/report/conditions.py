"""The paper's four conditions: genre x randomness (CoAuthor §4.1, Fig. 2, App. A).

GPT-3 had two decoding settings per genre: creative writing temperature .75 (frequency penalty
1) or .3 (0), argumentative .9 (.5) or .2 (.5). The paper reports its results per genre and,
within a genre, per randomness; `study.curation.stats.condition_of` names a session's setting
high or low from its temperature and frequency penalty. A report groups by these four when
every session is in one of them, and by the data's own conditions otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

GENRES = ("creative", "argumentative")
TEMPERATURE = {
    ("creative", "high"): ".75", ("creative", "low"): ".3",
    ("argumentative", "high"): ".9", ("argumentative", "low"): ".2",
}  # fmt: skip
PAPER_CONDITIONS = tuple(TEMPERATURE)


def label(genre: str, randomness: str) -> str:
    """`creative, high (T .75)`: the condition as the report prints it."""
    return f"{genre}, {randomness} (T {TEMPERATURE[(genre, randomness)]})"


def paper_condition(session) -> tuple[str, str] | None:
    """(genre, randomness) of a session (anything with `genre` and `randomness`), or None when
    it is not in one of the paper's four conditions."""
    key = (session.genre, session.randomness)
    return key if key in TEMPERATURE else None


def by_paper_condition(sessions: Sequence) -> dict[str, list] | None:
    """The sessions per paper condition (in the paper's order, only those present), or None
    when some session is in none of them (a study with conditions of its own)."""
    if not sessions or any(paper_condition(s) is None for s in sessions):
        return None
    groups: dict[str, list] = {}
    for key in PAPER_CONDITIONS:
        members = [s for s in sessions if paper_condition(s) == key]
        if members:
            groups[label(*key)] = members
    return groups


def by_genre_and_condition(sessions: Sequence) -> dict[str, list] | None:
    """Each genre, then its two conditions, as the paper's §5.1.2 reports: `creative`,
    `creative, high (T .75)`, `creative, low (T .3)`, ...; None as `by_paper_condition`."""
    conditions = by_paper_condition(sessions)
    if conditions is None:
        return None
    groups: dict[str, list] = {}
    for genre in GENRES:
        members = [s for s in sessions if s.genre == genre]
        if members:
            groups[genre] = members
            groups.update({name: m for name, m in conditions.items() if name.startswith(genre + ",")})
    return groups
