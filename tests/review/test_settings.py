"""[[rounds]] and [review] in study.toml: the paper's defaults and errors a researcher can fix."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from study import config
from study.review import settings as review_settings
from tests.review.conftest import set_sections


def test_the_defaults_are_the_papers_rubric_pass_mark_and_disqualification(plain_study):
    settings = review_settings.from_study(plain_study)
    assert settings.scores == (5, 4, 3, 2, 1)
    assert settings.rubric[0].description.startswith("A great story with a clear ending")
    assert settings.rubric[-1].description == "Spam"
    assert (settings.pass_mark, settings.min_ai_requests, settings.ratings_per_submission) == (
        4,
        1,
        2,
    )
    assert settings.agreement_level == "ordinal"
    assert settings.qualification == "coauthor qualified"
    assert (
        settings.rounds == () and settings.default_round is None and settings.reviewed_rounds == ()
    )


def test_declared_rounds(review_study):
    settings = review_settings.from_study(review_study)
    qualification, main = settings.rounds
    assert qualification.once_per_worker and not main.once_per_worker
    assert qualification.prompts == ("shapeshifter", "screen") and main.prompts == ()
    assert "qualification round" in qualification.notice and main.notice == ""
    assert main.requires == "qualification"
    assert settings.default_round == qualification
    assert settings.reviewed_rounds == ("qualification",)


def test_a_custom_rubric_and_pass_mark(review_folder):
    set_sections(
        review_folder,
        review={
            "pass_mark": 2,
            "rubric": [
                {"score": 1, "label": "No", "description": "Not acceptable"},
                {"score": 2, "label": "Yes", "description": "Acceptable"},
            ],
        },
    )
    settings = review_settings.from_study(config.load(review_folder))
    assert settings.scores == (2, 1) and settings.pass_mark == 2


@pytest.mark.parametrize(
    ("rounds", "review", "message"),
    [
        (
            [{"name": "q", "kind": "qualification", "prompts": ["nope"]}],
            {},
            "rounds[0].prompts: no prompt has the code 'nope'",
        ),
        (
            [{"name": "m", "kind": "main", "requires": "q"}],
            {},
            "rounds[0].requires: 'q' is not a qualification round",
        ),
        ([{"name": "q", "kind": "qualification"}] * 2, {}, "rounds[1].name: 'q' is used twice"),
        (
            [{"name": "q", "kind": "qualification", "instructions": "missing.html"}],
            {},
            "rounds[0].instructions: cannot read",
        ),
        ([], {"pass_mark": 7}, "review.pass_mark: 7 is outside the rubric (1-5)"),
    ],
)
def test_mistakes_are_reported_with_the_key_and_the_fix(review_folder, rounds, review, message):
    set_sections(review_folder, rounds=rounds, review=review)
    with pytest.raises(config.ConfigError, match="Fix") as raised:
        review_settings.from_study(config.load(review_folder))
    assert message in str(raised.value)


def test_the_schema_rejects_unknown_round_keys(review_folder):
    set_sections(review_folder, rounds=[{"name": "q", "kind": "qualification", "colour": "red"}])
    with pytest.raises(config.ConfigError, match="unknown key 'colour'"):
        config.load(review_folder)


@pytest.mark.parametrize(
    ("review", "message"),
    [
        ({"max_spread": -1}, "review.max_spread: -1 is less than the minimum of 0. Fix: set it to "
         "the widest spread of one submission's ratings that needs no adjudication"),
        ({"min_ai_requests": -1}, "review.min_ai_requests: -1 is less than the minimum of 0. Fix: set "
         "it to the fewest AI requests a session needs to be reviewed"),
        ({"pay_min_score": "2"}, "review.pay_min_score: '2' is not of type 'integer'. Fix: set it to "
         "the lowest score whose qualification HIT `study qualify` pays"),
        ({"rubric": [{"score": 4, "description": "good"}, {"score": 4, "description": "fine"},
                     {"score": 1, "description": "spam"}]},
         "review.rubric: the score 4 is used twice. Fix: one entry per score"),
    ],
)
def test_a_wrong_review_value_s_fix_says_what_to_set_it_to(review_folder, review, message):
    """The fix reads as a sentence a researcher can follow (it is built from the schema's
    description of the key: "Fix: set it to <description>")."""
    set_sections(review_folder, review=review)
    with pytest.raises(config.ConfigError) as raised:
        review_settings.from_study(config.load(review_folder))
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("rounds", "review", "message"),
    [
        ([{"name": "q", "kind": "qualification", "prompts": ["shapeshiftr"]}], {},
         "rounds[0].prompts: no prompt has the code 'shapeshiftr'. Fix:"),
        ([], {"pass_mark": 7}, "review.pass_mark: 7 is outside the rubric (1-5)"),
    ],
)  # fmt: skip
def test_study_serve_refuses_a_round_or_review_mistake_before_anyone_enters(tmp_path, rounds, review, message):
    # Read only when a participant enters, such a mistake let `study serve` start and then
    # answered every /task with a 500, the reason in the server's log alone.
    from study.cli import write_study_files
    from tests.conftest import CONTACT

    folder = tmp_path / "study"
    write_study_files(folder, replacements=CONTACT)
    set_sections(folder, rounds=rounds, review=review)
    with socket.socket() as probe:  # a free port: the fixed 5000 may be another test's
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "study", "serve", str(folder), "--workers", "1", "--port", str(port)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("study serve took participants in with a study.toml it cannot serve")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"{folder / 'study.toml'}: {message}" in result.stderr
