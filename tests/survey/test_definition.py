"""Surveys in study.toml: presets, files, and errors that name the key and the fix."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main
from study.survey.definition import presets


def _with(study_folder, text: str):
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n" + text, encoding="utf-8")
    return config.load(study_folder)


def test_the_four_instruments_are_shipped_and_valid(study_folder):
    assert {"coauthor-post-session", "mindcopilot-q1-q10", "collabllm-periodic", "collabllm-final"} <= set(presets())
    study = _with(study_folder, """
[[surveys]]
preset = "mindcopilot-q1-q10"
name = "mindcopilot"
placement = "after_session"
""")
    survey = next(s for s in study.surveys if s.name == "mindcopilot")
    q1 = survey.item("q1_mental_demand")
    assert q1.points == 7 and q1.labels[0] == "Very Bad" and q1.labels[-1] == "Very Good"
    assert [i.group for i in survey.items[:10]] == ["PW"] * 4 + ["US"] * 2 + ["CU"] * 2 + ["AD"] * 2
    # The legacy [[survey]] list is still the first survey, asked after each session.
    assert study.surveys[0].name == "post_session" and study.surveys[0].placement == "after_session"


def test_the_shipped_instruments_ask_what_the_papers_asked(study_folder, tmp_path):
    """MindCopilot Tab. 12-13 (spec A4): ten items, every one on the 7-point valence scale with
    Tab. 13's labels. CollabLLM App. E (spec B3), as `study init --paradigm chat` asks it: a 1-10
    slider every 3 exchanges, and a final survey of five questions (strengths, weaknesses, why
    the session ended with its four reasons, interaction and document ratings), both ratings in
    the five bands of the periodic one."""
    study = _with(study_folder, """
[[surveys]]
preset = "mindcopilot-q1-q10"
name = "mindcopilot"
""")
    mindcopilot = next(s for s in study.surveys if s.name == "mindcopilot")
    scale = ["Very Bad", "Bad", "Lightly Bad", "Moderate", "Lightly Good", "Good", "Very Good"]
    likert = [i for i in mindcopilot.items if i.type == "likert"]
    assert len(likert) == 10 and all(i.points == 7 and list(i.labels) == scale for i in likert)

    result = CliRunner().invoke(main, ["init", str(tmp_path / "chat"), "--paradigm", "chat"])
    assert result.exit_code == 0, result.output
    surveys = {s.name: s for s in config.load(tmp_path / "chat").surveys}
    bands = [(1, 2, "very poor"), (3, 4, "poor"), (5, 6, "average"), (7, 8, "good"), (9, 10, "very good")]
    periodic = surveys["periodic"]
    (rating,) = periodic.items
    assert (periodic.placement, periodic.every, rating.type, rating.min, rating.max) == ("in_session", 3, "slider", 1, 10)
    assert [(b.start, b.end, b.label) for b in rating.bands] == bands
    final = surveys["final"]
    asked = [i.id for i in final.items if i.show_if is None]
    assert asked == ["strengths", "weaknesses", "end_reason", "interaction_rating", "document_rating"]
    assert final.item("end_reason").options == ("I am satisfied with the document the AI created.",
                                                "I found the AI writing assistant not helpful.",
                                                "I encountered technical issues with the interface.", "Other reason")  # fmt: skip
    assert final.item("end_reason_other").show_if.equals == "Other reason"
    for item in ("interaction_rating", "document_rating"):
        assert [(b.start, b.end, b.label) for b in final.item(item).bands] == bands, item


def test_a_survey_can_live_in_its_own_file(study_folder):
    (study_folder / "pre.toml").write_text("""
title = "Before you start"
[[items]]
id = "experience"
type = "slider"
text = "How much do you write?"
min = 0
max = 5
""", encoding="utf-8")
    study = _with(study_folder, '[[surveys]]\nname = "pre"\nplacement = "before_writing"\nfile = "pre.toml"\n')
    pre = next(s for s in study.surveys if s.name == "pre")
    assert pre.title == "Before you start" and pre.item("experience").scale() == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    "table, expected",
    [
        ('name = "x"\nplacement = "after_session"\npreset = "nope"', "surveys[0].preset: unknown preset 'nope'. Fix: use one of"),
        ('name = "x"\nplacement = "sometimes"\n[[surveys.items]]\nid = "a"\ntype = "text"\ntext = "A?"',
         "surveys[0].placement: 'sometimes' is not one of"),
        ('name = "x"\nplacement = "after_session"\n[[surveys.items]]\nid = "a"\ntype = "likert"\ntext = "A?"\npoints = 12',
         "surveys[0].items[0].points: 12 is greater than the maximum of 11. Fix: for \"likert\", set it to the number of points, 2 to 11 (default 7)."),
        ('name = "x"\nplacement = "after_session"\n[[surveys.items]]\nid = "a"\ntype = "likert"\ntext = "A?"\npoints = 5\nlabels = ["a", "b"]',
         "surveys.x.items.a.labels: 2 labels for 5 points. Fix:"),
        ('name = "x"\nplacement = "in_session"\n[[surveys.items]]\nid = "a"\ntype = "text"\ntext = "A?"',
         "surveys.x.every: an in_session survey needs a cadence. Fix: add every = 3"),
        ('name = "x"\nplacement = "after_session"\n[[surveys.items]]\nid = "a"\ntype = "text"\ntext = "A?"\nshow_if = {item = "b", equals = "y"}',
         "surveys.x.items.a.show_if.item: 'b' is not an earlier question of this survey. Fix:"),
        # The page showed the follow-up (it reads "3" as 3) and the server dropped its answer.
        ('name = "x"\nplacement = "after_session"\n[[surveys.items]]\nid = "a"\ntype = "single"\ntext = "A?"\n'
         'options = ["1", "2", "3"]\n[[surveys.items]]\nid = "b"\ntype = "text"\ntext = "B?"\nshow_if = {item = "a", at_least = 2}',
         "surveys.x.items.b.show_if.at_least: 'a' is a \"single\" question, whose answer is not a number. Fix:"),
        ('name = "x"\nplacement = "after_session"\n[[surveys.items]]\nid = "ownership"\ntype = "text"\ntext = "A?"',
         "surveys.x.items.ownership: id 'ownership' is also a question of study.toml's [[survey]] list. "
         "Fix: remove the [[survey]] table with id = \"ownership\" (or the whole list, if this survey replaces it), "
         "or give this question another id."),
        ('name = "x"\nplacement = "after_session"\n[[surveys.items]]\nid = "a"\ntype = "single"\ntext = "A?"\ncolour = "red"',
         "surveys[0].items[0]: unknown key 'colour'. Fix: remove it"),
    ],
)
def test_bad_surveys_are_refused_with_the_key_and_the_fix(study_folder, table, expected):
    with pytest.raises(config.ConfigError) as error:
        _with(study_folder, "[[surveys]]\n" + table + "\n")
    assert expected in str(error.value)
    assert str(study_folder / "study.toml") in str(error.value)


LONG_ID = "how_satisfied_were_you_with_the_suggestions_the_assistant_gave_you_today"  # 72 characters


@pytest.mark.parametrize(
    "text, key",
    [
        (f'[[surveys]]\nname = "x"\nplacement = "after_session"\n[[surveys.items]]\nid = "{LONG_ID}"\ntype = "text"\ntext = "A?"',
         "surveys[0].items[0].id"),
        ('[[survey]]\nid = "_comments"\ntype = "text"\ntext = "A?"', ".id: '_comments'"),
        (f'[[surveys]]\nname = "{LONG_ID.replace("_", "-")}"\nplacement = "after_session"\n[[surveys.items]]\nid = "a"\ntype = "text"\ntext = "A?"',
         "surveys[0].name"),
    ],
)
def test_a_question_id_the_survey_form_cannot_carry_is_refused_at_load(study_folder, text, key):
    # The page's form names each answer by its question id, and the page by its survey's name,
    # and the form's declaration (schemas/api/pages.schema.json, surveyForm) takes at most 64
    # characters, an id not starting with '_': the participant's answers to any other were
    # refused ("form: unknown field") on every try, so the completion code was out of reach.
    with pytest.raises(config.ConfigError) as error:
        _with(study_folder, text + "\n")
    assert key in str(error.value)
    assert "at most 64" in str(error.value)


@pytest.mark.parametrize(
    "item, expected",
    [
        ('type = "multiple"\noptions = ["a", "b"]\nmin_choices = 3', "surveys.x.items.q.min_choices: 3 of 2 options"),
        ('type = "text"\nmax_chars = 10\nmin_words = 20', "surveys.x.items.q.min_words: 20 words do not fit in max_chars = 10"),
    ],
)
def test_a_question_no_answer_can_satisfy_is_refused_at_load(study_folder, item, expected):
    # Every answer the participant could give was refused ("Choose at least 3.", or a text box
    # that stops taking characters before the word minimum): they were held at the survey,
    # without their completion code, until they gave up.
    with pytest.raises(config.ConfigError) as error:
        _with(study_folder, f'[[surveys]]\nname = "x"\nplacement = "after_session"\n[[surveys.items]]\nid = "q"\ntext = "Q?"\n{item}\n')
    assert expected in str(error.value) and "Fix:" in str(error.value)
    assert str(study_folder / "study.toml") in str(error.value)


@pytest.mark.parametrize(
    "rule, expected",
    [
        ('{item = "a", equals = "yes"}', "surveys.x.items.b.show_if.equals: 'yes' is not an answer of 'a'"),
        ('{item = "a", in = ["Yes", "Sometimes"]}', "surveys.x.items.b.show_if.in: 'Sometimes' is not an answer of 'a'"),
    ],
)
def test_a_follow_up_shown_on_an_answer_the_question_does_not_offer_is_refused_at_load(study_folder, rule, expected):
    # "yes" for the option "Yes": no participant could ever see the follow-up, and its column
    # stayed empty without a word until the analysis.
    with pytest.raises(config.ConfigError) as error:
        _with(study_folder, '[[surveys]]\nname = "x"\nplacement = "after_session"\n'
              '[[surveys.items]]\nid = "a"\ntype = "single"\ntext = "A?"\noptions = ["Yes", "No"]\n'
              f'[[surveys.items]]\nid = "b"\ntype = "text"\ntext = "B?"\nshow_if = {rule}\n')
    assert expected in str(error.value) and "Fix:" in str(error.value)


@pytest.mark.parametrize(
    "table, expected",
    [
        ('name = "x"\nplacement = "in_session"\nevery = 3\n[[surveys.items]]\nid = "a"\ntype = "likert"\ntext = "A?"',
         "surveys.x.placement: \"in_session\" surveys are asked between a chat study's exchanges"),
        ('name = "x"\nplacement = "after_session"\nparadigms = ["chat"]\n[[surveys.items]]\nid = "a"\ntype = "text"\ntext = "A?"',
         "surveys.x.paradigms: [\"chat\"] leaves out this writing study"),
        ('preset = "collabllm-final"\nname = "x"\nplacement = "after_session"',
         "surveys.x.paradigms: [\"chat\"] leaves out this writing study"),
    ],
)
def test_a_survey_the_study_would_never_ask_is_refused_at_load(study_folder, table, expected):
    # The study started and ran to its end without asking it: no page, no answer, no column,
    # and nothing said so until the analysis.
    with pytest.raises(config.ConfigError) as error:
        _with(study_folder, "[[surveys]]\n" + table + "\n")
    assert expected in str(error.value) and "Fix:" in str(error.value)
    assert str(study_folder / "study.toml") in str(error.value)
