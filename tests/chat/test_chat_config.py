"""`study init --paradigm chat` and the checks on [chat] and its intent bank."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from study import config
from study import config_texts
from study.cli import main as study_cli


def test_init_writes_a_ready_chat_study(tmp_path):
    result = CliRunner().invoke(study_cli, ["init", str(tmp_path / "c"), "--paradigm", "chat"])
    assert result.exit_code == 0, result.output
    study = config.load(tmp_path / "c")
    assert study.paradigm == "chat" and study.prompts == ()
    assert [d.label for d in study.chat.document_types] == ["Blog Post", "Creative Writing", "Personal Statement"]
    assert study.chat.min_exchanges == 8 and study.chat.prewriting_min_answers == 6
    periodic = next(s for s in study.surveys if s.placement == "in_session")
    assert periodic.every == 3 and periodic.items[0].scale() == list(range(1, 11))
    cyberpunk = study.chat.intent("creative_writing/39")
    assert cyberpunk.title == "Cyberpunk Mystery" and len(cyberpunk.questions) == 10


@pytest.mark.parametrize(
    "edit, expected",
    [
        (("min_exchanges = 8", "min_exchanges = -1"), "chat.min_exchanges: -1 is less than the minimum of 0. Fix:"),
        (('intent_bank = ""', 'intent_bank = "bank.toml"'), "chat.intent_bank: cannot read"),
        (('name = "blog_post"\nlabel = "Blog Post"', 'name = "blog_post"\nlabel = "Blog Post"\n\n[[chat.document_types]]\nname = "poem"\nlabel = "Poem"'),
         "no intent has type 'poem'. Fix: add [[intents]] with type = \"poem\"."),
        (('model = "collabllm-llama-3.1-8b"', 'model = "collabllm-llama-3.1-8b"\nmode = "completion"'),
         "conditions[2].mode: a chat study's assistants answer in chat mode."),
    ],
)
def test_bad_chat_settings_are_refused_with_the_fix(tmp_path, edit, expected):
    CliRunner().invoke(study_cli, ["init", str(tmp_path / "c"), "--paradigm", "chat"])
    toml = tmp_path / "c" / "study.toml"
    text = toml.read_text(encoding="utf-8")
    assert edit[0] in text
    toml.write_text(text.replace(edit[0], edit[1], 1), encoding="utf-8")
    with pytest.raises(config.ConfigError) as error:
        config.load(tmp_path / "c")
    assert expected in str(error.value)


def test_a_bank_file_with_an_unknown_type_names_the_file_and_entry(tmp_path):
    CliRunner().invoke(study_cli, ["init", str(tmp_path / "c"), "--paradigm", "chat"])
    (tmp_path / "c" / "bank.toml").write_text(
        '[[intents]]\ntype = "recipe"\nindex = 0\ntitle = "Soup"\ndescription = "A soup."\nquestions = ["Which?"]\n',
        encoding="utf-8",
    )
    toml = tmp_path / "c" / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('intent_bank = ""', 'intent_bank = "bank.toml"'), encoding="utf-8")
    with pytest.raises(config.ConfigError) as error:
        config.load(tmp_path / "c")
    assert f"{tmp_path / 'c' / 'bank.toml'}: intents[0].type: 'recipe' is not a document type." in str(error.value)


def test_a_writing_study_still_needs_prompts(study_folder):
    toml = study_folder / "study.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text[: text.index("[[prompts]]")], encoding="utf-8")
    with pytest.raises(config.ConfigError, match=r"the study has no \[\[prompts\]\]. Fix: add at least one"):
        config.load(study_folder)


def test_a_new_chat_study_is_not_served_until_its_consent_names_a_contact(tmp_path):
    """As the writing study: `study serve` refuses a consent page with no real person to reach."""
    folder = tmp_path / "chat"
    assert CliRunner().invoke(study_cli, ["init", str(folder), "--paradigm", "chat"]).exit_code == 0
    assert "consent.html" in config_texts.unfinished_consent(config.load(folder))  # what `study serve` checks
    consent = folder / "consent.html"
    consent.write_text(consent.read_text().replace(config_texts.CONSENT_CONTACT_PLACEHOLDER, "Dr. Ada Lovelace, ada@example.org"))
    assert config_texts.unfinished_consent(config.load(folder)) is None
