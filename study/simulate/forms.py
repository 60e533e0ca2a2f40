"""The survey questions a page shows (templates/_survey_items.html), as a person reads them:
each fieldset[data-question] with its type, options or range, word minimum, and whether it is
shown only after another answer (data-show-if). The chat study's pages need this beyond
pages.read_page: sliders (a range input named only once moved), word minimums, and the
in-session rating panels (one form per survey, data-survey)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Question:
    id: str
    type: str  # likert | slider | single | multiple | text
    text: str = ""
    options: list[str] = field(default_factory=list)  # radio and checkbox values
    low: int = 1  # sliders
    high: int = 10
    min_words: int = 0
    show_if: dict | None = None  # {"item", "equals", "in", "at_least", "at_most"}
    survey: str = ""  # the enclosing form's data-survey, when there is one

    def shown(self, answers: dict[str, str]) -> bool:
        if not self.show_if:
            return True
        given = answers.get(self.show_if.get("item"))
        if given is None:
            return False
        if self.show_if.get("equals") is not None:
            return str(given) == str(self.show_if["equals"])
        if self.show_if.get("in"):
            return str(given) in [str(v) for v in self.show_if["in"]]
        number = float(given) if str(given).lstrip("-").isdigit() else None
        if number is None:
            return False
        at_least, at_most = self.show_if.get("at_least"), self.show_if.get("at_most")
        return (at_least is None or number >= at_least) and (at_most is None or number <= at_most)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.questions: list[Question] = []
        self._survey = ""
        self._current: Question | None = None
        self._legend: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._survey = attrs.get("data-survey", "")
        elif tag == "fieldset" and attrs.get("data-question"):
            show_if = json.loads(attrs["data-show-if"]) if attrs.get("data-show-if") else None
            self._current = Question(attrs["data-question"], attrs.get("data-type", "text"),
                                     show_if=show_if, survey=self._survey)  # fmt: skip
            self.questions.append(self._current)
        elif self._current is None:
            return
        elif tag == "legend":
            self._legend = []
        elif tag == "input" and attrs.get("type") in ("radio", "checkbox"):
            self._current.options.append(attrs.get("value", "on"))
        elif tag == "input" and attrs.get("type") == "range":
            self._current.low, self._current.high = int(attrs["min"]), int(attrs["max"])
        elif tag == "textarea" and attrs.get("data-min-words"):
            self._current.min_words = int(attrs["data-min-words"])

    def handle_endtag(self, tag):
        if tag == "legend" and self._legend is not None and self._current is not None:
            text = " ".join("".join(self._legend).split())
            self._current.text = text.removesuffix("(required)").strip()
            self._legend = None
        elif tag == "fieldset":
            self._current = None
        elif tag == "form":
            self._survey = ""

    def handle_data(self, data):
        if self._legend is not None:
            self._legend.append(data)


def questions(html: str) -> list[Question]:
    reader = _Reader()
    reader.feed(html)
    return reader.questions
