"""Reviewer accounts: salted hashes, verification, and `study reviewers`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from study.review import accounts
from study.review.cli import reviewers
from study.store import reading, writing
from tests.review.conftest import PASSWORD, add_reviewer


def test_passwords_are_stored_as_salted_scrypt_hashes(engine):
    ana, ben = add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    assert ana["password_hash"].startswith("scrypt:")
    assert PASSWORD not in ana["password_hash"]
    assert ana["password_hash"] != ben["password_hash"]  # same password, different salts


def test_verify_accepts_the_right_password_only_and_not_disabled_accounts(engine):
    add_reviewer(engine, "ana")
    with writing(engine) as connection:
        assert accounts.verify(connection, "ana", PASSWORD)["name"] == "ana"
        assert accounts.verify(connection, "ana", PASSWORD + "!") is None
        assert accounts.verify(connection, "nobody", PASSWORD) is None
        accounts.disable(connection, "ana")
        assert accounts.verify(connection, "ana", PASSWORD) is None
        accounts.set_password(connection, "ana", "a brand new password")
        assert accounts.verify(connection, "ana", "a brand new password") is not None


@pytest.mark.parametrize(
    ("name", "password", "message"),
    [("ana", "short", "at least 10"), ("no spaces", PASSWORD, "cannot be a reviewer name")],
)
def test_bad_names_and_short_passwords_are_refused(engine, name, password, message):
    with writing(engine) as connection, pytest.raises(accounts.AccountError, match=message):
        accounts.add(connection, name, password)


def test_study_reviewers_add_list_and_disable(review_folder, engine):
    runner = CliRunner()
    added = runner.invoke(
        reviewers, ["add", str(review_folder), "rita", "--researcher", "--password-stdin"],
        input=PASSWORD + "\n",
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    assert "Added researcher rita" in added.output
    again = runner.invoke(
        reviewers, ["add", str(review_folder), "rita", "--password-stdin"], input=PASSWORD + "\n"
    )
    assert again.exit_code == 1 and "exists already" in again.output
    prompted = runner.invoke(
        reviewers, ["add", str(review_folder), "ana"], input=f"{PASSWORD}\n{PASSWORD}\n"
    )
    assert prompted.exit_code == 0, prompted.output
    assert runner.invoke(reviewers, ["disable", str(review_folder), "ana"]).exit_code == 0
    listed = runner.invoke(reviewers, ["list", str(review_folder)]).output
    assert listed.splitlines() == ["ana  reviewer  (disabled)", "rita  researcher"]
    with reading(engine) as connection:
        assert accounts.verify(connection, "rita", PASSWORD)["role"] == "researcher"
