"""`study withdraw WORKER_ID --study DIR`: a writer who withdraws leaves the study's data (export,
report, status), not only its releases; what they were paid stays on the ledger."""

from __future__ import annotations

import csv
import sqlite3
from contextlib import closing

from click.testing import CliRunner

from study.cli import main
from study.release.cli import release
from study.release.keys import init_keyfile
from study.release.pseudonyms import ReidentificationTable
from study.store import writing
from study.store.mturk import mturk_payments
from tests.chat.conftest import chat_app, chat_client, chat_folder, chat_study  # noqa: F401 - fixtures
from tests.release.test_release_chat import SECRET, WITHDRAWN, WRITER, _build, _records, _take_part
from tests.server.flow import finish, start, to_writing

STAYS = "A1STAYINGWORKER"
LEAVES = "A2LEAVINGWORKER"


def _two_writers(app) -> dict[str, str]:
    """Two MTurk writers who finished, each paid; their session ids by worker id."""
    sessions = {}
    for number, worker in enumerate((STAYS, LEAVES)):
        client = app.test_client()
        session_id = start(client, workerId=worker, assignmentId=f"ASSIGN{number}", hitId="HIT1",
                           turkSubmitTo="https://workersandbox.mturk.com")  # fmt: skip
        to_writing(client, session_id, prompt="pig")
        finish(client, session_id)
        sessions[worker] = session_id
        with writing(app.extensions["study.engine"]) as connection:
            connection.execute(mturk_payments.insert().values(
                environment="sandbox", entry_key=f"reward-{number}", kind="reward", hit_id="HIT1",
                assignment_id=f"ASSIGN{number}", worker_id=worker, amount="2.50", fee="0.50",
                status="confirmed", created_at=0.0,
            ))  # fmt: skip
    return sessions


def _ledger(study_folder) -> list[tuple]:
    with closing(sqlite3.connect(study_folder / "study.db")) as connection:
        return connection.execute("SELECT * FROM mturk_payments ORDER BY id").fetchall()


def test_a_withdrawn_writer_leaves_export_report_and_status_and_each_counts_them(app, study_folder, tmp_path):
    sessions = _two_writers(app)
    ledger = _ledger(study_folder)
    runner = CliRunner()

    withdrawn = runner.invoke(main, ["withdraw", LEAVES, "--study", str(study_folder), "--reason", "email"])
    assert withdrawn.exit_code == 0, withdrawn.output
    assert "Recorded the withdrawal in the study's database" in withdrawn.output
    again = runner.invoke(main, ["withdraw", f" {LEAVES} ", "--study", str(study_folder)])
    assert again.exit_code == 0 and "Already withdrawn from the study" in again.output

    out = tmp_path / "export"
    exported = runner.invoke(main, ["export", str(study_folder), "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    assert "Exported 1 sessions" in exported.output
    assert "Withdrawn: 1 session(s) of 1 writer who withdrew (study withdraw), left out" in exported.output
    with open(out / "metadata.csv", newline="") as file:
        assert [row["worker_id"] for row in csv.DictReader(file)] == [STAYS]
    assert not (out / f"{sessions[LEAVES]}.jsonl").exists()
    assert (out / f"{sessions[STAYS]}.jsonl").exists()
    assert sessions[LEAVES] not in (out / "survey.csv").read_text()

    report = tmp_path / "report.html"
    reported = runner.invoke(main, ["report", str(study_folder), "--out", str(report)])
    assert reported.exit_code == 0, reported.output
    assert f"Wrote {report}: 1 sessions" in reported.output
    assert "Withdrawn: 1 session(s) of 1 writer" in reported.output

    status = runner.invoke(main, ["status", str(study_folder)])
    assert status.exit_code == 0, status.output
    assert "Sessions: 1 (complete 1)" in status.output
    assert "Withdrawn: 1 session(s) of 1 writer who withdrew (study withdraw), left out of the counts above" in status.output
    assert ("Preregistration: none, and 1 participant session(s) have started, and 1 of writers who "
            "withdrew since, so a record can no longer be made") in status.output

    # They were paid for the work: the payments ledger is as it was.
    assert _ledger(study_folder) == ledger and len(ledger) == 2


def test_an_earlier_exports_files_of_a_withdrawn_writer_go_with_the_next_export(app, study_folder, tmp_path):
    sessions = _two_writers(app)
    out = tmp_path / "export"
    assert CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)]).exit_code == 0
    assert (out / f"{sessions[LEAVES]}.jsonl").exists()

    CliRunner().invoke(main, ["withdraw", LEAVES, "--study", str(study_folder)])
    assert CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)]).exit_code == 0

    assert not (out / f"{sessions[LEAVES]}.jsonl").exists()
    assert LEAVES not in (out / "metadata.csv").read_text()


def test_a_worker_the_study_has_no_session_of_is_said_so_with_the_near_miss(app, study_folder):
    _two_writers(app)

    result = CliRunner().invoke(main, ["withdraw", LEAVES.lower(), "--study", str(study_folder)])

    assert result.exit_code == 0, result.output
    assert "the study in" in result.output and "has no session of this writer" in result.output
    assert f"The study has '{LEAVES}': if that is who withdrew, run: study withdraw {LEAVES} --study" in result.output
    # Recorded as given, it leaves nobody out.
    status = CliRunner().invoke(main, ["status", str(study_folder)])
    assert "Sessions: 2 (complete 2)" in status.output and "Withdrawn:" not in status.output


def test_withdraw_needs_the_key_or_the_study_and_a_pseudonym_needs_the_key(study_folder, app):
    neither = CliRunner().invoke(main, ["withdraw", LEAVES])
    assert neither.exit_code == 2 and "--key KEYFILE" in neither.output and "--study DIR" in neither.output

    pseudonym = CliRunner().invoke(main, ["withdraw", "w" + "1" * 20, "--study", str(study_folder)])
    assert pseudonym.exit_code == 1 and "give the --key it was built with" in pseudonym.output


def test_a_chat_writer_withdrawn_from_the_study_leaves_its_export_and_its_next_release(
    chat_client, chat_app, chat_folder, tmp_path
):
    kept = _take_part(chat_client, "Plan the harbour festival, please.", access_code=WRITER)
    gone = _take_part(chat_client, SECRET, access_code=WITHDRAWN)
    chat_app.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "keys" / "study.key")
    out = tmp_path / "releases"
    _build(chat_folder, key, out, "1.0.0")

    # Recorded once, in the study's database and with the key at the same time.
    both = CliRunner().invoke(main, ["withdraw", WITHDRAWN, "--study", str(chat_folder), "--key", str(key.path)])
    assert both.exit_code == 0, both.output
    assert "in the study's database" in both.output and "The next release leaves out their sessions" in both.output

    exported = CliRunner().invoke(main, ["export", str(chat_folder), "--format", "chat", "--out", str(tmp_path / "chat")])
    assert exported.exit_code == 0, exported.output
    assert "Withdrawn: 1 session(s) of 1 writer" in exported.output
    conversations = (tmp_path / "chat" / "conversations.jsonl").read_text(encoding="utf-8")
    assert kept in conversations and gone not in conversations and SECRET not in conversations

    args = ["build", str(chat_folder), "--version", "1.0.1", "--out", str(out), "--key", str(key.path), "-j", "1"]
    built = CliRunner().invoke(release, args)
    assert built.exit_code == 0, built.output
    assert "Left out 1 session(s) of withdrawn writers." in built.output
    (record,) = _records(out / "collabllm-1.0.1")
    assert ReidentificationTable(key).lookup_session(record["session_id"]) == [("collabllm", kept)]


def test_a_writer_withdrawn_only_from_the_study_leaves_the_release_built_from_it(
    chat_client, chat_app, chat_folder, tmp_path
):
    _take_part(chat_client, "Plan the harbour festival, please.", access_code=WRITER)
    _take_part(chat_client, SECRET, access_code=WITHDRAWN)
    chat_app.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "keys" / "study.key")
    assert CliRunner().invoke(main, ["withdraw", WITHDRAWN, "--study", str(chat_folder)]).exit_code == 0

    args = ["build", str(chat_folder), "--version", "1.0.0", "--out", str(tmp_path / "out"), "--key", str(key.path), "-j", "1"]
    built = CliRunner().invoke(release, args)

    assert built.exit_code == 0, built.output
    assert "Left out 1 session(s) of withdrawn writers." in built.output
    assert len(_records(tmp_path / "out" / "collabllm-1.0.0")) == 1
