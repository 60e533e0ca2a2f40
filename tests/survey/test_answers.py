"""Checking answers: every item type, required/optional, word minimums and show-if."""

from __future__ import annotations

from study.survey.answers import check_page, visible, word_count
from study.survey.definition import from_mapping

SURVEY = from_mapping({
    "name": "s", "placement": "after_session",
    "items": [
        {"id": "agree", "type": "likert", "text": "Agree?", "points": 5},
        {"id": "rating", "type": "slider", "text": "Rate", "min": 1, "max": 10},
        {"id": "why", "type": "single", "text": "Why?", "options": ["Done", "Other reason"]},
        {"id": "why_other", "type": "text", "text": "Which?", "show_if": {"item": "why", "equals": "Other reason"}},
        {"id": "tools", "type": "multiple", "text": "Tools", "options": ["a", "b", "c"], "max_choices": 2, "required": False},
        {"id": "notes", "type": "text", "text": "Notes", "min_words": 3, "required": False},
        {"id": "more", "type": "text", "text": "More", "page": 2, "show_if": {"item": "rating", "at_most": 4}},
    ],
})  # fmt: skip


def test_valid_answers_are_typed_and_hidden_questions_dropped():
    form = {"agree": "4", "rating": "9", "why": "Done", "why_other": "sneaky", "tools": ["a", "c"], "notes": ""}
    answers, errors = check_page(SURVEY, 1, form)
    assert errors == {}
    assert answers == {"agree": 4, "rating": 9, "why": "Done", "tools": ["a", "c"]}
    assert not visible(SURVEY.item("more"), answers)  # page 2 asks only after a low rating


def test_each_problem_gets_its_own_message():
    form = {"agree": "6", "why": "Other reason", "tools": ["a", "b", "c"], "notes": "too short"}
    _, errors = check_page(SURVEY, 1, form)
    assert errors == {
        "agree": "Choose a point from 1 to 5.",
        "rating": "Move the slider to give a rating.",
        "why_other": "This question needs an answer.",
        "tools": "Choose at most 2.",
        "notes": "Please write at least 3 words (you wrote 2).",
    }


def test_show_if_reads_earlier_pages():
    answers, errors = check_page(SURVEY, 2, {"more": "it was slow"}, {"rating": 3})
    assert (answers, errors) == ({"more": "it was slow"}, {})
    assert check_page(SURVEY, 2, {}, {"rating": 3})[1] == {"more": "This question needs an answer."}
    assert check_page(SURVEY, 2, {"more": "x"}, {"rating": 8}) == ({}, {})


def test_words_are_runs_of_non_space():
    assert word_count("  one two\nthree\tfour ") == 4
    assert word_count("") == 0


def test_an_answer_the_text_box_let_through_is_not_refused_for_its_line_breaks():
    # A textarea's maxlength counts a line break as one character, but the browser posts each
    # as "\r\n" (HTML's form encoding; Chromium sends "abc\r\ndef" for "abc\ndef").
    survey = from_mapping({"name": "s", "placement": "after_session", "items": [
        {"id": "feedback", "type": "text", "text": "Feedback", "max_chars": 20},
    ]})  # fmt: skip
    typed = "Good tool.\nFast.\nOk"  # 20 characters in the box, which allowed no more
    answers, errors = check_page(survey, 1, {"feedback": typed.replace("\n", "\r\n")})
    assert errors == {}
    assert answers == {"feedback": typed}  # stored as the participant typed it


def test_an_option_written_with_a_space_at_its_end_can_be_chosen():
    # The page sends the option as study.toml writes it; a multiple choice's already matched.
    survey = from_mapping({"name": "s", "placement": "after_session", "items": [
        {"id": "native", "type": "single", "text": "Native speaker?", "options": ["Yes ", "No"]},
    ]})  # fmt: skip
    assert check_page(survey, 1, {"native": "Yes "}) == ({"native": "Yes "}, {})
