"""Within subjects (`[design] assignment = "within"`, study.server.within), an `end_of_study`
survey (study.survey.placement) is asked after the participant's last arm, in the session that
leaves no arm owed: Dhillon et al.'s and MindCopilot's post-study questions (which arm did you
prefer?) need every arm seen. Walked through the Flask test client on one real SQLite database.
Between subjects it stays in the first session that reaches the end
(tests/server/test_surveys.py::test_after_session_surveys_then_the_end_of_study_survey_once_per_participant)."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main as study_cli
from study.cli import write_study_files
from study.server import create_app
from study.store import make_engine, reading
from study.store import surveys as survey_store
from tests.conftest import CONTACT
from tests.report.test_mindcopilot_questionnaire import ITEMS
from tests.server.flow import start, to_survey, to_writing
from tests.server.study_edits import DHILLON_ARMS, conditions_given, dhillon_study, edit_arms, serve_again

PREFERRED = "Which of the sessions did you prefer?"
END = """
[[surveys]]
name = "goodbye"
placement = "end_of_study"
[[surveys.items]]
id = "preferred"
type = "text"
text = "Which of the sessions did you prefer?"
"""
AFTER_SESSION = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}


def _with_end_survey(folder, survey: str = END):
    toml = folder / config.CONFIG_NAME
    toml.write_text(toml.read_text(encoding="utf-8") + survey, encoding="utf-8")
    return folder


def _part(client, code: str, first: bool, proactive: bool = False) -> tuple[str, str]:
    """One session of the participant, every survey page answered: (session id, the pages)."""
    session_id = start(client, access_code=code, **({} if first else {"another": "1"}))
    to_writing(client, session_id, prompt=None)  # a prompt of their own for each arm
    to_survey(client, session_id, proactive=proactive)
    pages = []
    while (page := client.get(f"/s/{session_id}/survey")).status_code == 200:
        pages.append(page.get_data(as_text=True))
        # CoAuthor's questions, MindCopilot's Q1-Q10 where the study asks them, the end survey's.
        answers = {**AFTER_SESSION, **{item: "4" for item in ITEMS}, "preferred": "The last one"}
        assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
    assert page.location.endswith(f"/s/{session_id}/complete"), page.location
    return session_id, "".join(pages)


def _goodbyes(folder) -> set[str]:
    """The sessions whose stored answers hold the end-of-study survey."""
    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        found = {row["session_id"] for row in survey_store.all_responses(connection) if row["survey"] == "goodbye"}
    engine.dispose()
    return found


def test_three_arms_the_end_survey_follows_the_third_session_only_and_once(tmp_path):
    folder = _with_end_survey(dhillon_study(tmp_path))
    client = serve_again(folder)
    parts = [_part(client, "p1", first=part == 0) for part in range(3)]

    # Not after the first two arms, before the participant has seen them all...
    assert [PREFERRED in pages for _, pages in parts] == [False, False, True]
    last = parts[-1][0]
    # ...asked once, after the third, and stored with that session alone.
    assert _goodbyes(folder) == {last}
    assert client.get(f"/s/{last}/survey").location.endswith(f"/s/{last}/complete")
    assert "You have written every part of this study." in client.get(f"/s/{last}/complete").get_data(as_text=True)


def test_a_participant_who_stops_before_their_last_arm_is_not_asked(tmp_path):
    folder = _with_end_survey(dhillon_study(tmp_path))
    client = serve_again(folder)
    stopped = [_part(client, "p1", first=part == 0) for part in range(2)]
    assert not any(PREFERRED in pages for _, pages in stopped) and _goodbyes(folder) == set()


def test_the_report_says_the_end_question_came_after_the_last_arm_and_who_was_not_asked(tmp_path):
    folder = _with_end_survey(dhillon_study(tmp_path))
    client = serve_again(folder)
    for code, parts in (("p1", 3), ("p2", 2)):  # p2 stopped after two arms
        for part in range(parts):
            _part(client, code, first=part == 0)
    out = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    survey = out.read_text(encoding="utf-8").split("<h2>Survey results</h2>")[1].split("</section>")[0]
    blocks = dict(block.split("</h3>", 1) for block in survey.split("<h3>")[1:])
    note = blocks[PREFERRED].split("<table")[0]
    assert "Asked once per participant, after their last arm (end of study)" in note
    assert "a participant who stopped before their last arm was not asked it." in note
    # Answered by p1 alone, under their last arm; an after-session question has no such note.
    assert "<td>next-paragraph</td><td>1</td>" in blocks[PREFERRED] and "<td>no-ai</td><td>0</td>" in blocks[PREFERRED]
    assert "last arm" not in blocks["Are you a native English speaker?"]


def test_an_end_survey_limited_to_arms_follows_the_last_listed_arm_in_each_order(tmp_path):
    ai_arms = END.replace('placement = "end_of_study"',
                          'placement = "end_of_study"\narms = ["next-sentence", "next-paragraph"]')  # fmt: skip
    folder = _with_end_survey(dhillon_study(tmp_path), ai_arms)
    client = serve_again(folder)
    parts = {code: [_part(client, code, first=part == 0) for part in range(3)] for code in ("p1", "p2")}

    given = conditions_given(folder)
    assert [given[s] for s, _ in parts["p1"]] == ["no-ai", "next-sentence", "next-paragraph"]
    assert [given[s] for s, _ in parts["p2"]] == ["next-sentence", "next-paragraph", "no-ai"]
    # p2's last AI arm is their second session: asked there, not after the no-AI arm.
    assert [PREFERRED in pages for _, pages in parts["p1"]] == [False, False, True]
    assert [PREFERRED in pages for _, pages in parts["p2"]] == [False, True, False]


def test_a_participant_who_began_before_an_arm_was_added_is_asked_after_their_own_last_arm(tmp_path):
    folder = _with_end_survey(dhillon_study(tmp_path))
    client = serve_again(folder)
    first = _part(client, "p1", first=True)
    edit_arms(folder, lambda arms: [*arms, {**arms[1], "name": "next-two-sentences", "max_tokens": 60}])
    client = serve_again(folder)  # study.toml has four arms now; p1 keeps the three they began with
    parts = [first] + [_part(client, "p1", first=False) for _ in range(2)]

    assert sorted(conditions_given(folder).values()) == sorted(DHILLON_ARMS)
    assert [PREFERRED in pages for _, pages in parts] == [False, False, True]


def test_with_two_genres_the_end_survey_waits_for_the_other_genre_s_arms(tmp_path):
    # `study init`'s study: two arms of creative writing, two of argumentative. The completion
    # page offers the argumentative arms after the creative ones, so the study has not ended
    # for the participant when the first genre's sequence does.
    folder = tmp_path / "two-genres"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    _with_end_survey(folder, '\n[design]\nassignment = "within"\n' + END)
    client = serve_again(folder)
    parts = [_part(client, "p1", first=part == 0) for part in range(4)]

    given = conditions_given(folder)
    genres = [given[s].split("-")[0] for s, _ in parts]
    assert genres[0] == genres[1] and genres[2] == genres[3] and genres[0] != genres[2]
    assert [PREFERRED in pages for _, pages in parts] == [False, False, False, True]


def test_chat_and_ghost_text_arms_within_subjects_are_asked_after_the_last_arm(tmp_path):
    # RealHumanEval's arms (no model, autocomplete ghost text, a chat assistant's panel), given
    # within subjects: the arm's paradigm changes nothing about when the study ends.
    folder = tmp_path / "realhumaneval"
    write_study_files(folder, design="realhumaneval", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    toml = folder / config.CONFIG_NAME
    toml.write_text(toml.read_text(encoding="utf-8").replace('assignment = "between"', 'assignment = "within"'),
                    encoding="utf-8")  # fmt: skip
    _with_end_survey(folder)
    study = config.load(folder)
    assert study.assignment == "within"
    client = create_app(study, suggestion_engine=object()).test_client()
    # A study with a ghost-text arm has every record carry the proactive extension.
    parts = [_part(client, "p1", first=part == 0, proactive=True) for part in range(3)]

    given = conditions_given(folder)
    assert {study.condition(given[s]).paradigm for s, _ in parts} == {"none", "L1", "chat"}
    assert [PREFERRED in pages for _, pages in parts] == [False, False, True]


def test_mindcopilot_s_four_paradigms_ask_the_end_survey_after_the_fourth_session(tmp_path):
    # `study init --design mindcopilot`: L0 (an assistant panel) and L1-L3 (ghost text), each
    # followed by the Q1-Q10 questionnaire; the post-study questions come after all four.
    folder = tmp_path / "mindcopilot"
    write_study_files(folder, design="mindcopilot", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    _with_end_survey(folder)
    client = serve_again(folder)
    parts = [_part(client, "w1", first=part == 0, proactive=True) for part in range(4)]

    study, given = config.load(folder), conditions_given(folder)
    assert sorted(study.condition(given[s]).paradigm for s, _ in parts) == ["L0", "L1", "L2", "L3"]
    assert all('name="q1_mental_demand"' in pages for _, pages in parts)
    assert [PREFERRED in pages for _, pages in parts] == [False, False, False, True]


def _survey_pages(client, session_id: str) -> str:
    """Every survey page the session shows until its completion page, each answered."""
    pages = []
    while (page := client.get(f"/s/{session_id}/survey")).status_code == 200:
        pages.append(page.get_data(as_text=True))
        answers = {**AFTER_SESSION, "preferred": "The last one"}
        assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
    assert page.location.endswith(f"/s/{session_id}/complete"), page.location
    return "".join(pages)


def test_two_sessions_open_at_once_the_one_whose_writing_ends_last_carries_the_end_survey(tmp_path):
    # An MTurk worker with two of the study's assignments open in two tabs writes two arms at
    # once: both leave no arm unassigned, but only the one finished last follows every arm.
    folder = _with_end_survey(dhillon_study(tmp_path))
    client = serve_again(folder)
    worker = {"workerId": "A1TWOTABS0WORKER", "hitId": "3HITTWOTABS01", "turkSubmitTo": "https://www.mturk.com"}
    first = start(client, assignmentId="3ASSIGNTWOTABS1", **worker)
    to_writing(client, first, prompt=None)
    to_survey(client, first)
    assert PREFERRED not in _survey_pages(client, first)
    second, third = (start(client, assignmentId=f"3ASSIGNTWOTABS{n}", **worker) for n in (2, 3))
    for session_id in (second, third):
        to_writing(client, session_id, prompt=None)
    assert sorted(conditions_given(folder).values()) == sorted(DHILLON_ARMS)

    # The third tab's writing ends first: its own questions, not the end survey, for the second
    # tab's arm is still being written (whichever tab reaches its survey first).
    to_survey(client, third)
    to_survey(client, second)
    asked = {session_id: PREFERRED in _survey_pages(client, session_id) for session_id in (third, second)}

    assert asked == {third: False, second: True}
    assert _goodbyes(folder) == {second}
