"""A Prolific participant's privacy: in a release their PID becomes the same keyed pseudonym an
MTurk worker id becomes, no file of the release holds the PID or the Prolific ids, and reviewers
never read the PID, even where the participant typed it."""

from __future__ import annotations

import csv

from study.prolific import studies, submissions
from study.release.build import build_release
from study.release.keys import init_keyfile
from study.release.pseudonyms import ReidentificationTable, is_pseudonym
from study.review import presentation
from study.review import submissions as review_submissions
from study.store import writing
from tests.prolific.conftest import TASK_URL
from tests.prolific.walk import take_part

PID = "60a1b2c3d4e5f60718293a4b"


def test_a_prolific_pid_is_released_only_as_a_keyed_pseudonym(ctx, prolific, task_client, study_folder, tmp_path):
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 2, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])
    took = take_part(prolific, task_client, made["study_id"], PID)
    submissions.sync(ctx)
    key = init_keyfile(tmp_path / "study.key")
    result = build_release(study_folder, version="1.0.0", out=tmp_path / "releases",
                           key_path=key.path, processes=1, progress=False)  # fmt: skip
    directory = tmp_path / "releases" / "coauthor-1.0.0"
    with open(directory / "metadata.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert is_pseudonym(row["worker_id"])
    assert ReidentificationTable(key).lookup(row["worker_id"]) == [("coauthor", PID)]
    for path in directory.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in (PID, made["study_id"], took.submission_id, took.session_id):
                assert secret.encode() not in data, (path.name, secret)
    assert result is not None


def test_reviewers_never_read_the_pid_even_where_the_participant_typed_it(ctx, prolific, task_client):
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 1, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])
    typed = f"My Prolific id is {PID}, in case you need it. " + "The lighthouse keeper waited. " * 4
    took = take_part(prolific, task_client, made["study_id"], PID, written=typed)
    submissions.sync(ctx)
    with writing(ctx.engine) as connection:
        review_submissions.collect(connection, ctx.study)
        (submission,) = review_submissions.all_submissions(connection)
        shown = presentation.show(connection, ctx.study, submission)
    text = "".join(run for _, run in shown.spans)
    assert "My Prolific id is <" in text and PID not in text
    assert PID not in shown.replay_json() and took.submission_id not in shown.replay_json()
