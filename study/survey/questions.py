"""A survey and its questions as typed objects: what a `[[surveys]]` table, a preset or the
older `[[survey]]` list becomes once study.survey.definition has read and checked it (the format
is `schemas/survey.schema.json`). The pages, the answer checks and the exports read these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PLACEMENTS = ("before_writing", "after_session", "end_of_study", "in_session")
PARADIGMS = ("writing", "chat")
# The `[[survey]]` list's 7-point scale (CoAuthor App. C asked on 7-point Likert scales).
AGREE_LOW, AGREE_HIGH = "Strongly disagree", "Strongly agree"
DEFAULT_MAX_CHARS = 5000
LEGACY_NAME = "post_session"

@dataclass(frozen=True)
class Band:
    start: int
    end: int
    label: str
    description: str = ""


@dataclass(frozen=True)
class ShowIf:
    item: str
    equals: str | int | None = None
    any_of: tuple = ()
    at_least: float | None = None
    at_most: float | None = None


@dataclass(frozen=True)
class Item:
    id: str
    type: str  # likert | slider | single | multiple | text
    text: str
    required: bool = True
    page: int = 1
    help: str = ""
    group: str = ""
    points: int = 7
    labels: tuple[str, ...] = ()
    low: str = ""
    high: str = ""
    min: int = 1
    max: int = 10
    bands: tuple[Band, ...] = ()
    options: tuple[str, ...] = ()
    min_choices: int = 0
    max_choices: int | None = None
    min_words: int = 0
    max_chars: int = DEFAULT_MAX_CHARS
    rows: int = 3
    show_if: ShowIf | None = None

    @property
    def type_name(self) -> str:
        """The type as documentation names it: "likert7", "choice", "slider1-10", ..."""
        if self.type == "likert":
            return f"likert{self.points}"
        if self.type == "slider":
            return f"slider{self.min}-{self.max}"
        return {"single": "choice", "multiple": "multiple choice"}.get(self.type, self.type)

    def scale(self) -> list[int]:
        """The values a likert or slider answer may take."""
        if self.type == "likert":
            return list(range(1, self.points + 1))
        if self.type == "slider":
            return list(range(self.min, self.max + 1))
        return []

    def label(self, value: int) -> str:
        """The label of a likert point ("" when the item names only its ends)."""
        if self.labels and 1 <= value <= len(self.labels):
            return self.labels[value - 1]
        if value == self.scale()[0]:
            return self.low
        if value == self.scale()[-1]:
            return self.high
        return ""


@dataclass(frozen=True)
class Survey:
    name: str
    placement: str
    items: tuple[Item, ...]
    title: str = "A short survey"
    intro: str = ""
    every: int = 0
    paradigms: tuple[str, ...] = PARADIGMS
    # The arms ([[conditions]] names) whose sessions are asked it; empty: every arm.
    arms: tuple[str, ...] = ()
    source: str = ""
    submit: str = "Submit"
    raw: dict = field(repr=False, compare=False, default_factory=dict)

    @property
    def pages(self) -> int:
        return max(item.page for item in self.items)

    def page_items(self, page: int) -> list[Item]:
        return [item for item in self.items if item.page == page]

    def item(self, item_id: str) -> Item:
        return next(item for item in self.items if item.id == item_id)

    def asks_in(self, paradigm: str) -> bool:
        return paradigm in self.paradigms

    def asks_of(self, arm: str | None) -> bool:
        """Whether a session in `arm` is asked it; a session not yet given an arm (None) is
        asked only a survey of every arm."""
        return not self.arms or arm in self.arms
