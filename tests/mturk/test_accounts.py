"""Which account a command reaches: credentials that cannot be used are explained in one line,
placeholders sign requests only to this machine, and the ledger is the account's, whatever
address reaches it."""

from __future__ import annotations

import re

import pytest
from boto3 import Session
from sqlalchemy import select

from study.mturk import client
from study.mturk.emulator import State, serve_in_thread
from study.store import make_engine, writing
from study.store.mturk import mturk_payments
from tests.mturk.conftest import TASK_URL, new_study


@pytest.fixture
def folder(tmp_path):
    return new_study(tmp_path / "study", reward="2.50", budget="100.00")


@pytest.fixture
def fresh_chain(monkeypatch):
    """A new credential chain per command, as a researcher's shell gives."""
    monkeypatch.setattr(client, "new_session", Session)


def _one_clear_line(result, *words):
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for word in words:
        assert word in lines[0], result.output


def test_an_access_key_without_its_secret_is_explained(cli, folder, fresh_chain, monkeypatch):
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    _one_clear_line(cli("balance", str(folder), where=()), "AWS_SECRET_ACCESS_KEY", "Fix:")


def test_an_unknown_aws_profile_is_explained(cli, folder, fresh_chain, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")
    for where in ((), ("--endpoint-url", "http://127.0.0.1:1")):
        _one_clear_line(cli("list", str(folder), where=where), "no-such-profile", "AWS_PROFILE")


def test_without_credentials_only_a_loopback_endpoint_is_used(
    cli, folder, emulator, fresh_chain, monkeypatch
):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    remote = cli("balance", str(folder), where=("--endpoint-url", "https://mturk.example.org"))
    _one_clear_line(remote, "not on this machine", "aws configure")
    local = cli("balance", str(folder), where=("--endpoint-url", emulator.url))
    assert local.exit_code == 0 and "Available: $10000.00" in local.output
    by_name = emulator.url.replace("127.0.0.1", "localhost")
    assert cli("balance", str(folder), where=("--endpoint-url", by_name)).exit_code == 0


def test_one_account_under_two_addresses_keeps_one_ledger(cli, folder, emulator):
    posted = cli("post", str(folder), "--assignments", "2", "--task-url", TASK_URL)
    assert posted.exit_code == 0, posted.output
    (hit_id,) = re.findall(r"^(3[A-Z0-9]{29})\s", posted.stdout, flags=re.M)
    other_address = ("--endpoint-url", emulator.url.replace("127.0.0.1", "localhost"))
    listed = cli("list", str(folder), where=other_address)
    assert f"{hit_id}  Assignable" in listed.stdout
    balance = cli("balance", str(folder), where=other_address)
    assert "Budget cap: $100.00 ($94.00 left)" in balance.stdout
    account_id = emulator.state.data["account_id"]
    assert f"sandbox:{account_id}" in balance.stdout


def test_another_account_is_another_ledger(cli, folder, emulator, tmp_path):
    assert cli("post", str(folder), "--task-url", TASK_URL).exit_code == 0
    other = serve_in_thread(State(tmp_path / "other-account.json"))
    try:
        listed = cli("list", str(folder), where=("--endpoint-url", other.url))
        balance = cli("balance", str(folder), where=("--endpoint-url", other.url))
    finally:
        other.stop()
    assert "No HITs in sandbox:" in listed.stdout
    assert "Budget cap: $100.00 ($100.00 left)" in balance.stdout


def test_rows_filed_by_address_before_are_moved_to_the_account(cli, folder, emulator):
    legacy = f"sandbox@{emulator.url}"
    engine = make_engine(f"sqlite:///{folder / 'study.db'}")
    from study.store import create_tables

    create_tables(engine)
    with writing(engine) as connection:
        connection.execute(
            mturk_payments.insert().values(
                environment=legacy,
                entry_key="reward:old:0",
                kind="reward",
                amount="2.50",
                fee="0.50",
                status="intended",
                created_at=0.0,
            )
        )
    balance = cli("balance", str(folder))
    assert "Budget cap: $100.00 ($97.00 left)" in balance.stdout
    with engine.connect() as connection:
        (environment,) = connection.execute(select(mturk_payments.c.environment)).one()
    assert environment == f"sandbox:{emulator.state.data['account_id']}"


@pytest.mark.parametrize(
    "where, words",
    [
        # --sandbox is the default: real money would be spent under the sandbox's rules
        # (no budget cap, no confirmation) and filed in the sandbox's ledger.
        (("--endpoint-url", client.LIVE_ENDPOINT), ("live", "--live")),
        (("--live", "--endpoint-url", client.SANDBOX_ENDPOINT + "/"), ("sandbox", "--sandbox")),
    ],
)
def test_mturks_own_endpoints_must_match_sandbox_or_live(cli, folder, monkeypatch, where, words):
    from study.mturk import account

    asked = []
    monkeypatch.setattr(account, "identify", lambda *a, **k: asked.append(1) or "123456789012")
    monkeypatch.setattr(
        client, "new_session", lambda: pytest.fail("a request would have gone to MTurk")
    )
    result = cli("balance", str(folder), where=where)
    _one_clear_line(result, *words)
    assert asked == []
