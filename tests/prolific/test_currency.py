"""Each Prolific ledger entry says its currency: a pound workspace's entries read as pounds, a
study whose workspace later pays in dollars never adds pence to cents (its totals are shown per
currency and new spending is refused), and a database made before entries recorded their
currency still opens, its entries shown as of unknown currency until the researcher says."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from sqlalchemy import inspect

from study import config
from study.cli import main
from study.store import make_engine, writing
from study.store.prolific import prolific_payments
from tests.prolific.conftest import TASK_URL, with_pay, with_prolific
from tests.prolific.walk import take_part


@pytest.fixture
def prolific(pound_workspace):
    """The emulator as a workspace paying in pounds (the conftest's pays in dollars)."""
    return pound_workspace


@pytest.fixture
def run(prolific, study_folder):
    with_pay(study_folder, "£2.50")  # as a UK researcher's consent page promises it
    with_prolific(study_folder, reward="2.50", estimated_minutes=10, task_url=TASK_URL,
                  budget="50.00", completion_url=prolific.url + "/submissions/complete")  # fmt: skip

    def invoke(*args, code=0):
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result.output

    return invoke


def publish(run, study_folder, places: int = 1, code: int = 0, *extra: str) -> tuple[str, str]:
    out = run("prolific", "draft", str(study_folder), "--places", str(places), "--publish", *extra, code=code)
    return re.search(r"Draft (\w+):", out).group(1), out


def now_paying_in(prolific, currency: str) -> None:
    """The study's token now answers for a workspace paying in `currency` (users/me)."""
    with prolific.state.lock:
        prolific.state.data["currency"] = currency
        prolific.state.save()


def stored_entries(study_folder) -> list[dict]:
    engine = make_engine(config.load(study_folder).database_url)
    try:
        with engine.connect() as connection:
            return [dict(row) for row in connection.execute(prolific_payments.select()).mappings()]
    finally:
        engine.dispose()


def ledger_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if re.match(r"\d{4}-\d\d-\d\d ", line)]


def status_line(study_folder) -> str:
    status = CliRunner().invoke(main, ["status", str(study_folder)])
    assert status.exit_code == 0, status.output
    (line,) = [line for line in status.output.splitlines() if line.startswith("Prolific (prolific:")]
    return line


def test_a_pound_workspaces_entries_read_as_pounds(run, study_folder, prolific, task_client):
    study_id, _ = publish(run, study_folder, places=2)
    took = take_part(prolific, task_client, study_id, "1" * 24)
    run("prolific", "review", str(study_folder), "--yes")
    run("prolific", "bonus", str(study_folder), took.submission_id, "--amount", "1.00", "--reason", "thanks")

    assert {e["currency"] for e in stored_entries(study_folder)} == {"GBP"}
    out = run("prolific", "ledger", str(study_folder))
    lines = ledger_lines(out)
    assert len(lines) == 3  # two reward places and the bonus
    assert all(" GBP " in line and "£" in line and "$" not in line for line in lines)
    # 2 x 2.50 and 1.00 to participants, Prolific's third on top (0.83, 0.83 and 0.33).
    assert "GBP: committed £7.99 (£6.00 to participants + £1.99 Prolific fees)" in out
    assert status_line(study_folder).endswith("committed £7.99 of a £50.00 cap, paid £4.66")


def test_a_study_whose_workspace_then_pays_in_dollars_is_refused_and_shown_per_currency(
    run, study_folder, prolific, task_client
):
    study_id, _ = publish(run, study_folder, places=1)
    first = take_part(prolific, task_client, study_id, "1" * 24)
    run("prolific", "review", str(study_folder), "--yes")
    now_paying_in(prolific, "USD")

    # A new spend in dollars: refused before anything is reserved or published, with the fix
    # (drafted with --force: the consent page's "£2.50" is refused first otherwise).
    other_id, out = publish(run, study_folder, 1, 1, "--force")
    assert "this Prolific workspace pays in USD" in out and "£3.33" in out and "in GBP" in out
    assert "Fix: run this study with the token of the GBP workspace" in out
    assert prolific.state.data["studies"][other_id]["status"] == "UNPUBLISHED"
    out = run("prolific", "bonus", str(study_folder), first.submission_id, "--amount", "1.00",
              "--reason", "thanks", code=1)  # fmt: skip
    assert "pays in USD" in out
    assert prolific.state.data["submissions"][first.submission_id].get("bonus_payments", []) == []
    assert all(e["currency"] == "GBP" for e in stored_entries(study_folder) if e["status"] != "cancelled")

    # A place added on Prolific's website and taken: `sync` books it as Prolific now reports it,
    # in dollars, beside the pounds, and every report keeps the two apart.
    prolific.state.data["studies"][study_id]["total_available_places"] = 2
    second = take_part(prolific, task_client, study_id, "2" * 24)
    run("prolific", "sync", str(study_folder))
    assert sorted(e["currency"] for e in stored_entries(study_folder) if e["status"] != "cancelled") == ["GBP", "USD"]
    out = run("prolific", "ledger", str(study_folder))
    assert "GBP: committed £3.33" in out and "USD: committed $3.33" in out
    assert "£6.66" not in out and "$6.66" not in out
    balance = run("prolific", "balance", str(study_folder))
    assert "In GBP:" in balance and "In USD:" in balance
    assert status_line(study_folder).endswith("committed £3.33 + $3.33 of a 50.00 cap, paid £3.33")
    # Approving the dollar place would reserve dollars beside pounds: refused, nothing paid.
    out = run("prolific", "approve", str(study_folder), second.submission_id, code=1)
    assert "pays in USD" in out
    assert prolific.state.data["submissions"][second.submission_id]["status"] == "AWAITING REVIEW"


def _as_the_version_before_currencies_left_it(study_folder) -> None:
    engine = make_engine(config.load(study_folder).database_url)
    try:
        with writing(engine) as connection:
            if "currency" in {c["name"] for c in inspect(connection).get_columns("prolific_payments")}:
                connection.exec_driver_sql("ALTER TABLE prolific_payments DROP COLUMN currency")
    finally:
        engine.dispose()


def test_an_older_database_opens_and_shows_its_entries_of_unknown_currency(run, study_folder, prolific, task_client):
    study_id, _ = publish(run, study_folder, places=2)
    take_part(prolific, task_client, study_id, "1" * 24)
    run("prolific", "review", str(study_folder), "--yes")
    _as_the_version_before_currencies_left_it(study_folder)

    # Read without Prolific: the amounts are there, their currency not guessed.
    assert status_line(study_folder).endswith(
        "committed 6.66 (currency unknown) of a 50.00 cap, paid 3.33 (currency unknown)")
    out = run("prolific", "ledger", str(study_folder))
    lines = ledger_lines(out)
    assert len(lines) == 2 and all(" unknown " in line and "£" not in line for line in lines)
    assert "unknown: committed 6.66 (currency unknown)" in out
    # Spending more would add pounds to amounts of unknown currency: refused, with the fix.
    _, out = publish(run, study_folder, places=1, code=1)
    assert "--earlier-currency CODE" in out and "6.66 (currency unknown)" in out

    out = run("prolific", "ledger", str(study_folder), "--earlier-currency", "gbp")
    assert "2 entries of unknown currency are now in GBP." in out
    assert "GBP: committed £6.66" in out and "currency GBP stated by the researcher" in out
    study_id, out = publish(run, study_folder, places=1)
    assert f"{study_id}: published." in out
    assert {e["currency"] for e in stored_entries(study_folder)} == {"GBP"}


def test_a_currency_prolific_does_not_pay_in_is_refused_and_the_entries_stay_unknown(run, study_folder, prolific, task_client):
    # A typo stored as the researcher's word would stay for good and refuse every later spend.
    study_id, _ = publish(run, study_folder, places=1)
    _as_the_version_before_currencies_left_it(study_folder)

    out = run("prolific", "ledger", str(study_folder), "--earlier-currency", "GPB", code=1)

    assert "'GPB' is not a currency Prolific pays in; nothing was recorded" in out and "GBP or USD" in out
    assert {e["currency"] for e in stored_entries(study_folder)} == {None}
    assert "2 entries of unknown currency are now in GBP." not in out
    out = run("prolific", "ledger", str(study_folder), "--earlier-currency", "GBP")
    assert "are now in GBP" in out
    out = run("prolific", "ledger", str(study_folder), "--earlier-currency", "GBP")
    assert "No entry is of unknown currency" in out and "0 entries" not in out


def test_the_budgets_example_in_the_currency_fix_is_one_the_study_accepts(run, study_folder):
    """`study init` thinks in dollars; a pound workspace refuses a "$" budget, and the example
    the fix gives is a whole study's budget, written in pounds as study.toml takes it."""
    with_prolific(study_folder, budget="$50.00")
    out = run("prolific", "balance", str(study_folder), code=1)
    assert "[prolific] budget is '$50.00', in USD, but this Prolific workspace pays in GBP" in out
    example = re.search(r'e\.g\. budget = "([^"]+)"', out).group(1)
    assert example == "£80.00"
    with_prolific(study_folder, budget=example)
    assert "Budget cap: £80.00" in run("prolific", "balance", str(study_folder))



def test_an_amount_below_the_penny_names_the_pound_workspaces_penny(run, study_folder, prolific):
    out = run("prolific", "draft", str(study_folder), "--reward", "2.505", code=1)
    assert "--reward: '2.505' has fractions of a penny" in out and "cent" not in out
    assert prolific.state.data["studies"] == {}


def test_a_consent_page_promising_dollars_is_not_drafted_as_pounds(run, study_folder, prolific):
    """[prolific] reward = "2.50" in a pound workspace pays £2.50; the consent page `study init`
    wrote still promises "$2.50", so participants would be told another currency than they get."""
    with_pay(study_folder, "$2.50")
    out = run("prolific", "draft", str(study_folder), "--places", "1", "--publish", code=1)
    assert "The consent page promises pay = '$2.50' ([study] in" in out
    assert "would pay £2.50 per place (this workspace pays in GBP)" in out
    assert 'Fix: make them agree ([study] pay = "£2.50"' in out and "--force" in out
    assert prolific.state.data["studies"] == {}  # nothing drafted, nothing recorded
    out = run("prolific", "draft", str(study_folder), "--places", "1", "--force")
    assert "1 places at £2.50" in out
