"""A chat export's survey.csv read by `study report`: CollabLLM's ratings are 1-10 sliders
(spec B2.4, B3: the periodic rating and the final interaction and document ratings), and the
report must show them as a scale with a mean, as it does for a study folder, not as a choice
between the strings "10", "8", "9"."""

from __future__ import annotations

from study.report.survey_answers import read_survey_csv as _read_survey_csv


def test_ten_point_ratings_in_an_exported_survey_csv_are_a_1_to_10_scale(tmp_path):
    survey = tmp_path / "survey.csv"
    survey.write_text(
        "session_id,periodic_rating@3,interaction_rating,document_rating\n"
        "a,7,9,10\nb,8,8,9\nc,9,10,8\nd,6,7,9\n",
        encoding="utf-8",
    )
    questions, answers = _read_survey_csv(survey)
    by_id = {q.id: q for q in questions}
    for column in ("periodic_rating@3", "interaction_rating", "document_rating"):
        assert by_id[column].kind == "scale", column
        assert by_id[column].points == tuple(range(1, 11)), column


def test_seven_point_answers_stay_a_7_point_scale(tmp_path):
    survey = tmp_path / "survey.csv"
    survey.write_text("session_id,q1_mental_demand\na,3\nb,5\nc,7\n", encoding="utf-8")
    (question,), _ = _read_survey_csv(survey)
    assert question.kind == "scale" and question.points == tuple(range(1, 8))


def test_a_survey_csv_saved_in_a_spreadsheets_own_encoding_is_named_with_the_fix(tmp_path):
    """A release's survey.csv edited in a spreadsheet and saved as Windows-1252, not UTF-8:
    the report says which file and how to save it, as it does for metadata.csv."""
    from click.testing import CliRunner

    from study.cli import main

    (tmp_path / "metadata.csv").write_text("session_id,worker_id,prompt_code,genre\nabc,w1,pig,creative\n",
                                           encoding="utf-8")  # fmt: skip
    (tmp_path / "survey.csv").write_bytes("session_id,comments\nabc,très bien\n".encode("cp1252"))

    result = CliRunner().invoke(main, ["report", str(tmp_path), "--out", str(tmp_path / "report.html")])

    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert str(tmp_path / "survey.csv") in result.output and "UTF-8" in result.output
    assert not (tmp_path / "report.html").exists()


def test_a_pilots_free_text_answers_stay_out_of_the_report_of_its_export(tmp_path):
    """A pilot's export has a handful of sessions, so each free-text answer is one of a few
    distinct values: they must not be printed as a choice's options in a report that may be
    shared (from the study folder only their count is shown, as survey.py promises)."""
    from click.testing import CliRunner

    from study.cli import main

    (tmp_path / "metadata.csv").write_text(
        "session_id,worker_id,prompt_code,genre,condition\n"
        + "".join(f"s{n},w{n},pig,creative,creative-low\n" for n in range(4)),
        encoding="utf-8",
    )
    (tmp_path / "survey.csv").write_text(
        "session_id,native_speaker,comments\n"
        "s0,Yes,Call me on 555-0147 if the bonus is late - Jane Roe\n"
        "s1,No,The suggestions were too long.\n"
        "s2,Yes,\n"
        "s3,No,Fine.\n",
        encoding="utf-8",
    )
    out = tmp_path / "report.html"

    result = CliRunner().invoke(main, ["report", str(tmp_path), "--out", str(out)])

    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    for answer in ("Jane Roe", "555-0147", "too long", "Fine."):
        assert answer not in html
    assert "<th>Yes</th>" in html and "<th>No</th>" in html  # a choice several writers made stays one
