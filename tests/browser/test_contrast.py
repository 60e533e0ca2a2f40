"""Text a participant must read stands out from its background by WCAG 1.4.3's 4.5:1, as
Chromium draws it (computed colours, not the stylesheet's words)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from study import config
from study.cli import write_study_files
from tests.browser.conftest import CONTACT
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


def test_the_finish_button_reads_plainly_before_it_may_be_pressed(page, tmp_path, task_server_factory):
    # Disabled until the minimum time is over, its label still tells the writer what comes:
    # white on #8aa9c9 was 2.44:1. It must read as text does, and still look unlike a button
    # that works.
    folder = tmp_path / "study"
    write_study_files(folder, replacements=CONTACT)  # ten minutes' minimum: Finish stays disabled
    server = task_server_factory(config.load(folder))
    start_writing(page, server.url)
    finish = page.get_by_test_id("finish")
    expect(finish).to_be_disabled()
    style = "(element) => { const s = getComputedStyle(element); return [s.color, s.backgroundColor, s.borderStyle]; }"
    ink, face, edge = finish.evaluate(style)
    assert contrast(ink, face) >= 4.5, (ink, face)
    # Unlike the enabled button: another face (not the accent blue) and ink.
    enabled = page.evaluate("""() => {
        const probe = document.createElement("button");
        probe.textContent = "Probe";
        document.body.appendChild(probe);
        const s = getComputedStyle(probe);
        const seen = [s.color, s.backgroundColor, s.borderStyle];
        probe.remove();
        return seen;
    }""")
    assert contrast(enabled[0], enabled[1]) >= 4.5  # the working button reads too
    assert face != enabled[1] and ink != enabled[0] and edge != enabled[2], (ink, face, edge, enabled)
