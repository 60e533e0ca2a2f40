"""The workspace's navigation: named for a screen reader, and the link of the page being shown
marked as the current page."""

from __future__ import annotations

from html.parser import HTMLParser

from tests.review.conftest import log_in
from tests.review.test_web import next_submission, submitted, team  # noqa: F401  (fixtures)


class Navigation(HTMLParser):
    """The nav's attributes and, for each of its links, its text and aria-current."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.attributes: dict = {}
        self.links: list[list] = []  # [text, aria-current]
        self._inside = self._in_link = False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag == "nav":
            self.attributes, self._inside = dict(attrs), True
        elif tag == "a" and self._inside:
            self.links.append(["", dict(attrs).get("aria-current")])
            self._in_link = True

    def handle_endtag(self, tag):
        if tag == "nav":
            self._inside = False
        elif tag == "a":
            self._in_link = False

    def handle_data(self, data):
        if self._inside and self._in_link:
            self.links[-1][0] += data

    def current(self) -> list[str]:
        return [text for text, current in self.links if current == "page"]


def test_the_navigation_has_a_name_and_marks_the_page_being_shown(workspace, team, submitted):
    rita = log_in(workspace, "rita")
    for url, current in (
        ("/review/", ["My queue"]),
        ("/review/results", ["Outcomes & agreement"]),
        ("/review/results?status=passed", ["Outcomes & agreement"]),
        ("/review/audit", ["Audit log"]),
    ):
        nav = Navigation(rita.get(url).get_data(as_text=True))
        assert nav.attributes.get("aria-label") == "Workspace", url
        assert [text for text, _ in nav.links] == ["My queue", "Outcomes & agreement", "Audit log"]
        assert nav.current() == current, url


def test_a_page_outside_the_navigation_marks_no_link_current(workspace, team, submitted):
    ana = log_in(workspace, "ana")
    nav = Navigation(ana.get(f"/review/s/{next_submission(ana)}").get_data(as_text=True))
    assert nav.attributes.get("aria-label") == "Workspace"
    assert [text for text, _ in nav.links] == ["My queue"]  # a reviewer has no researcher pages
    assert nav.current() == []
    assert Navigation(ana.get("/review/").get_data(as_text=True)).current() == ["My queue"]
