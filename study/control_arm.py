"""The control arm: a condition whose writers have no assistant (`paradigm = "none"`).

Jakesch et al. (CHI 2023) and Dhillon et al. (CHI 2024) compare writing with an assistant
against writing without one; an effect of the assistant is only measurable against that arm.
A control session has everything a writing session has (consent, instructions, the same editor
and its log, the timer, the surveys, completion) and nothing of the assistant: the page has no
suggestion control, the suggestion APIs refuse it before any model call, and its suggestion
figures read "not applicable" (a count of 0 would say the writer could ask and did not).

The arm belongs to the study's design, not to a paradigm (study/paradigms/none/ only declares
its condition value), so it sits in the core: the configuration, the server, the exports, the
report, MTurk review and releases all ask it. It imports nothing of the toolkit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

NO_ASSISTANT = "none"  # the value of a condition's `paradigm` in study.toml
NOT_APPLICABLE = "not applicable"
# metadata.csv columns that count suggestions: meaningless without an assistant.
SUGGESTION_COLUMNS = ("num_query", "num_selected", "perc_selected")
# CoAuthor's collaboration scores (§5.1.3), over event blocks of the writer and the model: with
# no model, equality would read 0 ("no turn change") and mutuality, whose printed sets count
# `insert` as interaction too, about 0.37 for a writer who could not interact at all.
COLLABORATION_SCORES = ("equality", "mutuality")
# Decoding settings a control condition may not set: it calls no model.
MODEL_KEYS = ("model", "mode", "n", "max_tokens", "temperature", "top_p", "presence_penalty",
              "frequency_penalty", "unit", "system_prompt")  # fmt: skip


def is_control(condition) -> bool:
    """True for a no-assistant condition (a study.config.Condition, or anything with `paradigm`)."""
    return getattr(condition, "paradigm", None) == NO_ASSISTANT


def control_names(conditions: Iterable) -> set[str]:
    return {c.name for c in conditions if is_control(c)}


def is_control_row(row: Mapping) -> bool:
    """A metadata.csv row (study export, a release) of a control session."""
    return str(row.get("paradigm") or "") == NO_ASSISTANT


def config_problems(conditions: list[Mapping], source) -> list[str]:
    """What is wrong with the [[conditions]] of a study.toml as far as the control arm goes:
    a control condition sets no model and no decoding setting; every other needs a model."""
    problems = []
    for i, condition in enumerate(conditions):
        if condition.get("paradigm") != NO_ASSISTANT:
            if "model" not in condition:
                problems.append(
                    f"{source}: conditions[{i}] is missing the key 'model'. Fix: add it (the model "
                    f'name the endpoint expects), or set paradigm = "{NO_ASSISTANT}" for a '
                    "control arm with no assistant."
                )
            continue
        settings = [key for key in MODEL_KEYS if key in condition]
        if settings:
            problems.append(
                f"{source}: conditions[{i}] ('{condition.get('name')}') has no assistant "
                f"(paradigm = \"{NO_ASSISTANT}\") but sets {', '.join(settings)}. Fix: remove "
                "them; a control condition calls no model."
            )
    return problems


def blank_suggestion_figures(row: dict) -> dict:
    """A metadata row of a control session with its suggestion counts empty (the release's
    missing value), not 0."""
    return {**row, **{column: "" for column in SUGGESTION_COLUMNS}}
