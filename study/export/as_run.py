"""The paradigm each stored session ran with, which study.toml may no longer say.

A condition may keep its name while its `paradigm` is changed in study.toml (tab -> none, L1 ->
chat): its earlier sessions ran with the old one. Each session stores the paradigm it was given
with its condition (sessions.paradigm), and metadata.csv, the report and a release's card
describe it by that. A session begun before the paradigm was stored is the arm's current one,
unless something says the arm ran otherwise (other sessions of it, or the preregistration
record): then nobody can tell which its writer had, and the export is refused, naming the arm.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

from study.config import CONFIG_NAME, Condition, ConfigError, Study

# The preregistration record (study.plan.record, RECORD_NAME): read here as evidence of an arm's
# planned paradigm only, so the export does not depend on the plan package.
PREREGISTRATION = "preregistration.json"


def paradigm_of(study: Study, session: dict) -> str:
    """The paradigm `session` ran with: the one stored with it, else its condition's now."""
    return session.get("paradigm") or study.condition(session["condition"]).paradigm


def condition_as_run(study: Study, session: dict) -> Condition:
    """The session's condition as it ran: its settings today, with the paradigm it had."""
    condition = study.condition(session["condition"])
    ran = paradigm_of(study, session)
    return condition if ran == condition.paradigm else replace(condition, paradigm=ran)


def arm_paradigms(study: Study, sessions: list[dict]) -> dict[str, Counter]:
    """Condition name -> how many of `sessions` ran with each paradigm."""
    found: dict[str, Counter] = {}
    for session in sessions:
        if session.get("condition"):
            found.setdefault(session["condition"], Counter())[paradigm_of(study, session)] += 1
    return found


def check_known(study: Study, sessions: list[dict]) -> None:
    """Raise ConfigError when a session without a stored paradigm is of an arm whose paradigm
    changed (other sessions of it stored another, or the preregistration record has another)."""
    planned = _recorded_paradigms(study.directory)
    problems = []
    for condition in study.conditions:
        mine = [s for s in sessions if s.get("condition") == condition.name]
        unknown = sum(1 for s in mine if not s.get("paradigm"))
        if not unknown:
            continue
        other = Counter(s["paradigm"] for s in mine if s.get("paradigm") and s["paradigm"] != condition.paradigm)
        evidence = [f"{count} stored session(s) of it ran with '{paradigm}'" for paradigm, count in sorted(other.items())]
        if planned.get(condition.name, condition.paradigm) != condition.paradigm:
            evidence.append(f"the preregistration record has paradigm '{planned[condition.name]}'")
        if evidence:
            earlier = next(iter(other), None) or planned.get(condition.name)
            problems.append(
                f"{study.directory / CONFIG_NAME}: conditions: the entry with name = '{condition.name}' says "
                f"paradigm = '{condition.paradigm}', but {' and '.join(evidence)}; {unknown} stored session(s) "
                f"of it began before each session's paradigm was stored, so which one their writers had is "
                f"unknown. Fix: if they ran with '{earlier}', restore paradigm = \"{earlier}\" in that entry and "
                f"give '{condition.paradigm}' a [[conditions]] entry of its own name; sessions stored from now "
                f"on keep the paradigm they were given."
            )
    if problems:
        raise ConfigError("\n".join(problems))


def _recorded_paradigms(directory: Path) -> dict[str, str]:
    try:
        record = json.loads((directory / PREREGISTRATION).read_text(encoding="utf-8"))
        return {arm["name"]: arm["paradigm"] for arm in record["arms"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # no record, or not one: no evidence either way


def conditions_as_run(study: Study, sessions: list[dict]) -> tuple[Condition, ...]:
    """The study's conditions as `sessions` ran them, in study.toml's order: each with the
    paradigm its sessions had; an arm whose sessions ran with two (changed under its name after
    all its sessions then were complete) once per paradigm, the one it has now last; an arm
    without sessions as study.toml has it."""
    ran = arm_paradigms(study, sessions)
    found = []
    for condition in study.conditions:
        had = sorted(ran.get(condition.name, {condition.paradigm: 0}), key=lambda p: p == condition.paradigm)
        found += [condition if p == condition.paradigm else replace(condition, paradigm=p) for p in had]
    return tuple(found)


def study_as_run(study: Study, sessions: list[dict]) -> Study:
    """The study with its conditions as `sessions` ran them (for a release's card and arms.json)."""
    return replace(study, conditions=conditions_as_run(study, sessions))
