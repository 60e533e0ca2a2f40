"""Reading the participant's pages as a person reads them: the form and its questions, the
prompt buttons, the writing page's boot data, the verification code.

The simulator fills in whatever form a page shows (checkboxes, radio groups, text areas), so
it keeps working when the pages' questions change (a new survey, other self-evaluation items).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Field:
    name: str
    kind: str  # radio | checkbox | textarea | text | hidden
    question: str = ""  # the fieldset's legend or the label's text
    options: list[str] = field(default_factory=list)  # radio values; a checkbox's value
    value: str = ""  # hidden and text inputs: their value


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fields: dict[str, Field] = {}
        self.buttons: list[tuple[str, str]] = []  # (name, value) of submit buttons
        self.scripts: dict[str, str] = {}  # id -> text of <script id=...>
        self.testids: dict[str, str] = {}  # data-testid -> text
        self._legend: str | None = None
        self._question = ""
        self._label = ""
        self._in_label = False
        self._label_field: Field | None = None
        self._capture: list[str] | None = None
        self._capture_key: tuple[str, str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag == "fieldset":
            self._question = ""
        elif tag == "legend":
            self._legend = ""
        elif tag == "label":
            self._in_label, self._label, self._label_field = True, "", None
        elif tag == "input":
            kind = attrs.get("type", "text")
            name = attrs.get("name")
            if not name or kind not in ("radio", "checkbox", "text", "hidden"):
                return
            entry = self.fields.setdefault(name, Field(name, kind, self._question))
            if kind in ("radio", "checkbox"):
                entry.options.append(attrs.get("value", "on"))
            else:
                entry.value = attrs.get("value", "")
            if self._in_label:
                self._label_field = entry
        elif tag == "textarea" and attrs.get("name"):
            self.fields.setdefault(attrs["name"], Field(attrs["name"], "textarea", self._question))
        elif tag == "button" and attrs.get("name"):
            self.buttons.append((attrs["name"], attrs.get("value", "")))
        elif tag == "script" and attrs.get("id"):
            self._capture, self._capture_key = [], ("script", attrs["id"])
        if attrs.get("data-testid") and tag not in ("input", "script"):
            self._capture, self._capture_key = [], ("testid", attrs["data-testid"])

    def handle_endtag(self, tag):
        if tag == "legend" and self._legend is not None:
            self._question, self._legend = " ".join(self._legend.split()), None
        elif tag == "label":
            field_ = self._label_field
            if field_ is not None and field_.kind == "checkbox" and not field_.question:
                field_.question = " ".join(self._label.split())
            self._in_label = False
        elif self._capture is not None and tag in ("script", "p", "button", "span", "div", "li", "a"):
            kind, key = self._capture_key
            text = "".join(self._capture)
            (self.scripts if kind == "script" else self.testids)[key] = text.strip()
            self._capture = self._capture_key = None

    def handle_data(self, data):
        if self._legend is not None:
            self._legend += data
        if self._in_label:
            self._label += data
        if self._capture is not None:
            self._capture.append(data)


@dataclass
class Page:
    fields: dict[str, Field]
    buttons: list[tuple[str, str]]
    scripts: dict[str, str]
    testids: dict[str, str]

    def boot(self) -> dict:
        """The writing page's boot data (sessionId, prompt, controls, the API's URLs)."""
        return json.loads(self.scripts["boot"])


def read_page(html: str) -> Page:
    parser = _PageParser()
    parser.feed(html)
    return Page(parser.fields, parser.buttons, parser.scripts, parser.testids)
