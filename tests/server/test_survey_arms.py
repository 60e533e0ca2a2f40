"""A survey asked of some arms only (`arms` on a [[surveys]] table): a study with a no-AI control
arm asks "How helpful were the AI's suggestions?" of its AI arm alone, between and within
subjects; study.toml naming an arm the study lacks is refused; the export leaves the control
sessions' cells empty."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main as study_cli
from study.release.keys import init_keyfile
from study.server import create_app
from tests.report.conftest import Tables
from tests.server.flow import post_init, start, to_writing
from tests.server.test_control_arm import CONTROL, CREATIVE_LOW

AI_ONLY = """
[[surveys]]
name = "assistant"
placement = "after_session"
arms = ["creative-high"]
[[surveys.items]]
id = "ai_helpful"
type = "likert"
text = "How helpful were the AI's suggestions?"
"""
END_AI_ONLY = """
[[surveys]]
name = "goodbye"
placement = "end_of_study"
arms = ["creative-high"]
[[surveys.items]]
id = "ai_overall"
type = "likert"
text = "Over the whole study, how much did the AI help you?"
"""
LEGACY = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}


def _study(folder, extra: str, within: bool = False):
    """The init study with its creative-low arm a no-AI control (creative: control, high)."""
    toml = folder / "study.toml"
    text = toml.read_text(encoding="utf-8").replace(CREATIVE_LOW, CONTROL)
    if within:
        text += '\n[design]\nassignment = "within"\n'
    toml.write_text(text + extra, encoding="utf-8")
    return config.load(folder)


def _to_survey(client, session_id):
    post_init(client, session_id)
    client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "Prompt.\n"})
    client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes", "collaborated": "yes"})


def _survey_pages(client, session_id) -> list[str]:
    """Every survey page the session is shown until its completion page, each answered."""
    pages = []
    while True:
        page = client.get(f"/s/{session_id}/survey")
        if page.status_code == 302:
            assert page.location.endswith("/complete"), page.location
            return pages
        html = page.get_data(as_text=True)
        pages.append(html)
        answers = {**LEGACY, "ai_helpful": "6", "ai_overall": "5"}
        response = client.post(f"/s/{session_id}/survey", data=answers)
        assert response.status_code == 302, response.get_data(as_text=True)[:500]


def _condition(client, session_id) -> str:
    html = client.get(f"/s/{session_id}/writing").get_data(as_text=True)
    return "creative-control" if "there is no AI assistant in this session" in html else "creative-high"


def _between(study_folder, writers: int = 2) -> dict[str, list[tuple[str, list[str]]]]:
    """Arm -> (session id, survey pages shown) of each writer, in a between-subjects study."""
    client = create_app(_study(study_folder, AI_ONLY), suggestion_engine=object()).test_client()
    asked = {}
    for n in range(writers):
        session_id = start(client, access_code=f"lab-{n}")
        to_writing(client, session_id)  # creative sessions take turns: the control arm first, then AI
        arm = _condition(client, session_id)
        _to_survey(client, session_id)
        asked.setdefault(arm, []).append((session_id, _survey_pages(client, session_id)))
    return asked


def test_between_subjects_only_the_ai_arm_is_asked_the_ai_question_and_the_export_leaves_control_empty(
    study_folder, tmp_path
):
    asked = {arm: sessions[0] for arm, sessions in _between(study_folder).items()}
    control_id, control_pages = asked["creative-control"]
    ai_id, ai_pages = asked["creative-high"]
    assert not any("How helpful were the AI" in page for page in control_pages)
    assert len(control_pages) == 1 and "Are you a native English speaker?" in control_pages[0]
    assert len(ai_pages) == 2 and "How helpful were the AI&#39;s suggestions?" in ai_pages[1]

    out = tmp_path / "export"
    result = CliRunner().invoke(study_cli, ["export", str(study_folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = {r["session_id"]: r for r in csv.DictReader((out / "survey.csv").open(encoding="utf-8"))}
    # Not asked: an empty cell (a missing value), never a 0 a reader would average.
    assert rows[control_id]["ai_helpful"] == "" and rows[control_id]["ownership"] == "6"
    assert rows[ai_id]["ai_helpful"] == "6"


def test_the_report_reads_not_asked_for_the_control_arm_rather_than_a_figure(study_folder, tmp_path):
    _between(study_folder, writers=4)
    out = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(study_folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    tables = Tables(out.read_text(encoding="utf-8"))
    survey = tables.sections["survey"][-1]  # the last question: ai_helpful
    assert survey[0][:3] == ["condition", "answers", "mean [95% CI]"]
    rows = {row[0]: row[1:3] for row in survey[1:]}
    assert rows["creative-control"] == ["not asked", ""] and rows["creative-high"] == ["2", "6.00"]
    arms = tables.sections["arms"]
    column = arms[0][0].index("ai_helpful (survey)")
    per_arm = {row[0]: row[column] for row in arms[0][1:]}
    assert per_arm == {"creative-control": "not asked", "creative-high": "6.00"}
    difference = {row[0]: row[arms[1][0].index("ai_helpful (survey)")] for row in arms[1][1:]}
    assert difference == {"creative-high - creative-control": "not asked"}
    # A question every arm was asked still compares them.
    assert arms[0][0].index("ownership (survey)") and "not asked" not in arms[1][1][arms[1][0].index("ownership (survey)")]


def test_within_subjects_the_arm_s_survey_follows_its_own_session_and_the_end_survey_waits_for_a_listed_arm(
    study_folder, tmp_path
):
    client = create_app(_study(study_folder, AI_ONLY + END_AI_ONLY, within=True),
                        suggestion_engine=object()).test_client()  # fmt: skip
    seen = []
    for part in range(2):
        session_id = start(client, access_code="p1", **({"another": "1"} if part else {}))
        to_writing(client, session_id, prompt=None)
        arm = _condition(client, session_id)
        _to_survey(client, session_id)
        seen.append((arm, "".join(_survey_pages(client, session_id))))
    assert {arm for arm, _ in seen} == {"creative-control", "creative-high"}
    for arm, pages in seen:
        ai = arm == "creative-high"
        assert ("How helpful were the AI" in pages) is ai
        # Asked once, in the participant's session of a listed arm, whichever came first.
        assert ("Over the whole study, how much did the AI help you?" in pages) is ai

    out = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(study_folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (paired,) = [t for t in Tables(out.read_text(encoding="utf-8")).sections["within"]
                 if t[0][:2] == ["arms", "participants with both"]]  # fmt: skip
    row = dict(zip(paired[0], paired[1]))
    # No participant's own difference on a question one of the two arms never asked.
    assert row["ai_helpful (survey)"] == "not asked" and row["ownership (survey)"] != "not asked"


@pytest.mark.parametrize("arms, key, expected", [
    ('["creative-high", "creative-hihg"]', "surveys[0].arms[1]", "no arm named 'creative-hihg'"),
    ("[]", "surveys[0].arms", "an empty list asks survey 'assistant' in no arm"),
])  # fmt: skip
def test_an_unknown_or_empty_arm_list_is_refused_naming_the_key_the_study_s_arms_and_the_fix(
    study_folder, arms, key, expected
):
    with pytest.raises(config.ConfigError) as error:
        _study(study_folder, AI_ONLY.replace('["creative-high"]', arms))
    message = str(error.value)
    assert f"study.toml: {key}: " in message and expected in message
    assert "creative-control, creative-high, argumentative-low, argumentative-high" in message
    assert "Fix: " in message


def test_a_before_writing_survey_limited_to_arms_is_refused_as_asked_before_the_arm_is_known(study_folder):
    with pytest.raises(config.ConfigError):
        _study(study_folder, AI_ONLY.replace("after_session", "before_writing"))
    result = CliRunner().invoke(study_cli, ["status", str(study_folder)])
    assert result.exit_code != 0
    assert 'surveys[0].arms: a "before_writing" survey is asked before the session is given its arm' in result.output
    assert 'Fix: remove arms (ask it in every arm), or set placement = "after_session"' in result.output


def test_a_release_leaves_the_control_sessions_cells_empty_and_its_card_says_which_arms_were_asked(
    study_folder, tmp_path
):
    sessions = {arm: ids[0][0] for arm, ids in _between(study_folder).items()}
    key = init_keyfile(tmp_path / "study.key")
    result = CliRunner().invoke(study_cli, ["release", "build", str(study_folder), "--version", "1.0.0",
                                            "--out", str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    release = tmp_path / "releases" / "coauthor-1.0.0"
    rows = list(csv.DictReader((release / "survey.csv").open(encoding="utf-8")))
    by_arm = {}
    metadata = {r["session_id"]: r["condition"] for r in csv.DictReader((release / "metadata.csv").open())}
    for row in rows:
        by_arm[metadata[row["session_id"]]] = row
    assert set(by_arm) == set(sessions)
    assert by_arm["creative-control"]["ai_helpful"] == "" and by_arm["creative-high"]["ai_helpful"] == "6"
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "| id | question | type | asked in |" in card
    assert "| ai_helpful | How helpful were the AI's suggestions? | likert7 | creative-high |" in card
    assert "| ownership |" in card and "| every arm |" in card
