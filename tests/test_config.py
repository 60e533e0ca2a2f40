"""study init writes a ready CoAuthor study; bad configs get errors naming file, key and fix."""

from __future__ import annotations

import importlib.util
import re

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main


def test_init_writes_the_papers_study(tmp_path):
    result = CliRunner().invoke(main, ["init", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    study = config.load(tmp_path / "s")

    assert len(study.prompts) == 20
    genres = [p.genre for p in study.prompts]
    assert genres.count("creative") == 10 and genres.count("argumentative") == 10
    assert {"shapeshifter", "reincarnation", "isolation", "animal", "news"} <= {
        p.code for p in study.prompts
    }
    for prompt in study.prompts:
        if prompt.genre == "argumentative":
            assert prompt.text.rstrip().endswith("In my opinion,"), prompt.code

    by_name = {c.name: c for c in study.conditions}
    assert [(c.genre, c.temperature, c.frequency_penalty) for c in study.conditions] == [
        ("creative", 0.3, 0),
        ("creative", 0.75, 1),
        ("argumentative", 0.2, 0.5),
        ("argumentative", 0.9, 0.5),
    ]
    for condition in by_name.values():
        assert (condition.n, condition.max_tokens, condition.top_p, condition.presence_penalty) == (
            5, 30, 1, 0,
        )
    assert study.min_seconds == 600
    assert study.database_url.endswith("study.db")
    assert "consent" in study.consent_template.lower()
    assert "fuck" in study.suggestions.blocklist


def test_init_refuses_to_overwrite(tmp_path):
    CliRunner().invoke(main, ["init", str(tmp_path)])
    result = CliRunner().invoke(main, ["init", str(tmp_path)])
    assert result.exit_code != 0
    assert "already exists" in result.output


def test_controls_are_the_release_strings(study):
    assert study.condition("argumentative-high").controls() == {
        "currentN": "5",
        "currentMaxToken": "30",
        "currentTemperature": "0.9",
        "currentTopP": "1",
        "currentPresencePenalty": "0",
        "currentFrequencyPenalty": "0.5",
    }


def _edit(folder, old, new):
    path = folder / "study.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("temperature = 0.3", "temperature = 7", r"conditions\[0\]\.temperature: 7 is greater than the maximum of 2\. Fix: set it to the sampling temperature, 0 to 2"),
        ("min_seconds = 0", 'min_seconds = "ten"', r"session\.min_seconds: 'ten' is not of type 'integer'\. Fix: .*whole number"),
        ("max_per_prompt = 5", "max_prompts = 5", r"unknown key 'max_prompts' in \[session\]\. Fix: remove it or correct its spelling"),
        ('genre = "creative"\ntext', 'genre = "poetry"\ntext', r"prompts\[0\]\.genre: no condition serves genre 'poetry'"),
        ('endpoint = ""', 'endpoint = "localhost:8000"', r"suggestions\.endpoint: .*http:// or https://"),
        ('name = "creative-high"', 'name = "creative-low"', r"conditions\[1\]\.name: 'creative-low' is used twice"),
        ('consent = "consent.html"', 'consent = "missing.html"', r"texts\.consent: cannot read .*missing\.html"),
        ("[session]", "[session\n", r"not valid TOML"),
        # Closing an arm mid-study: "no" is a string, not false; the message names the arm.
        ('name = "creative-high"', 'name = "creative-high"\nassign = "no"',
         r"conditions\[1\] \('creative-high'\)\.assign: 'no' is not of type 'boolean'\. Fix: set it to true .* or false \(closed to new participants"),
        # How much of an output a suggestion keeps: a misspelt unit names the arm and the two units.
        ('name = "creative-high"', 'name = "creative-high"\nunit = "paragraphs"',
         r"conditions\[1\] \('creative-high'\)\.unit: 'paragraphs' is not one of \['sentence', 'paragraph'\]\. "
         r"Fix: set it to .*\"sentence\" .* or \"paragraph\""),
    ],
)
def test_config_errors_name_file_key_and_fix(study_folder, old, new, expected):
    _edit(study_folder, old, new)
    with pytest.raises(config.ConfigError) as error:
        config.load(study_folder)
    message = str(error.value)
    assert str(study_folder / "study.toml") in message
    assert re.search(expected, message), message


def test_serve_reports_config_errors_without_a_traceback(study_folder):
    _edit(study_folder, "temperature = 0.3", "temperature = -1")
    result = CliRunner().invoke(main, ["serve", str(study_folder)])
    assert result.exit_code != 0
    assert "conditions[0].temperature" in result.output
    assert "Traceback" not in result.output


def test_an_arm_of_a_genre_no_prompt_has_is_refused_rather_than_never_assigned(study_folder):
    # The balanced rule gives each session an arm of its prompt's genre: a typo'd genre left
    # the arm without a writer, and `study serve` started without a word.
    _edit(study_folder, 'name = "argumentative-low"\ngenre = "argumentative"',
          'name = "argumentative-low"\ngenre = "argumentativ"')
    result = CliRunner().invoke(main, ["status", str(study_folder)])
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert (f"{study_folder / 'study.toml'}: conditions[2].genre: no prompt has genre 'argumentativ', so "
            "condition 'argumentative-low' would never be given to a writer. Fix: use one of "
            "['argumentative', 'creative'] or add [[prompts]] of that genre.") in said


def test_missing_study_toml_says_how_to_create_one(tmp_path):
    with pytest.raises(config.ConfigError, match="study init"):
        config.load(tmp_path)


def test_a_prompt_whose_text_is_blank_is_refused_with_the_fix(tmp_path):
    # A prompt of spaces passes "at least one character"; the prompt list, the reviewers'
    # workspace and a release's tables would then fail on its first line.
    from study.cli import write_study_files

    folder = tmp_path / "study"
    write_study_files(folder)
    path = folder / "study.toml"
    text = path.read_text()
    start = text.index('text = """', text.index('code = "reincarnation"'))
    end = text.index('"""', start + len('text = """')) + 3
    path.write_text(text[:start] + 'text = """\n   \n"""' + text[end:])
    with pytest.raises(config.ConfigError) as error:
        config.load(folder)
    message = str(error.value)
    assert f"{path}: prompts[1].text" in message and "reincarnation" in message and "Fix:" in message


def test_a_chat_study_asking_for_a_within_subjects_design_is_refused_with_the_fix(tmp_path):
    # A chat study takes its own path, which gives each session one assistant (between
    # subjects): "within" would be ignored, and each participant would meet one assistant only.
    from study.cli import write_study_files

    folder = tmp_path / "chat"
    write_study_files(folder, paradigm="chat")
    path = folder / "study.toml"
    path.write_text(path.read_text() + '\n[design]\nassignment = "within"\n')
    with pytest.raises(config.ConfigError) as error:
        config.load(folder)
    message = str(error.value)
    assert f"{path}: design.assignment" in message
    assert "Fix: remove [design]" in message


def test_a_within_design_with_fewer_prompt_places_than_arms_is_refused_with_the_fix(tmp_path):
    # Three arms, one prompt a writer may take once: the completion page of the first part
    # would promise two more parts that the prompt page then refuses.
    import tomllib

    import tomli_w

    from study.cli import write_study_files

    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon", replacements={"max_per_prompt = 5": "max_per_prompt = 1"})
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text())
    data["prompts"] = data["prompts"][:1]
    path.write_text(tomli_w.dumps(data))
    with pytest.raises(config.ConfigError) as error:
        config.load(folder)
    message = str(error.value)
    assert f"{path}: session.max_per_prompt" in message
    assert "3 arms" in message and "Fix:" in message


@pytest.mark.parametrize(("section", "key"), [("mturk", "once_per_worker"), ("prolific", "once_per_participant")])
def test_a_within_design_that_allows_one_session_per_participant_is_refused_with_the_fix(tmp_path, section, key):
    # Within subjects each participant writes once in every arm; one session per participant
    # would make every participant write in one arm only, between subjects without a word.
    import tomllib

    import tomli_w

    from study.cli import write_study_files

    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon")
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text())
    data.setdefault(section, {})[key] = True
    path.write_text(tomli_w.dumps(data))
    with pytest.raises(config.ConfigError) as error:
        config.load(folder)
    message = str(error.value)
    assert f"{path}: {section}.{key}" in message and "Fix:" in message


@pytest.mark.parametrize(("section", "key"), [("mturk", "once_per_worker"), ("prolific", "once_per_participant")])
def test_a_main_round_for_qualified_writers_with_one_session_per_participant_is_refused_with_the_fix(
    tmp_path, section, key
):
    # Every writer a main round admits has taken part already (in its qualification round): one
    # session per participant turned each of them away (and the exclusion qualification or the
    # "done" group hid the main round's HITs from them), so the main round never had a writer.
    import tomllib

    import tomli_w

    from study.cli import write_study_files

    folder = tmp_path / "coauthor"
    write_study_files(folder)
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text())
    data["rounds"] = [
        {"name": "qualification", "kind": "qualification"},
        {"name": "main", "kind": "main", "requires": "qualification"},
    ]
    data.setdefault(section, {})[key] = True
    path.write_text(tomli_w.dumps(data))
    with pytest.raises(config.ConfigError) as error:
        config.load(folder)
    message = str(error.value)
    assert f"{path}: {section}.{key}" in message and "'main'" in message and "Fix:" in message


LONG_CODE = "a-woman-has-lived-alone-in-the-woods-for-ten-years-until-one-day-a-knock"  # 72


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('code = "shapeshifter"', f'code = "{LONG_CODE}"', r"prompts\[0\]\.code: .*at most 64 characters"),
        ("[session]", f'[[rounds]]\nname = "{LONG_CODE}"\nkind = "main"\n\n[session]', r"rounds\[0\]\.name: .*at most 64 characters"),
    ],
)
def test_a_name_the_participants_pages_cannot_carry_is_refused_at_load(study_folder, old, new, expected):
    # The prompt page posts the chosen prompt's code, and a round's link carries ?round=NAME,
    # each declared at most 64 characters (schemas/api/pages.schema.json): a longer code could
    # never be chosen ("form.prompt: must have at most 64 characters"), and a longer round's
    # link let no one in.
    _edit(study_folder, old, new)
    with pytest.raises(config.ConfigError) as error:
        config.load(study_folder)
    assert re.search(expected, str(error.value)), str(error.value)


def test_more_concurrent_model_calls_than_a_server_can_hold_threads_for_is_refused(study_folder):
    # Each call in flight holds a thread and a database connection on the worker it lands on
    # (study.server.serving.model_call_threads): 100,000 would start the server with 100,016
    # threads' worth of connection pool and file handles a worker.
    _edit(study_folder, "[suggestions]\n", "[suggestions]\nconcurrent_requests = 100000\n")
    with pytest.raises(config.ConfigError) as error:
        config.load(study_folder)
    assert re.search(r"suggestions\.concurrent_requests: 100000 is greater than the maximum of 1000\. Fix: .*1 to 1000",
                     str(error.value)), error.value


@pytest.mark.parametrize(("page", "broken"), [("consent", "{{ pay }"), ("instructions", "{% endif %}")])
def test_a_page_text_with_a_template_mistake_is_refused_at_load_naming_its_line(study_folder, page, broken):
    # The consent and instructions pages are Jinja templates the researcher edits: a mistake in
    # one used to pass `study serve` and answer every participant's page with "500 Internal
    # Server Error".
    path = study_folder / f"{page}.html"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, broken, *lines]) + "\n", encoding="utf-8")
    with pytest.raises(config.ConfigError) as error:
        config.load(study_folder)
    message = str(error.value)
    assert str(study_folder / "study.toml") in message and f"texts.{page}" in message
    assert f"{path} line {len(lines) + 1}" in message and "Fix:" in message


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgres://study:s3cret@localhost/study", r"study\.database: .*postgres.*Fix: .*postgresql\+psycopg://"),
        ("postgres://study@localhost/study?password=s3cret", r"study\.database: .*postgres.*Fix: .*postgresql\+psycopg://"),
        ("study.db", r"study\.database: .*is not a database URL.*Fix: "),
        ("postgresql://study:s3cret@localhost:5432x/study", r"study\.database: .*is not a database URL.*Fix: "),
        pytest.param("postgresql+psycopg2://study:s3cret@localhost/study",
                     r"study\.database: .*needs the driver 'psycopg2'.*Fix: start it with postgresql\+psycopg://",
                     marks=pytest.mark.skipif(importlib.util.find_spec("psycopg2") is not None,
                                              reason="psycopg2 is installed here")),
    ],
)
@pytest.mark.parametrize("command", ["status", "serve"])
def test_a_database_url_sqlalchemy_cannot_use_is_refused_naming_the_key_and_the_fix(study_folder, url, expected, command):
    # "postgres://" is how Heroku and many hosts print a PostgreSQL address; SQLAlchemy wants
    # "postgresql+psycopg://". Both ended in a traceback (NoSuchModuleError, ArgumentError), as
    # did a port that is not a number (ValueError) and tutorials' "+psycopg2", a driver the
    # toolkit does not install (ModuleNotFoundError).
    _edit(study_folder, 'database = ""', f'database = "{url}"')
    result = CliRunner().invoke(main, [command, str(study_folder)])
    assert result.exit_code != 0
    assert not isinstance(result.exception, Exception), result.exception  # a ClickException exits
    assert str(study_folder / "study.toml") in result.output
    assert re.search(expected, result.output), result.output
    assert "s3cret" not in result.output


def test_a_relative_sqlite_path_in_database_is_in_the_study_folder_wherever_a_command_runs(study_folder, tmp_path,
                                                                                        monkeypatch):
    # As every other file study.toml names (consent.html, the blocklist): the server started in
    # the study folder and `study status FOLDER` run from elsewhere read one database, where
    # status saw none of the sessions and made an empty data.db in the folder it ran from.
    from study.server import create_app
    from tests.server.flow import start, to_writing

    _edit(study_folder, 'database = ""', 'database = "sqlite:///data.db"')
    monkeypatch.chdir(study_folder)
    app = create_app(config.load(study_folder.relative_to(study_folder)), suggestion_engine=object())
    to_writing(app.test_client(), start(app.test_client(), access_code="a"), prompt="pig")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    result = CliRunner().invoke(main, ["status", str(study_folder)])

    assert result.exit_code == 0, result.output
    assert "Sessions: 1 (writing 1)" in result.output
    assert str(study_folder / "data.db") in result.output
    assert list(elsewhere.iterdir()) == []
