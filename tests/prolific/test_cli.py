"""`study prolific ...` as a researcher types it, against the emulator."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from study.cli import main
from study.providers import Provider, UnknownProvider, names, provider_for
from tests.prolific.conftest import TASK_URL, with_prolific
from tests.prolific.walk import take_part


@pytest.fixture
def run(prolific, study_folder):
    with_prolific(study_folder, reward="2.50", estimated_minutes=10, task_url=TASK_URL,
                  budget="50.00", completion_url=prolific.url + "/submissions/complete")  # fmt: skip

    def invoke(*args, input=None, code=0):
        result = CliRunner().invoke(main, ["prolific", *args], input=input, catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result.output

    return invoke


def test_draft_publish_review_bonus_and_ledger_from_the_command_line(run, study_folder, prolific, ctx, task_client):
    out = run("draft", str(study_folder), "--places", "2", "--publish")
    study_id = re.search(r"Draft (\w+):", out).group(1)
    assert "completion code" in out and "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID=" in out
    assert "publishing" in out and "Prolific fees" in out and f"{study_id}: published." in out
    took = take_part(prolific, task_client, study_id, "9" * 24)
    out = run("review", str(study_folder), "--yes")
    assert "Submissions: 1 AWAITING REVIEW." in out and f"{took.submission_id}: approved" in out
    out = run("bonus", str(study_folder), took.submission_id, "--amount", "1.00", "--reason", "thanks")
    assert "Paid $1.00 (+$0.33 fees)" in out
    again = run("bonus", str(study_folder), took.submission_id, "--amount", "1.00", "--reason", "thanks")
    assert "Already paid" in again
    ledger = run("ledger", str(study_folder))
    assert "reward confirmed" in ledger and "bonus  confirmed" in ledger
    assert "places" in run("list", str(study_folder))


@pytest.mark.parametrize("amount", ["1e3", "1_0", "\u0661\u0662"])
def test_a_bonus_written_other_than_in_plain_digits_is_refused_and_nothing_is_paid(run, study_folder, prolific,
                                                                                   task_client, amount):
    # Python's Decimal reads "1e3" as 1000, "1_0" as 10 and Arabic-Indic digits as theirs.
    study_id = re.search(r"Draft (\w+):", run("draft", str(study_folder), "--places", "1", "--publish")).group(1)
    took = take_part(prolific, task_client, study_id, "8" * 24)
    run("review", str(study_folder), "--yes")
    out = run("bonus", str(study_folder), took.submission_id, "--amount", amount, "--reason", "thanks", code=1)
    assert "is not an amount of money" in out and 'write it like "2.50"' in out
    assert "bonus" not in run("ledger", str(study_folder))
    assert prolific.state.data["bulk_bonuses"] == {}


def test_bad_input_names_the_field_and_the_fix(run, study_folder, monkeypatch):
    out = run("draft", str(study_folder), "--reward", "0.10", code=1)
    assert "below Prolific's minimum hourly rate" in out and "Fix: raise --reward" in out
    out = run("reject", str(study_folder), "ffffffffffffffffffffffff", "--message", "short",
              "--category", "LOW_EFFORT", code=1)  # fmt: skip
    assert "--message has 5 characters; Prolific needs at least 100" in out
    monkeypatch.setenv("PROLIFIC_TOKEN", "wrong")
    out = run("list", str(study_folder), code=1)
    assert "401" in out and "Fix: set PROLIFIC_TOKEN" in out and "wrong" not in out
    monkeypatch.delenv("PROLIFIC_TOKEN")
    assert "No Prolific API token: set PROLIFIC_TOKEN" in run("list", str(study_folder), code=1)
    out = run("list", str(study_folder), "--api-url", "http://api.example.org/api/v1/", code=1)
    assert "plain http to another machine" in out
    monkeypatch.setenv("PROLIFIC_TOKEN", "a-real-looking-token")
    out = run("list", str(study_folder), "--api-url", "https://api.example.org/api/v1/", code=1)
    assert "is Prolific itself" in out and "Fix: pass --live" in out


def test_participants_of_a_study_get_messages_and_others_are_refused(run, study_folder, prolific, ctx, task_client):
    out = run("draft", str(study_folder), "--places", "1", "--publish")
    study_id = re.search(r"Draft (\w+):", out).group(1)
    take_part(prolific, task_client, study_id, "7" * 24)
    out = run("notify", str(study_folder), study_id, "7" * 24, "8" * 24, "--message", "Thank you!")
    assert f"{'7' * 24}: sent" in out and f"{'8' * 24}: failed" in out
    assert "not one of this study's" in run("notify", str(study_folder), "f" * 24, "7" * 24,
                                            "--message", "Hi", code=1)  # fmt: skip


def test_both_providers_stand_behind_one_interface():
    assert names() == ("mturk", "prolific")
    for name in names():
        provider = provider_for(name)
        assert isinstance(provider, Provider) and provider.name == name
    with pytest.raises(UnknownProvider, match="Fix: use one of mturk, prolific"):
        provider_for("crowdflower")


def test_a_blocked_participant_cannot_join_the_studys_next_prolific_study(run, study_folder, prolific):
    import httpx

    assert "Blocked 1 participants." in run("block", str(study_folder), "6" * 24)
    out = run("draft", str(study_folder), "--places", "1", "--publish")
    study_id = re.search(r"Draft (\w+):", out).group(1)
    refused = httpx.post(prolific.url + "/_emulator/take-part",
                         json={"study_id": study_id, "participant_id": "6" * 24})  # fmt: skip
    assert refused.status_code == 409
    welcome = httpx.post(prolific.url + "/_emulator/take-part",
                         json={"study_id": study_id, "participant_id": "5" * 24})  # fmt: skip
    assert welcome.status_code == 201
    assert "blocked    " in run("groups", str(study_folder)) and "1 members" in run("groups", str(study_folder))


def test_live_publishing_shows_the_calculators_cost_and_spends_nothing_until_confirmed(
    run, study_folder, ctx, monkeypatch
):
    from study.prolific.context import Context

    out = run("draft", str(study_folder), "--places", "2")
    study_id = re.search(r"Draft (\w+):", out).group(1)
    # Only the "is this Prolific itself" answer is forced: the calls still go to the emulator.
    monkeypatch.setattr(Context, "live", property(lambda self: True))
    with_prolific(study_folder, completion_url="https://app.prolific.com/submissions/complete")
    cost = ctx.client.post("study-cost-calculator/", {"reward": 250, "total_available_places": 2})
    shown = f"${cost['total_cost'] / 100:.2f}"

    out = run("publish", str(study_folder), study_id, "--live", input="n\n", code=1)
    assert f"LIVE: publishing {study_id} will cost up to {shown}" in out and "Nothing published." in out
    # The room under the cap is said before the researcher confirms: nothing is committed yet.
    assert "of real money ($50.00 left under the $50.00 budget cap). Continue?" in out
    assert ctx.client.get(f"studies/{study_id}/")["status"] == "UNPUBLISHED"
    out = run("publish", str(study_folder), study_id, "--live", input="y\n")
    assert f"{study_id}: published." in out
    assert ctx.client.get(f"studies/{study_id}/")["status"] == "ACTIVE"


def test_pause_and_start_turn_recruiting_off_and_on(run, study_folder, ctx):
    out = run("draft", str(study_folder), "--places", "1", "--publish")
    study_id = re.search(r"Draft (\w+):", out).group(1)
    run("pause", str(study_folder), study_id)
    assert ctx.client.get(f"studies/{study_id}/")["status"] == "PAUSED"
    run("start", str(study_folder), study_id)
    assert ctx.client.get(f"studies/{study_id}/")["status"] == "ACTIVE"


@pytest.mark.parametrize("where", ["[study] pay", "--reward"])
def test_dollars_are_never_paid_as_pounds_on_a_pound_workspace(pound_workspace, study_folder, where):
    # `study init` promises pay = "$2.50" on the consent page; [prolific] sets no reward.
    with_prolific(study_folder, estimated_minutes=10, task_url=TASK_URL, budget="50.00",
                  completion_url=pound_workspace.url + "/submissions/complete")  # fmt: skip
    extra = ["--reward", "$3.00"] if where == "--reward" else []
    result = CliRunner().invoke(main, ["prolific", "draft", str(study_folder), *extra])
    assert result.exit_code == 1, result.output
    assert where in result.output and "GBP" in result.output and "Fix" in result.output
    assert "Traceback" not in result.output
    assert pound_workspace.state.data["studies"] == {}  # nothing drafted at £2.50 or £3.00


def test_a_reward_other_than_the_consent_pages_pay_is_refused_without_force(run, study_folder, prolific):
    # `study init`'s consent page promises pay = "$2.50"; `study mturk post` refuses the same.
    out = run("draft", str(study_folder), "--reward", "2.00", code=1)
    assert "The consent page promises pay = '$2.50'" in out and "would pay $2.00 per place" in out
    assert "Nothing was drafted." in out and "or pass --force" in out
    assert prolific.state.data["studies"] == {}
    assert "1 places at $3.00" in run("draft", str(study_folder), "--reward", "3.00", "--force")


def test_pay_in_words_agrees_only_with_the_first_amount_it_names(run, study_folder, prolific):
    # "$2.50 plus a $2.00 bonus": the study pays $2.50; a reward of $2.00 names the bonus.
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('pay = "$2.50"', 'pay = "$2.50 plus a $2.00 bonus for the best stories"'))
    out = run("draft", str(study_folder), "--reward", "2.00", code=1)
    assert "would pay $2.00 per place" in out and prolific.state.data["studies"] == {}
    assert "1 places at $2.50" in run("draft", str(study_folder), "--reward", "2.50")


def test_live_refuses_a_dry_runs_addresses_participants_could_not_reach(run, study_folder, prolific, monkeypatch):
    from study.prolific.context import Context

    # A dry run's study: finished participants go to the emulator, as the README's dry run says.
    made = re.search(r"Draft (\w+):", run("draft", str(study_folder))).group(1)
    monkeypatch.setattr(Context, "live", property(lambda self: True))
    for command, nothing in ((("draft",), "Nothing was drafted."), (("publish", made), "Nothing was published.")):
        out = run(command[0], str(study_folder), *command[1:], "--live", input="y\n", code=1)
        assert f"[prolific] completion_url is '{prolific.url}/submissions/complete', an address on this machine" in out
        assert "Fix: remove completion_url from [prolific]" in out and nothing in out
    assert list(prolific.state.data["studies"]) == [made]
    assert prolific.state.data["studies"][made]["status"] == "UNPUBLISHED"

    with_prolific(study_folder, completion_url="https://app.prolific.com/submissions/complete")
    out = run("draft", str(study_folder), "--live", "--task-url", "http://127.0.0.1:5000/task", code=1)
    assert "the study URL 'http://127.0.0.1:5000/task' is on this machine" in out and "Fix: draft" in out
    assert list(prolific.state.data["studies"]) == [made]


def test_stopping_before_sync_keeps_the_reservation_of_a_place_a_participant_took(run, study_folder, prolific, ctx, task_client):
    from study.prolific import ledger
    from study.store import reading

    out = run("draft", str(study_folder), "--places", "3", "--publish")
    study_id = re.search(r"Draft (\w+):", out).group(1)
    took = take_part(prolific, task_client, study_id, "7" * 24)  # awaiting review, not synced yet
    out = run("stop", str(study_folder), study_id)
    assert "Released the reservation of 2 untaken places." in out
    run("sync", str(study_folder))
    with reading(ctx.engine) as connection:
        entry = ledger.reward_entry(connection, ctx.environment, took.submission_id)
        totals = ledger.totals(connection, ctx.environment, ctx.currency)
    # The participant's reward stays reserved under the cap, as it was before the stop.
    assert entry["status"] == "intended" and totals.reserved.pay == 250


def test_live_approve_of_a_submission_not_yet_synced_shows_the_reward_it_pays(
    run, study_folder, prolific, ctx, task_client, monkeypatch
):
    from study.prolific.context import Context

    out = run("draft", str(study_folder), "--places", "1", "--publish")
    study_id = re.search(r"Draft (\w+):", out).group(1)
    took = take_part(prolific, task_client, study_id, "9" * 24)  # finished; no `sync` since
    monkeypatch.setattr(Context, "live", property(lambda self: True))
    out = run("approve", str(study_folder), took.submission_id, "--live", input="n\n", code=1)
    # The place's reward and Prolific's fee on it, as publishing reserved them.
    assert "LIVE: approving 1 submissions will cost up to $3.33 ($2.50 to participants" in out
    assert "Nothing approved." in out
    assert ctx.client.get(f"submissions/{took.submission_id}/")["status"] == "AWAITING REVIEW"


def test_stop_run_again_after_its_answer_was_lost_releases_the_untaken_places(run, study_folder, prolific, ctx):
    import httpx

    from study.prolific import ledger
    from study.store import reading

    out = run("draft", str(study_folder), "--places", "3", "--publish")
    study_id = re.search(r"Draft (\w+):", out).group(1)
    # Prolific stops the study, and the answer never reaches the command (killed, connection lost).
    httpx.post(prolific.url + "/_emulator/faults", json={
        "method": "POST", "path": "/api/v1/studies/*/transition/", "when": "after"})  # fmt: skip
    run("stop", str(study_folder), study_id, code=1)
    status = ctx.client.get(f"studies/{study_id}/")["status"]
    assert status in ("AWAITING REVIEW", "COMPLETED")
    # The README's advice for any paying command: run it again.
    out = run("stop", str(study_folder), study_id)
    assert f"{study_id}: already {status}." in out
    assert "Released the reservation of 3 untaken places." in out
    with reading(ctx.engine) as connection:
        totals = ledger.totals(connection, ctx.environment, ctx.currency)
    assert totals.committed.total == 0 and totals.released.pay == 750


def _drafted(out: str) -> str:
    return re.search(r"Draft (\w+):", out).group(1)


def test_list_counts_each_studys_submissions_awaiting_review_until_they_are_decided(
    run, study_folder, prolific, task_client
):
    import httpx

    first = _drafted(run("draft", str(study_folder), "--places", "3", "--publish"))
    second = _drafted(run("draft", str(study_folder), "--places", "1", "--publish"))
    take_part(prolific, task_client, first, "1" * 24)
    take_part(prolific, task_client, first, "2" * 24)
    left = take_part(prolific, task_client, first, "3" * 24, finish=False)
    httpx.post(prolific.url + "/_emulator/return", json={"submission_id": left.submission_id})
    took = take_part(prolific, task_client, second, "4" * 24)
    listed = run("list", str(study_folder))
    assert (f"{first}  ACTIVE           2/3 places  $2.50  round -  0 in progress, 2 awaiting review, "
            "0 approved, 0 rejected, 1 returned, 0 timed out") in listed  # fmt: skip
    assert (f"{second}  AWAITING REVIEW  1/1 places  $2.50  round -  0 in progress, "
            "1 awaiting review") in listed  # fmt: skip
    assert (f"3 submission(s) awaiting review in all. Decide them with `study prolific review "
            f"{study_folder}`.") in listed  # fmt: skip

    run("approve", str(study_folder), took.submission_id)
    listed = run("list", str(study_folder))
    assert (f"{second}  COMPLETED        1/1 places  $2.50  round -  0 in progress, "
            "0 awaiting review, 1 approved") in listed  # fmt: skip
    assert "2 submission(s) awaiting review in all. Decide them with" in listed

    run("review", str(study_folder), "--yes")
    listed = run("list", str(study_folder))
    assert (f"{first}  ACTIVE           2/3 places  $2.50  round -  0 in progress, "
            "0 awaiting review, 2 approved") in listed  # fmt: skip
    assert "0 submission(s) awaiting review in all." in listed and "Decide them" not in listed


def test_list_asks_prolific_for_no_submissions_of_a_draft(run, study_folder, prolific, monkeypatch):
    # Nobody can join a draft: a study of many drafts is listed without a call for each.
    import requests

    draft = _drafted(run("draft", str(study_folder), "--places", "1"))
    published = _drafted(run("draft", str(study_folder), "--places", "1", "--publish"))
    asked = []
    send = requests.Session.request

    def recorded(self, method, url, *args, **kwargs):
        asked.append(url)
        return send(self, method, url, *args, **kwargs)

    monkeypatch.setattr(requests.Session, "request", recorded)
    listed = run("list", str(study_folder))
    assert f"{draft}  UNPUBLISHED      0/1 places  $2.50  round -\n" in listed
    assert f"{published}  ACTIVE" in listed and "0 submission(s) awaiting review in all." in listed
    assert [url for url in asked if "/submissions/" in url] == [
        f"{prolific.api}studies/{published}/submissions/"
    ]


def test_review_pays_a_withdrawn_participants_submission_once_and_says_they_withdrew(
    run, study_folder, prolific, task_client
):
    """They did the work: withdrawing takes their session out of the data, not out of payment."""
    study_id = re.search(r"Draft (\w+):", run("draft", str(study_folder), "--places", "1", "--publish")).group(1)
    took = take_part(prolific, task_client, study_id, "7" * 24)
    withdrawn = CliRunner().invoke(main, ["withdraw", "7" * 24, "--study", str(study_folder)])
    assert withdrawn.exit_code == 0, withdrawn.output

    out = run("review", str(study_folder), "--yes")
    again = run("review", str(study_folder), "--yes")

    assert "! the writer withdrew (study withdraw --study)" in out
    assert f"{took.submission_id}: approved" in out
    assert "approved" not in again  # once
    assert run("ledger", str(study_folder)).count("reward confirmed") == 1
