"""`study qualify` on a round whose writers all entered with access codes (a lab round): there is
no MTurk or Prolific submission to pay nor qualification to grant, so it asks neither (no AWS
credentials needed) and says that the task server already admits the writers who passed."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main as study_cli
from tests.review.conftest import rated_by_two
from tests.review.sessions import finished_session


def test_qualify_on_a_lab_round_asks_no_provider_and_says_the_main_round_admits_who_passed(
    review_folder, review_study, engine, monkeypatch
):
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(review_folder / "no-such-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(review_folder / "no-such-config"))
    for code in ("lab-1", "lab-2"):
        finished_session(engine, access_code=code, round_name="qualification")
    rated_by_two(engine, review_study, 5, 2)
    for args in (["--dry-run"], []):
        result = CliRunner().invoke(study_cli, ["qualify", str(review_folder), *args])
        assert result.exit_code == 0, result.output
        assert "entered with an access code (failed 1, passed 1)" in result.output
        assert "/task?access_code=THEIR-CODE&round=main" in result.output
        assert "credentials" not in result.output
