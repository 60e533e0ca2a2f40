"""`study preregister`: a signed, timestamped record before launch, refused after it; verify
finds a changed record and lists every deviation; `study mturk post` warns without a record while
nobody has started, and does not send the researcher to a record too late to make after."""

from __future__ import annotations

import pytest

import json
import os
import stat

from click.testing import CliRunner

from study import config
from study.cli import main
from study.store import create_tables, make_engine
from tests.judging.finished import finish_sessions
from tests.plan.conftest import edit


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_the_record_holds_the_plan_signed_and_verify_accepts_it(planned):
    result = run("preregister", planned)
    assert result.exit_code == 0, result.output
    assert "1 planned comparison(s)" in result.output and "SHA-256" in result.output
    record = json.loads((planned / "preregistration.json").read_text())
    assert [arm["name"] for arm in record["arms"]] == [c.name for c in config.load(planned).conditions]
    assert record["plan"]["comparisons"][0]["treatment"] == "creative-high"
    assert record["configuration"]["session"]["min_seconds"] == 0
    assert record["recorded_at"].endswith("Z") and record["signature"]["algorithm"] == "Ed25519"
    assert stat.S_IMODE(os.stat(planned / "preregistration.key").st_mode) == 0o600
    verified = run("preregister", "verify", planned)
    assert verified.exit_code == 0, verified.output
    assert "Signature OK" in verified.output and "No deviation from the record." in verified.output


def test_a_plan_whose_consent_page_still_has_the_placeholder_contact_is_not_recorded(planned):
    """`study serve` refuses `study init`'s placeholder contact, so the record would fix a consent
    text nobody can read: once the contact is filled in, the deposited plan showed a deviation in
    every report. Refused, naming the page and the fix, with nothing written."""
    from study import config_texts
    from tests.conftest import CONTACT

    consent = planned / "consent.html"
    (placeholder, contact), = CONTACT.items()
    consent.write_text(consent.read_text(encoding="utf-8").replace(contact, placeholder), encoding="utf-8")
    assert config_texts.unfinished_consent(config.load(planned))
    result = run("preregister", planned)
    assert result.exit_code == 1, result.output
    assert "not recording the plan" in result.output and "consent.html" in result.output
    assert "Fix: replace it with the protocol director's name" in result.output
    assert not (planned / "preregistration.json").exists() and not (planned / "preregistration.key").exists()
    consent.write_text(consent.read_text(encoding="utf-8").replace(placeholder, contact), encoding="utf-8")
    assert run("preregister", planned).exit_code == 0
    assert "No deviation from the record." in run("preregister", "verify", planned).output


def test_a_record_changed_after_signing_fails_verification(planned):
    run("preregister", planned)
    path = planned / "preregistration.json"
    record = json.loads(path.read_text())
    record["plan"]["comparisons"][0]["direction"] = "greater"  # rewriting the prediction afterwards
    path.write_text(json.dumps(record))
    result = run("preregister", "verify", planned)
    assert result.exit_code != 0
    assert "signature does not match its content" in result.output


def test_preregistering_is_refused_once_participants_have_started(planned):
    study = config.load(planned)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, ["An early writer's story."])
    engine.dispose()
    result = run("preregister", planned)
    assert result.exit_code != 0
    assert "1 participant session(s) have already started" in result.output
    assert not (planned / "preregistration.json").exists()


def test_a_comparison_of_an_unknown_arm_is_named_with_the_fix(planned):
    edit(planned, lambda data: data["plan"]["comparisons"][0].update(control="no-ai"))
    result = run("preregister", planned)
    assert result.exit_code != 0
    assert "plan.comparisons[0].control: no condition is named 'no-ai'" in result.output
    assert not (planned / "preregistration.json").exists()


def test_an_outcome_the_report_cannot_measure_is_named_with_the_fix(planned):
    edit(planned, lambda data: data["plan"]["outcomes"][0].update(measure="happiness"))
    result = run("preregister", planned)
    assert result.exit_code != 0
    assert "plan.outcomes[0].measure: 'happiness' is not a per-session figure" in result.output
    assert "writer_share_final" in result.output and "judging" in result.output


def test_a_suggestion_figure_compared_against_a_control_arm_is_refused_with_the_fix(planned):
    # A control arm's acceptance is "not applicable" everywhere else (export, report, release):
    # a planned comparison of it would report the assisted arm against a zero nobody measured.
    def control_on_acceptance(data):
        data["conditions"].append({"name": "no-ai", "genre": "creative", "paradigm": "none"})
        data["plan"]["outcomes"].append({"name": "acceptance", "measure": "perc_selected"})
        data["plan"]["comparisons"][0].update(outcome="acceptance", control="no-ai")

    edit(planned, control_on_acceptance)
    result = run("preregister", planned)
    assert result.exit_code != 0
    assert ("plan.comparisons[0].control: 'no-ai' is a control arm (paradigm = \"none\"), where outcome "
            "'acceptance' (perc_selected) is not applicable") in result.output
    assert "Fix: compare two assisted arms on it" in result.output
    assert not (planned / "preregistration.json").exists()
    # The same arm on a figure every arm has is a plan.
    edit(planned, lambda data: data["plan"]["comparisons"][0].update(outcome="own words"))
    assert run("preregister", planned).exit_code == 0


def test_equality_compared_against_a_control_arm_is_refused_with_the_fix(planned):
    # The report reads a control arm's equality and mutuality as "not applicable" (no model to
    # share turns with): a planned comparison of them would come out empty after launch.
    def control_on_equality(data):
        data["conditions"].append({"name": "no-ai", "genre": "creative", "paradigm": "none"})
        data["plan"]["outcomes"].append({"name": "turns", "measure": "equality"})
        data["plan"]["comparisons"][0].update(outcome="turns", treatment="no-ai")

    edit(planned, control_on_equality)
    result = run("preregister", planned)
    assert result.exit_code != 0
    assert ("plan.comparisons[0].treatment: 'no-ai' is a control arm (paradigm = \"none\"), where outcome "
            "'turns' (equality) is not applicable: its writers had no model to share turns or interact with. "
            "Fix: compare two assisted arms on it") in result.output
    assert not (planned / "preregistration.json").exists()


def test_verify_lists_a_changed_setting_an_added_arm_and_excluded_sessions(planned):
    run("preregister", planned)

    def deviate(data):
        data["session"]["min_seconds"] = 120
        data["conditions"].append({"name": "no-ai", "genre": "creative", "paradigm": "none"})

    edit(planned, deviate)
    study = config.load(planned)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, ["A finished story."])
    from study.store import sessions as session_store
    from study.store import writing

    with writing(engine) as connection:
        session_store.create(connection, access_code="gave-up")  # never finished writing
    engine.dispose()
    result = run("preregister", "verify", planned)
    assert result.exit_code == 0, result.output
    assert "DEVIATION (arm) no-ai: arm added after the record (paradigm none)" in result.output
    assert "DEVIATION (setting) session.min_seconds: 0 -> 120" in result.output
    assert "DEVIATION (excluded) did not finish writing: 1 session(s)" in result.output


def test_posting_work_warns_when_no_record_exists(planned, emulator, monkeypatch):
    import boto3

    from study.mturk import client
    from tests.mturk.conftest import TASK_URL, _botocore_session

    monkeypatch.setattr(client, "new_session", lambda: boto3.Session(botocore_session=_botocore_session()))
    edit(planned, lambda data: data.update(mturk={"budget": "100.00"}))
    args = ["mturk", "post", planned, "--task-url", TASK_URL, "--endpoint-url", emulator.url, "--reward", "2.50"]
    first = run(*args)
    assert first.exit_code == 0, first.output
    assert "has no preregistration record" in first.stderr
    run("preregister", planned)
    second = run(*args)
    assert second.exit_code == 0 and "preregistration" not in second.stderr


def test_posting_work_after_the_study_changed_since_its_record_warns_of_the_deviation(planned, emulator, monkeypatch):
    # HITs posted on a study.toml that no longer says what the record fixed run another study
    # than the one preregistered: the researcher hears of it before the work goes out.
    import boto3

    from study.mturk import client
    from tests.mturk.conftest import TASK_URL, _botocore_session

    monkeypatch.setattr(client, "new_session", lambda: boto3.Session(botocore_session=_botocore_session()))
    edit(planned, lambda data: data.update(mturk={"budget": "100.00"}))
    run("preregister", planned)

    def later_minimum(data):
        data["session"]["min_seconds"] = 120

    edit(planned, later_minimum)
    args = ["mturk", "post", planned, "--task-url", TASK_URL, "--endpoint-url", emulator.url, "--reward", "2.50"]
    posted = run(*args)

    assert posted.exit_code == 0, posted.output
    assert "differs from its preregistration record in 1 place(s) (session.min_seconds: 0 -> 120)" in posted.stderr
    assert f"study preregister verify {planned}" in posted.stderr
    edit(planned, lambda data: data["session"].update(min_seconds=0))
    again = run(*args)
    assert again.exit_code == 0 and "preregistration" not in again.stderr


def test_posting_after_participants_started_does_not_suggest_a_record_too_late_to_make(planned, emulator, monkeypatch):
    # A second batch of HITs, posted once writers have taken part: `study preregister` would be
    # refused now, so `post` must not send the researcher to it.
    import boto3

    from study.mturk import client
    from tests.mturk.conftest import TASK_URL, _botocore_session

    monkeypatch.setattr(client, "new_session", lambda: boto3.Session(botocore_session=_botocore_session()))
    edit(planned, lambda data: data.update(mturk={"budget": "100.00"}))
    study = config.load(planned)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, ["An early writer's story."])
    engine.dispose()

    posted = run("mturk", "post", planned, "--task-url", TASK_URL, "--endpoint-url", emulator.url, "--reward", "2.50")

    assert posted.exit_code == 0, posted.output
    assert "study preregister" not in posted.stderr
    assert "has no preregistration record, and 1 participant session(s) have already started" in posted.stderr
    assert "would not be fixed before launch" in posted.stderr
    assert run("preregister", planned).exit_code != 0  # what the suggestion would have led to


def test_verify_lists_instructions_changed_after_the_record(planned):
    run("preregister", planned)
    # After launch the instructions are rewritten: the writers read something else than the
    # record says they would (e.g. now told to use the AI as much as they can).
    path = planned / "instructions.html"
    path.write_text(path.read_text(encoding="utf-8") + "\n<p>Use the AI as much as you can.</p>\n", encoding="utf-8")
    result = run("preregister", "verify", planned)
    assert result.exit_code == 0, result.output
    assert "No deviation from the record." not in result.output
    assert "DEVIATION (setting) texts.instructions: the text participants read changed after the record" in result.output
    assert "texts.consent" not in result.output


def test_two_outcomes_of_one_name_are_refused_with_the_fix(planned):
    # A comparison names its outcome: with two of that name, which measure it compares would
    # be an accident of order (the report took the last).
    edit(planned, lambda data: data["plan"]["outcomes"].append({"name": "own words", "measure": "num_query"}))
    result = run("preregister", planned)
    assert result.exit_code != 0
    assert "plan.outcomes[2].name: 'own words' is used twice" in result.output and "Fix:" in result.output
    assert not (planned / "preregistration.json").exists()


def test_verify_lists_arms_put_in_another_order_after_the_record(planned):
    # The order of [[conditions]] is part of the design: the within-subjects Latin square is over
    # the arms in that order, and ties of the balanced assignment go by it.
    run("preregister", planned)
    edit(planned, lambda data: data.update(conditions=[data["conditions"][1], data["conditions"][0], *data["conditions"][2:]]))
    result = run("preregister", "verify", planned)
    assert result.exit_code == 0, result.output
    assert "No deviation from the record." not in result.output
    assert ('DEVIATION (arm) order: creative-low, creative-high, argumentative-low, argumentative-high -> '
            "creative-high, creative-low, argumentative-low, argumentative-high") in result.output


def test_verify_names_a_question_reworded_in_the_survey_file_study_toml_names(planned):
    # The after-session survey lives in a file beside study.toml (`[[surveys]] file = ...`):
    # study.toml is unchanged when a question in it is reworded after the record, or one added,
    # yet the writers are asked something else than the plan says.
    (planned / "after.toml").write_text(
        'title = "About the AI"\n'
        '[[items]]\nid = "helpful"\ntype = "likert"\ntext = "The AI helped me write."\n'
        '[[items]]\nid = "again"\ntype = "likert"\ntext = "I would write with it again."\n',
        encoding="utf-8",
    )
    edit(planned, lambda data: data.update(surveys=[{"name": "about_ai", "placement": "after_session",
                                                     "file": "after.toml"}]))  # fmt: skip
    assert run("preregister", planned).exit_code == 0
    (planned / "after.toml").write_text(
        'title = "About the AI"\n'
        '[[items]]\nid = "helpful"\ntype = "likert"\ntext = "The AI made my story better."\n'
        '[[items]]\nid = "again"\ntype = "likert"\ntext = "I would write with it again."\n'
        '[[items]]\nid = "trust"\ntype = "likert"\ntext = "I trusted the AI."\n',
        encoding="utf-8",
    )
    result = run("preregister", "verify", planned)
    assert result.exit_code == 0, result.output
    assert ('DEVIATION (setting) surveys[about_ai].items[helpful].text: "The AI helped me write." -> '
            '"The AI made my story better."') in result.output  # fmt: skip
    assert 'DEVIATION (setting) surveys[about_ai].items[trust]: added after the record: {"id": "trust"' in result.output
    assert "items[again]" not in result.output  # the question left as it was is no deviation


def test_verify_names_the_prompt_reworded_after_the_record_in_one_line(planned):
    # One prompt of twenty reworded after launch: the deviation names that prompt and its key,
    # not the whole [[prompts]] list before and after (16 KB on one line, the change in it unsaid).
    run("preregister", planned)

    def reword(data):
        mana = next(prompt for prompt in data["prompts"] if prompt["code"] == "mana")
        mana["text"] = "Magic returns to a humbled Earth."
        data["prompts"] = [p for p in data["prompts"] if p["code"] != "pig"]

    edit(planned, reword)
    result = run("preregister", "verify", planned)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("DEVIATION (setting) prompts")]
    assert len(lines) == 2, lines
    assert lines[0] == "DEVIATION (setting) prompts[pig]: removed after the record"
    assert lines[1].startswith("DEVIATION (setting) prompts[mana].text: \"Humans once wielded")
    assert lines[1].endswith(' -> "Magic returns to a humbled Earth."')


def test_verify_lists_an_arm_closed_to_new_participants_after_the_record(planned):
    # Closing an arm (assign = false) changes who is given it from then on: a deviation a
    # methods reviewer must see, named for what it did.
    run("preregister", planned)
    assert all(arm["assign"] is True for arm in json.loads((planned / "preregistration.json").read_text())["arms"])
    edit(planned, lambda data: data["conditions"][0].update(assign=False))
    result = run("preregister", "verify", planned)
    assert result.exit_code == 0, result.output
    assert ("DEVIATION (arm) creative-low.assign: true -> false (closed to new participants after the record)"
            in result.output)
    assert "creative-high.assign" not in result.output


@pytest.mark.parametrize("key, value, detail", [
    ("assign", False, "true -> false (closed to new participants after the record)"),
    ("unit", "paragraph", '"sentence" -> "paragraph"'),  # its arms suggested sentences then
])
def test_a_record_made_before_a_setting_existed_reads_its_default_and_a_later_change_deviates(
    planned, key, value, detail
):
    """A record of an earlier version holds no `assign` (arms could not be closed) or `unit`
    (Tab suggestions were sentences): it reads as the default, and changing it is a deviation."""
    from study.plan import deviations

    run("preregister", planned)
    signed = json.loads((planned / "preregistration.json").read_text())
    for arm in signed["arms"]:
        del arm[key]  # as a record of an earlier version holds them
    assert [d for d in deviations.compare(signed, config.load(planned), {}) if d.kind == "arm"] == []
    edit(planned, lambda data: data["conditions"][1].update({key: value}))
    found = [d for d in deviations.compare(signed, config.load(planned), {}) if d.kind == "arm"]
    assert [(d.what, d.detail) for d in found] == [(f"creative-high.{key}", detail)]


def test_a_comparison_of_an_arm_with_itself_is_refused_naming_it_and_the_fix(planned):
    # A typo (control = the treatment's name) would preregister a difference that is 0 by
    # construction: a test the study cannot fail, found only when the report is read.
    edit(planned, lambda data: data["plan"]["comparisons"][0].update(control="creative-high"))
    result = run("preregister", planned)
    assert result.exit_code != 0
    assert ("plan.comparisons[0] ('H1'): treatment 'creative-high' and control 'creative-high' are the same "
            "arm, compared with itself. Fix: name two different [[conditions]] as treatment and control.") in result.output
    assert not (planned / "preregistration.json").exists()


def test_creators_and_funding_declared_for_the_release_after_the_record_are_no_deviation(planned):
    # The curator fills in [release] when the dataset is built, long after the record: who
    # created and funded it changes nothing participants did.
    run("preregister", planned)
    edit(planned, lambda data: data.update(release={"creators": ["Ada Lovelace"], "funding": "NSF grant 123"}))
    result = run("preregister", "verify", planned)
    assert result.exit_code == 0, result.output
    assert "No deviation from the record." in result.output
