"""A Prolific participant in Chromium: from the study link Prolific hands out (the emulator's
take-part page) through the whole session on the real task server, to Prolific's completion
URL with the study's code; the researcher's sync then finds the submission matching."""

from __future__ import annotations

import tomllib

import pytest
import tomli_w
from playwright.sync_api import expect

from study import config
from study.prolific import client, settings, studies, submissions
from study.prolific.context import open_context
from study.prolific.emulator import State, serve_in_thread
from tests.browser.participant import consent_to_editor, finish_writing, type_text, wait_saved

pytestmark = pytest.mark.browser

PID = "5c0ffee5c0ffee5c0ffee5c0"


@pytest.fixture
def prolific(tmp_path):
    running = serve_in_thread(State(tmp_path / "prolific-emulator.json"))
    yield running
    running.stop()


def test_a_participant_goes_from_the_prolific_link_to_the_completion_redirect(page, study_dir, prolific,
                                                                              task_server_factory):  # fmt: skip
    path = study_dir / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["prolific"] = {"completion_url": prolific.url + "/submissions/complete", "reward": "2.50",
                        "estimated_minutes": 10}  # fmt: skip
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    study = config.load(study_dir)
    server = task_server_factory(study)
    ctx = open_context(study, settings.from_study(study), client.connect(prolific.api, prolific.state.token))
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 1, 10, server.url + "/task"))
    studies.publish(ctx, made["study_id"])

    # Prolific sends the participant to the study URL with its parameters filled in.
    page.goto(f"{prolific.url}/_emulator/take-part?study_id={made['study_id']}&participant_id={PID}")
    page.wait_for_url("**/consent")
    assert page.url.startswith(server.url)
    consent_to_editor(page)
    type_text(page, " The fog lifted over the harbour, and the boats came home one by one.")
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("suggestion").first).to_be_visible()
    page.keyboard.press("Enter")
    type_text(page, " Nobody on the quay said a word about the missing one, not even the harbourmaster.")
    wait_saved(page)
    finish_writing(page)
    for box in page.get_by_test_id("self-evaluation").all():
        box.check()
    page.get_by_test_id("next").click()
    page.wait_for_url("**/survey")
    for question in page.locator("fieldset[data-question]").all():
        radios = question.locator("input[type=radio]")
        if radios.count():
            radios.last.check()
        else:
            question.locator("textarea").fill("It was fun.")
    page.get_by_test_id("next").click()

    # The completion page sends them to Prolific with the study's completion code.
    page.wait_for_url(f"{prolific.url}/submissions/complete?cc={made['completion_code']}")
    expect(page.locator("body")).to_contain_text("Submission complete")
    assert page.page_errors == []

    report = submissions.sync(ctx)
    (found,) = report.submissions
    assert (found.participant_id, found.status, found.problems) == (PID, "AWAITING REVIEW", [])
    assert found.session["stage"] == "complete"
