"""The `[[rounds]]` and `[review]` sections of study.toml, as typed settings with the paper's
defaults.

schemas/study.schema.json defines the keys (README, "Configuration"); this module reads them from
`Study.raw`, as study.mturk.settings does for [mturk], and adds the checks a schema cannot
express (names used twice, prompts and rounds that do not exist). Errors name the key and the fix.

Defaults come from CoAuthor (Lee, Liang & Yang, CHI 2022), App. D: submissions rated on a 1-5
rubric, writers rated 4 or 5 qualified, writers who did not interact with the system
disqualified without review.
"""

from __future__ import annotations

from dataclasses import dataclass

from study.config import ConfigError, Study

QUALIFICATION, MAIN = "qualification", "main"
LEVELS = ("nominal", "ordinal", "interval")

# App. D's rubric, word for word; the labels are ours, for the buttons.
PAPER_RUBRIC = (
    (5, "Great", "A great story with a clear ending, or a great essay with a clear stance and conclusion"),
    (4, "Reasonable", "A reasonable story with a clear ending, or a reasonable essay with a clear stance and conclusion"),
    (3, "No clear ending", "A story without a clear ending, or an essay without a clear stance and conclusion"),
    (2, "Below average", "A below average story without an ending, or a below average essay without a clear stance and conclusion"),
    (1, "Spam", "Spam"),
)  # fmt: skip

# App. E: the first paragraph is the only difference between the rounds' instructions.
QUALIFICATION_NOTICE = (
    "This is a qualification round for writing with AI. You need to take part only once! "
    "It may take a few days before you hear whether you qualified, because we read every "
    "submission one by one."
)


@dataclass(frozen=True)
class Level:
    """One point of the rubric."""

    score: int
    label: str
    description: str


@dataclass(frozen=True)
class Round:
    """A round of the study: who may enter, which prompts, which instructions."""

    name: str
    kind: str  # qualification | main
    prompts: tuple[str, ...] = ()  # prompt codes; empty: every prompt
    instructions: str = ""  # a page template next to study.toml; "": [texts] instructions
    notice: str = ""  # shown above the instructions
    requires: str = ""  # main rounds: the qualification round writers must have passed
    default: bool = False  # entries without ?round= join this round

    @property
    def once_per_worker(self) -> bool:
        # App. D / E: "You need to participate only once for the qualification round!"
        return self.kind == QUALIFICATION


@dataclass(frozen=True)
class ReviewSettings:
    rounds: tuple[Round, ...]
    rubric: tuple[Level, ...]
    pass_mark: int = 4
    ratings_per_submission: int = 2
    # Ratings further apart than this (or on both sides of the pass mark) go to adjudication.
    max_spread: int = 1
    # Fewer requests for suggestions than this disqualify a session without review (App. D);
    # 0 turns the rule off. The same count as [mturk] min_ai_requests: pressing Tab.
    min_ai_requests: int = 1
    # An assignment nobody rated within this many hours no longer holds its place in the queue.
    assignment_hours: float = 24.0
    agreement_level: str = "ordinal"
    qualification: str = ""  # the MTurk qualification's name
    qualification_description: str = ""
    # `study qualify` pays (approves) the qualification HIT of submissions scored at least this.
    pay_min_score: int = 2

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(level.score for level in self.rubric)

    def round(self, name: str) -> Round:
        for found in self.rounds:
            if found.name == name:
                return found
        raise KeyError(name)

    @property
    def default_round(self) -> Round | None:
        """The round of entries without ?round= (and of sessions without a recorded round)."""
        if not self.rounds:
            return None
        return next((r for r in self.rounds if r.default), self.rounds[0])

    @property
    def reviewed_rounds(self) -> tuple[str, ...]:
        """Rounds whose submissions reviewers rate; () when the study declares no rounds, which
        means every finished session is reviewed (a study run as a qualification round)."""
        return tuple(r.name for r in self.rounds if r.kind == QUALIFICATION)


def from_study(study: Study) -> ReviewSettings:
    """The study's settings (cheap to build: read again wherever they are needed)."""
    source = study.directory / "study.toml"
    section = dict(study.raw.get("review", {}))
    try:
        rounds = tuple(_round(item) for item in study.raw.get("rounds", []))
    except (TypeError, KeyError) as error:
        raise ConfigError(
            f"{source}: rounds: {error}. Fix: see README, Configuration, [[rounds]]."
        ) from None
    rubric = tuple(
        Level(item["score"], item.get("label", str(item["score"])), item.get("description", ""))
        for item in section.pop("rubric", [])
    ) or tuple(Level(*level) for level in PAPER_RUBRIC)
    try:
        settings = ReviewSettings(
            rounds=rounds,
            rubric=tuple(sorted(rubric, key=lambda level: -level.score)),
            qualification=section.pop("qualification", "") or f"{study.name} qualified",
            qualification_description=section.pop("qualification_description", "")
            or f"Passed the qualification round of '{study.title}'; the value is the rubric score.",
            **section,
        )
    except TypeError as error:
        raise ConfigError(
            f"{source}: review: {error}. Fix: see README, Configuration, [review]."
        ) from None
    _check(settings, study, source)
    return settings


def _round(item: dict) -> Round:
    values = dict(item)
    values["prompts"] = tuple(values.get("prompts", ()))
    if values["kind"] == QUALIFICATION and "notice" not in values:
        values["notice"] = QUALIFICATION_NOTICE
    return Round(**values)


def _check(settings: ReviewSettings, study: Study, source) -> None:
    problems = []
    names = [r.name for r in settings.rounds]
    codes = {p.code for p in study.prompts}
    for i, found in enumerate(settings.rounds):
        where = f"{source}: rounds[{i}]"
        if names.count(found.name) > 1:
            problems.append(
                f"{where}.name: '{found.name}' is used twice. Fix: give every round its own name."
            )
        for code in found.prompts:
            if code not in codes:
                problems.append(
                    f"{where}.prompts: no prompt has the code '{code}'. "
                    "Fix: use codes from [[prompts]] or add that prompt."
                )
        if found.requires:
            required = next((r for r in settings.rounds if r.name == found.requires), None)
            if required is None or required.kind != QUALIFICATION:
                problems.append(
                    f"{where}.requires: '{found.requires}' is not a qualification round of this "
                    f"study. Fix: name one of {[r.name for r in settings.rounds if r.kind == QUALIFICATION]}."
                )
        if found.instructions and not (study.directory / found.instructions).is_file():
            problems.append(
                f"{where}.instructions: cannot read '{study.directory / found.instructions}'. "
                "Fix: create that file or remove the key to use [texts] instructions."
            )
    if sum(r.default for r in settings.rounds) > 1:
        problems.append(
            f"{source}: rounds: more than one round says default = true. Fix: keep one."
        )
    scores = settings.scores
    twice = sorted({score for score in scores if scores.count(score) > 1})
    if twice:
        problems.append(
            f"{source}: review.rubric: the score {', '.join(map(str, twice))} is used twice. "
            "Fix: one entry per score."
        )
    if not min(scores) <= settings.pass_mark <= max(scores):
        problems.append(
            f"{source}: review.pass_mark: {settings.pass_mark} is outside the rubric "
            f"({min(scores)}-{max(scores)}). Fix: choose a score of the rubric."
        )
    if settings.agreement_level not in LEVELS:
        problems.append(f"{source}: review.agreement_level: choose one of {', '.join(LEVELS)}.")
    if problems:
        raise ConfigError("\n".join(problems))
