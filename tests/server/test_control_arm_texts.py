"""What a participant reads in a study with a no-AI control arm (study.control_arm), through
`study init --design` and the Flask test client: the texts every arm shares (the HIT, its
preview, the study's title) promise no AI, the consent form and the instructions, read before
the arm is assigned, say the assistant may be there or not, the survey asks a control writer
nothing about an AI they did not have, and no page names the participant's arm (conditions are
blind)."""

from __future__ import annotations

import re
import tomllib

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.server import create_app
from tests.conftest import CONTACT
from tests.server.flow import post_init, start, to_writing

DESIGNS = ["jakesch", "dhillon", "realhumaneval"]  # each has a control arm, first in study.toml
PREVIEW = {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "3HIT0001"}
AI = re.compile(r"\bAI\b|\bassistant\b|the system", re.IGNORECASE)


def _visible(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<script.*?</script>|<[^>]+>", " ", page, flags=re.S))


@pytest.mark.parametrize("design", DESIGNS)
def test_study_init_with_a_control_arm_writes_a_hit_and_survey_that_fit_every_arm(tmp_path, design):
    folder = tmp_path / design
    result = CliRunner().invoke(main, ["init", str(folder), "--design", design])
    assert result.exit_code == 0, result.output
    data = tomllib.loads((folder / "study.toml").read_text(encoding="utf-8"))

    hit = data["mturk"]
    for text in (data["study"]["title"], hit["title"], hit["description"], hit["keywords"]):
        assert not AI.search(text), text
    (reuse,) = [item for item in data["survey"] if item["id"] == "reuse"]
    assert reuse["text"] == "If this writing tool, as I used it here, were available for free, I would use it again."


def test_study_init_without_a_control_arm_keeps_the_hit_about_the_ai(tmp_path):
    folder = tmp_path / "coauthor"
    assert CliRunner().invoke(main, ["init", str(folder)]).exit_code == 0
    data = tomllib.loads((folder / "study.toml").read_text(encoding="utf-8"))
    assert "AI" in data["mturk"]["description"]
    assert [item["text"] for item in data["survey"] if item["id"] == "reuse"] == [
        "If the system is available for free, I would reuse the system."]


@pytest.mark.parametrize("design", DESIGNS)
def test_a_control_writer_is_promised_and_asked_nothing_of_an_ai_and_never_told_their_arm(tmp_path, design):
    folder = tmp_path / design
    write_study_files(folder, design=design, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    study = config.load(folder)
    client = create_app(study, suggestion_engine=object()).test_client()

    preview = client.get("/task", query_string=PREVIEW).get_data(as_text=True)
    assert "This is a preview." in preview and not AI.search(_visible(preview))

    session_id = start(client, access_code="writer-1")  # the first writer: the control arm
    # Consent and instructions come before the arm is assigned: they are every arm's.
    before = {"consent": client.get(f"/s/{session_id}/consent").get_data(as_text=True)}
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    before["instructions"] = client.get(f"/s/{session_id}/instructions").get_data(as_text=True)
    consent, instructions = _visible(before["consent"]), _visible(before["instructions"])
    assert "Depending on the session, the editor may show suggestions" in consent
    assert "the editor shows suggestions" not in consent.lower()
    assert "the editor offers an AI-powered writing assistant or none: the writing page says which." in instructions
    assert "collaborate with the AI" not in instructions and "with an AI-powered" not in instructions
    to_writing(client, session_id, prompt=None)
    pages = {**before, "writing": client.get(f"/s/{session_id}/writing").get_data(as_text=True)}
    post_init(client, session_id)
    client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "Prompt.\n"})
    pages["evaluation"] = client.get(f"/s/{session_id}/evaluation").get_data(as_text=True)
    assert client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes"}).status_code == 302
    pages["survey"] = client.get(f"/s/{session_id}/survey").get_data(as_text=True)

    survey = _visible(pages["survey"])
    assert "I would use it again." in survey and not AI.search(survey)
    assert "there is no AI assistant in this session" in _visible(pages["writing"])  # told, not named
    for page in (preview, *pages.values()):
        assert study.title in page and not AI.search(study.title)
        for arm in study.conditions:  # the arm's name nowhere in the page, its data included
            assert not re.search(rf"(?<![\w-]){re.escape(arm.name)}(?![\w-])", page), arm.name
