"""Text a participant must read stands out from its background by WCAG 1.4.3's 4.5:1, as
Chromium draws it (computed colours, not the stylesheet's words)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from study import config
from tests.browser.participant import start_writing, type_text
from tests.browser.test_screen_reader import proactive_study

pytestmark = pytest.mark.browser


def luminance(css_colour: str) -> float:
    """WCAG 2's relative luminance of an opaque "rgb(r, g, b)"."""
    red, green, blue = (int(part) / 255 for part in re.findall(r"\d+", css_colour)[:3])
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (red, green, blue)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_contrast_is_wcag_2s_ratio():
    assert contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21)
    assert contrast("rgb(118, 118, 118)", "rgb(255, 255, 255)") == pytest.approx(4.54, abs=0.01)


def test_ghost_text_is_as_readable_as_text_must_be(page, tmp_path, task_server_factory):
    # The writer reads the suggestion to decide whether to take it: it is text, not decoration.
    server = task_server_factory(config.load(proactive_study(tmp_path / "study")))
    start_writing(page, server.url)
    type_text(page, " The door opened")
    ghost = page.get_by_test_id("suggestion-ghost")
    expect(ghost).to_be_visible(timeout=8000)
    ink = ghost.evaluate("(element) => getComputedStyle(element).color")
    paper = page.get_by_test_id("editor").evaluate("(element) => getComputedStyle(element).backgroundColor")
    assert paper == "rgb(255, 255, 255)"  # the ghost is drawn over the editor's own background
    assert contrast(ink, paper) >= 4.5, (ink, paper)
