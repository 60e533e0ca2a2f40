"""Exclusion rules fixed before launch: `[[plan.exclude]]`, which sessions the planned
comparisons leave out, checked by `study preregister` and applied by the report.

`[plan] exclusions` says in words which sessions will be left out; a rule says it so the
report can apply it, the same way to every arm, and no one can choose after seeing the data:

    [[plan.exclude]]
    name = "too short"             # how the report names it
    measure = "final_words"        # a per-session figure, as [[plan.outcomes]] take them
    below = 50                     # left out below 50 (and/or `above`)

    [[plan.exclude]]
    name = "failed the attention check"
    question = "attention"         # a survey question's id (single choice, likert or slider)
    answer_not_in = ["Blue"]       # left out unless they answered so (or `answer_in`: if they did)

A measure rule takes each session on its own value (a session with no value is not judged by
it). A survey rule takes the writer: a writer whose answer is excluded is left out with every
session of theirs, since in a within-subjects study one survey answer speaks for all their
arms; a session whose writer gave no answer is kept. The record holds the rules (study.plan.
record) and a rule changed afterwards is a deviation like any [plan] setting; the report counts
what each rule left out (study.report.plan). Pure but for `check`'s reading of the study.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from study.config import Study

BOUNDS = ("below", "above")
ANSWERS = ("answer_in", "answer_not_in")
ANSWERED_ONCE = ("single", "likert", "slider")  # one value per answer, which a rule can name


def check(study: Study, rules: list[dict], measures: list[str], source: str) -> list[str]:
    """What is wrong with the study's `[[plan.exclude]]` rules, each with the field and the fix."""
    items = {item.id: (survey, item) for survey in study.surveys for item in survey.items}
    problems, seen = [], set()
    for i, rule in enumerate(rules):
        at = f"{source}: plan.exclude[{i}]"
        if rule["name"] in seen:
            problems.append(f"{at}.name: {rule['name']!r} is used twice. Fix: give every [[plan.exclude]] "
                            "its own name, as the report counts each.")  # fmt: skip
        seen.add(rule["name"])
        if ("measure" in rule) == ("question" in rule):
            problems.append(f"{at}: a rule takes one `measure` or one survey `question`. Fix: give "
                            "exactly one of them.")  # fmt: skip
        elif "measure" in rule:
            problems += _measure_problems(at, rule, measures)
        else:
            problems += _question_problems(at, rule, items)
    return problems


def _measure_problems(at: str, rule: dict, measures: list[str]) -> list[str]:
    problems = []
    if rule["measure"] not in measures:
        problems.append(f"{at}.measure: {rule['measure']!r} is not a per-session figure the report "
                        f"computes. Fix: one of {', '.join(measures)}.")  # fmt: skip
    if not any(bound in rule for bound in BOUNDS) or any(key in rule for key in ANSWERS):
        problems.append(f"{at}: a measure is excluded by `below` and/or `above` (numbers), not by "
                        "answers. Fix: e.g. below = 50.")  # fmt: skip
    elif "below" in rule and "above" in rule and rule["below"] > rule["above"]:
        problems.append(f"{at}: below = {rule['below']} and above = {rule['above']} leave out every "
                        "session. Fix: below must not be more than above.")  # fmt: skip
    return problems


def _question_problems(at: str, rule: dict, items: dict) -> list[str]:
    if rule["question"] not in items:
        return [f"{at}.question: no survey asks a question with id {rule['question']!r}. Fix: one of "
                f"{sorted(items)}."]  # fmt: skip
    survey, item = items[rule["question"]]
    if item.type not in ANSWERED_ONCE or survey.placement == "in_session":
        why = "asked more than once in a session" if survey.placement == "in_session" else f"a {item.type} question"
        return [f"{at}.question: {item.id!r} is {why}, whose answers a rule cannot name. Fix: a "
                "single-choice, likert or slider question asked once."]  # fmt: skip
    if sum(key in rule for key in ANSWERS) != 1 or any(bound in rule for bound in BOUNDS):
        return [f"{at}: a question is excluded by one of answer_in or answer_not_in (a list of "
                "answers). Fix: e.g. answer_not_in = [\"the right answer\"]."]  # fmt: skip
    key = next(key for key in ANSWERS if key in rule)
    possible = [str(value) for value in (item.options or item.scale())]
    unknown = [answer for answer in rule[key] if _text(answer) not in possible]
    if unknown:
        # A misspelt answer would leave out everyone (answer_not_in) or no one (answer_in).
        return [f"{at}.{key}: {unknown} are not answers question {item.id!r} offers. Fix: one of {possible}."]
    return []


def left_out(rules: list[dict], values: Mapping[str, Mapping[str, float]],
             answers: Mapping[str, Mapping[str, object]], writer_of: Mapping[str, str],
             sessions: list[str]) -> list[tuple[str, set[str]]]:
    """Each rule's name and the `sessions` it leaves out. `values`: measure -> session -> value;
    `answers`: session -> question -> answer; `writer_of`: session -> writer ("" if unknown)."""
    found = []
    for rule in rules:
        if "measure" in rule:
            of_measure = values.get(rule["measure"], {})
            out = {s for s in sessions if _outside(of_measure.get(s), rule)}
        else:
            failed = {s for s in sessions if _fails(answers.get(s, {}).get(rule["question"]), rule)}
            writers = {writer_of.get(s, "") for s in failed} - {""}
            out = failed | {s for s in sessions if writer_of.get(s, "") in writers}
        found.append((rule["name"], out))
    return found


def _outside(value, rule: dict) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    return ("below" in rule and value < rule["below"]) or ("above" in rule and value > rule["above"])


def _fails(answer, rule: dict) -> bool:
    if answer is None or answer == "":
        return False
    if "answer_in" in rule:
        return _text(answer) in {_text(a) for a in rule["answer_in"]}
    return _text(answer) not in {_text(a) for a in rule["answer_not_in"]}


def _text(answer) -> str:
    """An answer as text, whole numbers without a decimal point (a survey.csv read back gives 5.0)."""
    if isinstance(answer, float) and answer.is_integer():
        return str(int(answer))
    return str(answer).strip()
