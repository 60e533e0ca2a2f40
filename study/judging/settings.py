"""The [judging] section of study.toml, as typed settings.

schemas/study.schema.json defines the keys (README, "Judging round"); this module reads them
from `Study.raw` as study.review.settings does for [review], and adds the checks a schema cannot
express. The rubric is the reviewers' ([review] rubric, by default CoAuthor App. D's 1-5 scale)
unless [judging] gives its own, so one study rates qualification submissions and collected texts
on the same scale unless the researcher decides otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from study.config import ConfigError, Study
from study.mturk import money
from study.review import settings as review_settings
from study.review.settings import Level

UNITS = ("document", "sentence")


@dataclass(frozen=True)
class JudgingSettings:
    unit: str = "document"
    k: int = 3  # judges per item
    items_per_task: int = 10  # study items a judge rates in one task (one HIT assignment)
    question: str = "How good is this text?"
    rubric: tuple[Level, ...] = ()
    gold: str = ""  # a JSON Lines file next to study.toml: {"text": ..., "score": ...} per line
    gold_per_task: int = 2
    # A gold rating counts as right within this distance of the known score.
    gold_tolerance: int = 1
    # A judge who gets fewer than this share of their gold items right is flagged.
    gold_min_correct: float = 0.75
    # Flagged judges' ratings are left out of the results, the report and the release.
    exclude_failed_gold: bool = True
    # Reject (not pay) a flagged judge's assignment; off by default: a judge who did the task
    # is paid, their ratings are simply not used.
    reject_failed_gold: bool = False
    min_chars: int = 1  # shorter sentences are not worth a judge's time
    reward: Decimal | None = None
    title: str = ""
    description: str = ""
    agreement_level: str = "ordinal"
    seed: int = 27

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(level.score for level in self.rubric)


def from_study(study: Study) -> JudgingSettings:
    source = study.directory / "study.toml"
    section = dict(study.raw.get("judging", {}))
    review = review_settings.from_study(study)
    rubric = tuple(
        Level(item["score"], item.get("label", str(item["score"])), item.get("description", ""))
        for item in section.pop("rubric", [])
    ) or review.rubric
    reward = section.pop("reward", None)
    try:
        settings = JudgingSettings(
            rubric=tuple(sorted(rubric, key=lambda level: -level.score)),
            reward=money.parse_usd(reward, what=f"{source}: judging.reward") if reward else None,
            title=section.pop("title", "") or f"Rate short texts ({study.title})",
            description=section.pop("description", "")
            or "Read short texts and rate each on a scale; a few have known answers.",
            agreement_level=section.pop("agreement_level", review.agreement_level),
            **section,
        )
    except money.MoneyError as error:
        raise ConfigError(f"{error}. Fix: write the pay as \"$1.00\".") from None
    except TypeError as error:
        raise ConfigError(f"{source}: judging: {error}. Fix: see README, Judging round.") from None
    problems = []
    if settings.unit not in UNITS:
        problems.append(f"{source}: judging.unit: choose one of {', '.join(UNITS)}, got {settings.unit!r}.")
    if len(set(settings.scores)) != len(settings.scores):
        problems.append(f"{source}: judging.rubric: a score is used twice. Fix: one entry per score.")
    if settings.gold and not (study.directory / settings.gold).is_file():
        problems.append(
            f"{source}: judging.gold: cannot read '{study.directory / settings.gold}'. "
            "Fix: create that file (one JSON object per line) or remove the key."
        )
    if problems:
        raise ConfigError("\n".join(problems))
    return settings
