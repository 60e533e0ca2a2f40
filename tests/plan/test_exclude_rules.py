"""`[[plan.exclude]]`: exclusion rules fixed in the record before launch, refused by `study
preregister` when they cannot be applied, and applied by the report's planned comparisons the
way the record fixed them (study.plan.exclude)."""

from __future__ import annotations

import datetime as dt

from click.testing import CliRunner

from study import config
from study.cli import main
from study.plan import record as record_module
from study.report import write_report
from tests.plan.conftest import PLAN, edit
from tests.report.conftest import Tables, report_study  # noqa: F401


def preregister(folder):
    return CliRunner().invoke(main, ["preregister", str(folder)])


def with_rules(*rules):
    return lambda data: data["plan"].update(exclude=list(rules))


def test_rules_that_cannot_be_applied_are_refused_each_with_its_field_and_fix(planned):
    edit(planned, with_rules(
        {"name": "short", "measure": "words_typed", "below": 50},
        {"name": "attention", "question": "native_speaker", "answer_not_in": ["Yess"]},
        {"name": "both", "measure": "final_words", "question": "ownership", "answer_in": [1]},
        {"name": "unbounded", "measure": "final_words"},
        {"name": "short", "question": "no_such_question", "answer_in": ["x"]},
    ))  # fmt: skip
    result = preregister(planned)
    assert result.exit_code != 0
    out = result.output
    assert "plan.exclude[0].measure: 'words_typed' is not a per-session figure" in out and "final_words" in out
    # A misspelt right answer would have left out every writer.
    assert "plan.exclude[1].answer_not_in: ['Yess'] are not answers question 'native_speaker' offers" in out
    assert "plan.exclude[2]: a rule takes one `measure` or one survey `question`" in out
    assert "plan.exclude[3]: a measure is excluded by `below` and/or `above`" in out
    assert "plan.exclude[4].name: 'short' is used twice" in out
    assert "plan.exclude[4].question: no survey asks a question with id 'no_such_question'" in out
    assert not (planned / "preregistration.json").exists()


def test_the_record_holds_the_rules(planned):
    rule = {"name": "not native", "question": "native_speaker", "answer_in": ["No"]}
    edit(planned, with_rules(rule))
    assert preregister(planned).exit_code == 0
    assert record_module.load(planned / "preregistration.json")["plan"]["exclude"] == [rule]


def recorded_yesterday(folder) -> None:
    """The record as `study preregister` wrote it the day before the first writer came."""
    study = config.load(folder)
    yesterday = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)
    signed = record_module.sign(record_module.build(study, now=yesterday), record_module.key(study.directory))
    record_module.write(study.directory, signed)


def planned_rows(folder, out) -> tuple[dict, str]:
    write_report(folder, out, processes=1)
    tables = Tables(out.read_text())
    return tables.rows("plan", 0), tables.texts["plan"]


def test_the_report_leaves_out_what_the_recorded_rules_exclude_and_counts_it(report_study, tmp_path):
    # Three finished sessions; two answered the survey, ownership 5 (writer-0) and 6 (writer-1).
    edit(report_study, lambda data: data.update(plan=PLAN))
    recorded_yesterday(report_study)
    before, _ = planned_rows(report_study, tmp_path / "before.html")

    edit(report_study, lambda data: data.update(plan={**PLAN, "exclude": [
        {"name": "owned it fully", "question": "ownership", "answer_in": [6]}]}))  # fmt: skip
    recorded_yesterday(report_study)
    after, text = planned_rows(report_study, tmp_path / "after.html")

    sessions = lambda rows: sum(int(n) for n in rows["H1"][4].split(" / "))  # noqa: E731
    assert sessions(after) == sessions(before) - 1
    assert "Left out by the record's exclusion rules ([[plan.exclude]]), before these comparisons, " \
        "1 session(s) in all: owned it fully: 1 session(s)." in text

    # A rule added to study.toml after the record is a deviation, and not applied.
    edit(report_study, lambda data: data["plan"]["exclude"].append({"name": "short", "measure": "final_words", "above": 0}))
    later, text = planned_rows(report_study, tmp_path / "later.html")
    assert sessions(later) == sessions(after)
    assert "plan.exclude" in text.split("Deviations from the record")[1]
