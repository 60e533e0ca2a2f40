"""Conditions for a proactive study made from a CoAuthor one (used by `study demo --paradigm`).

MindCopilot's user study is within-subjects over L0-L3 with one backend (§5.3). The demo
keeps each genre's first condition (its model and decoding) and makes one condition per
paradigm from it, so consecutive writers of a genre rotate through them (a new session gets
the least-used condition of its prompt's genre).
"""

from __future__ import annotations

from dataclasses import replace

from study.config import Condition


def paradigm_conditions(conditions: tuple[Condition, ...], paradigms: tuple[str, ...]) -> tuple[Condition, ...]:
    out: list[Condition] = []
    seen: set[str] = set()
    for condition in conditions:
        if condition.genre in seen:
            continue
        seen.add(condition.genre)
        for paradigm in paradigms:
            # One suggestion at a time (currentN = 1): a ghost text, not a list.
            out.append(replace(condition, name=f"{condition.genre}-{paradigm}", paradigm=paradigm,
                               n=1 if paradigm != "L0" else condition.n))
    return tuple(out)
