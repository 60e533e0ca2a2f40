"""The [mturk] section of study.toml, as typed settings with the paper's defaults.

schemas/study.schema.json defines the keys (README, "Configuration"); this module reads them from
`Study.raw`, so study.config stays independent of MTurk. Command-line options override them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from study.config import Study
from study.mturk import money

HOUR = 3600


class SettingsError(ValueError):
    pass


@dataclass(frozen=True)
class Requirement:
    """A qualification the study's workers must hold: a name made with `study mturk qual create`
    (resolved per environment, as sandbox and live ids differ) or a qualification type id."""

    qualification: str
    comparator: str = "Exists"
    values: tuple[int, ...] = ()


@dataclass(frozen=True)
class MTurkSettings:
    title: str
    description: str
    keywords: str = "writing, story, essay, AI"
    reward: Decimal | None = None
    assignment_minutes: int = 60
    lifetime_hours: int = 72
    auto_approve_hours: int = 72
    task_url: str = ""
    frame_height: int = 0
    budget: Decimal | None = None
    # App. D: approval rate > 97%, locale US, more than 10000 approved HITs.
    paper_requirements: bool = True
    qualifications: tuple[Requirement, ...] = field(default=())
    once_per_worker: bool = False
    min_ai_requests: int = 1
    # Characters the writer typed and kept (not the prompt, not accepted suggestions) for review
    # to propose approval; a session of Tab presses alone is not a writing session.
    min_writer_chars: int = 100
    approve_feedback: str = "Thank you for writing with us!"

    @property
    def assignment_seconds(self) -> int:
        return self.assignment_minutes * 60

    @property
    def lifetime_seconds(self) -> int:
        return self.lifetime_hours * HOUR

    @property
    def auto_approve_seconds(self) -> int:
        return self.auto_approve_hours * HOUR


def from_study(study: Study) -> MTurkSettings:
    section = dict(study.raw.get("mturk", {}))
    where = f"{study.directory / 'study.toml'}: mturk"
    try:
        reward = section.pop("reward", None)
        budget = section.pop("budget", "")
        requirements = tuple(
            Requirement(
                qualification=item.get("name") or item["id"],
                comparator=item.get("comparator", "Exists"),
                values=tuple(item.get("values", ())),
            )
            for item in section.pop("qualifications", [])
        )
        for index, requirement in enumerate(requirements):
            _check_requirement(requirement, f"{where}.qualifications[{index}]")
        return MTurkSettings(
            title=section.pop("title", study.title),
            description=section.pop(
                "description",
                f"Write with an AI assistant for at least {max(round(study.min_seconds / 60), 1)} "
                "minutes, then answer a short survey.",
            ),
            reward=money.parse_usd(reward, what=f"{where}.reward") if reward else _pay(study.pay),
            budget=money.parse_usd(budget, what=f"{where}.budget") if budget else None,
            qualifications=requirements,
            **section,
        )
    except money.MoneyError as error:
        raise SettingsError(str(error)) from None
    except (TypeError, KeyError) as error:
        raise SettingsError(f"{where}: {error}. Fix: see README, Configuration, [mturk].") from None


def _check_requirement(requirement: Requirement, where: str) -> None:
    """MTurk refuses a comparison without values and Exists/DoesNotExist with them; say so here,
    where the researcher wrote it, rather than in MTurk's words about the HIT type."""
    named = f"{where} ({requirement.qualification!r})"
    presence = requirement.comparator in ("Exists", "DoesNotExist")
    if presence and requirement.values:
        raise SettingsError(
            f"{named}: comparator {requirement.comparator} takes no values, got "
            f"{list(requirement.values)}. Fix: remove values, or pick a comparator such as "
            '"GreaterThanOrEqualTo".'
        )
    if not presence and not requirement.values:
        raise SettingsError(
            f"{named}: comparator {requirement.comparator} needs values to compare the worker's "
            "score with. Fix: add e.g. values = [1]."
        )


def _pay(pay: str) -> Decimal | None:
    """The consent page's `pay` ("$2.50") is the reward unless [mturk] says otherwise."""
    try:
        return money.parse_usd(pay) if pay else None
    except money.MoneyError:
        return None
