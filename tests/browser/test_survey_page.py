"""A survey page in the browser (study/static/survey.js): the questions it shows are the ones the
server asks and keeps (study.survey.answers)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from study import config
from tests.browser.participant import past_instructions

pytestmark = pytest.mark.browser

CHAIN = """
[[surveys]]
name = "background"
placement = "before_writing"
[[surveys.items]]
id = "writes"
type = "single"
text = "Do you write?"
options = ["Yes", "No"]
[[surveys.items]]
id = "how_often"
type = "single"
text = "How often?"
options = ["Often", "Rarely"]
show_if = { item = "writes", equals = "Yes" }
[[surveys.items]]
id = "what"
type = "text"
text = "What do you write?"
show_if = { item = "how_often", equals = "Often" }
"""


def test_a_follow_up_of_a_hidden_question_is_hidden_too(page, study_dir, task_server_factory):
    toml = study_dir / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + CHAIN, encoding="utf-8")
    server = task_server_factory(config.load(study_dir))
    past_instructions(page, server.url)
    page.wait_for_url("**/presurvey")
    how_often = page.locator('fieldset[data-question="how_often"]')
    what = page.locator('fieldset[data-question="what"]')
    page.get_by_label("Yes").check()
    page.get_by_label("Often").check()
    expect(what).to_be_visible()
    # "No": "How often?" goes, and with it its follow-up, which the server would neither ask
    # nor keep (its answer would be dropped).
    page.get_by_label("No").check()
    expect(how_often).to_be_hidden()
    expect(what).to_be_hidden()


BIPOLAR = """
[[surveys]]
name = "background"
placement = "before_writing"
[[surveys.items]]
id = "feeling"
type = "slider"
text = "How do you feel about AI help?"
min = -3
max = 3
bands = [
  { from = -3, to = -1, label = "against" },
  { from = 0, to = 0, label = "neutral" },
  { from = 1, to = 3, label = "for" },
]
"""


def test_a_slider_with_negative_values_names_the_band_the_value_is_in(page, study_dir, task_server_factory):
    toml = study_dir / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + BIPOLAR, encoding="utf-8")
    server = task_server_factory(config.load(study_dir))
    past_instructions(page, server.url)
    page.wait_for_url("**/presurvey")
    slider = page.get_by_test_id("slider-feeling")
    shown = page.get_by_test_id("slider-value-feeling")
    # Unmoved, it has no answer: its thumb rests at 0, which a screen reader said as if chosen.
    expect(shown).to_have_text("not rated yet")
    expect(slider).to_have_accessible_description("not rated yet")
    slider.focus()
    slider.press("ArrowLeft")  # from the middle, 0, to -1
    expect(shown).to_have_text("-1 (against)")
    expect(slider).to_have_accessible_description("-1 (against)")  # with its band
    slider.press("ArrowRight")
    expect(shown).to_have_text("0 (neutral)")
