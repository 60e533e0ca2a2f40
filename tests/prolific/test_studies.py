"""Drafting, publishing and changing Prolific studies: the real provider code over HTTP against
the emulator, with the budget cap and the rule that a study touches only its own studies."""

from __future__ import annotations

import httpx
import pytest

from study.prolific import ledger, studies
from study.store import reading
from tests.prolific.conftest import TASK_URL
from tests.store.locks import until_done_or_waiting
from tests.store.conftest import postgres_url  # noqa: F401 - the cluster, shared as a fixture


def draft(ctx, **changes):
    values = {"name": "Write with AI", "reward": 250, "places": 3, "estimated_minutes": 10,
              "task_url": TASK_URL, **changes}  # fmt: skip
    return studies.create_draft(ctx, studies.Draft(**values))


def on_prolific(ctx, study_id):
    return ctx.client.get(f"studies/{study_id}/")


def fault(prolific, method, path, *, when="after", status=None):
    answer = httpx.post(prolific.url + "/_emulator/faults",
                        json={"method": method, "path": path, "when": when, "times": 1, "status": status})  # fmt: skip
    assert answer.status_code in (200, 201), answer.text


def test_a_draft_carries_prolifics_url_parameters_its_own_code_and_nothing_is_reserved(ctx):
    made = draft(ctx, round=None)
    study = on_prolific(ctx, made["study_id"])
    assert study["status"] == "UNPUBLISHED"
    assert study["external_study_url"] == (
        TASK_URL + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert study["prolific_id_option"] == "url_parameters"
    assert study["completion_codes"][0]["code"] == made["completion_code"]
    assert (study["reward"], study["total_available_places"]) == (250, 3)
    other = draft(ctx)
    assert other["completion_code"] != made["completion_code"]
    with reading(ctx.engine) as connection:
        assert ledger.totals(connection, ctx.environment, ctx.currency).committed.total == 0


def test_a_reward_below_prolifics_hourly_minimum_is_refused_naming_the_field_and_leaves_nothing(ctx):
    with pytest.raises(studies.StudyError, match=r"reward .* below Prolific's minimum hourly rate.*Fix: raise --reward"):
        draft(ctx, reward=50, estimated_minutes=30)
    with pytest.raises(studies.StudyError, match="task_url .* not an https URL"):
        draft(ctx, task_url="ftp://study.example.org/task")
    assert list(ctx.client.pages("studies/")) == []
    assert studies.rows(ctx) == []


def test_publishing_reserves_the_calculators_cost_fees_included_under_the_cap(make_ctx):
    ctx = make_ctx(budget="9.00")
    made = draft(ctx, reward=250, places=3)
    cost = studies.quote(ctx, 250, 3)
    assert cost.pay == 750 and cost.fees > 0  # Prolific's fee, not a hard-coded one
    with pytest.raises(ledger.BudgetExceeded, match=r"budget cap is \$9.00"):
        studies.publish(ctx, made["study_id"])
    assert on_prolific(ctx, made["study_id"])["status"] == "UNPUBLISHED"
    with reading(ctx.engine) as connection:
        assert ledger.totals(connection, ctx.environment, ctx.currency).committed.total == 0

    # $9.99 holds the three approvals' charges but not the calculator's $10.00 for the study:
    # the cap counts the larger, so it refuses (the notes: budget by the calculator).
    with pytest.raises(ledger.BudgetExceeded, match=r"budget cap is \$9.99"):
        studies.publish(make_ctx(budget="9.99"), made["study_id"])

    roomy = make_ctx(budget="100.00")
    assert studies.publish(roomy, made["study_id"]) == "published"
    assert on_prolific(roomy, made["study_id"])["status"] == "ACTIVE"
    with reading(roomy.engine) as connection:
        totals = ledger.totals(connection, roomy.environment, roomy.currency)
    # Each place is reserved at what approving it is charged (the ledger reads as the invoice);
    # the cap counted the larger of that and the calculator's answer for the whole study
    # (rounded once: $10.00 for three places charged $3.33 each), as the notes on Prolific say.
    each = studies.place_charge(roomy, 250)
    assert (totals.reserved.pay, totals.reserved.fees) == (3 * each.pay, 3 * each.fees)
    whole = roomy.client.post("study-cost-calculator/", {"reward": 250, "total_available_places": 3})["total_cost"]
    assert cost.total == max(3 * each.total, int(round(float(whole)))) > totals.reserved.total
    assert studies.publish(roomy, made["study_id"]) == "already ACTIVE"


def test_a_study_never_touches_a_prolific_study_it_did_not_create(ctx):
    foreign = ctx.client.post("studies/", {
        "name": "Someone else's", "description": "Not ours.", "reward": 300,
        "external_study_url": "https://other.example.org/?PROLIFIC_PID={{%PROLIFIC_PID%}}",
        "prolific_id_option": "url_parameters", "total_available_places": 1,
        "estimated_completion_time": 10,
        "completion_codes": [{"code": "X", "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
    })  # fmt: skip
    with pytest.raises(studies.StudyError, match="not one of this study's"):
        studies.publish(ctx, foreign["id"])
    with pytest.raises(studies.StudyError, match="not one of this study's"):
        studies.transition(ctx, foreign["id"], "STOP")
    assert on_prolific(ctx, foreign["id"])["status"] == "UNPUBLISHED"


def test_a_draft_prolific_refuses_leaves_nothing_behind(ctx, prolific):
    fault(prolific, "POST", "/api/v1/studies/", when="before", status=400)
    with pytest.raises(studies.StudyError, match="Prolific refused the draft"):
        draft(ctx)
    assert studies.rows(ctx) == [] and list(ctx.client.pages("studies/")) == []


def test_a_draft_whose_answer_was_lost_is_found_again_not_made_twice(ctx, prolific):
    fault(prolific, "POST", "/api/v1/studies/")
    with pytest.raises(studies.StudyError, match="Run the same command again"):
        draft(ctx)
    assert studies.recover(ctx) != []
    assert len(list(ctx.client.pages("studies/"))) == 1
    (row,) = studies.rows(ctx)
    assert row["status"] == "UNPUBLISHED" and row["study_id"]


def test_added_places_are_reserved_first_and_a_crashed_add_is_finished_not_doubled(ctx, prolific):
    made = draft(ctx, places=2)
    studies.publish(ctx, made["study_id"])
    fault(prolific, "PATCH", "/api/v1/studies/*")
    with pytest.raises(studies.StudyError, match="Run the same command again"):
        studies.add_places(ctx, made["study_id"], 3)
    assert studies.add_places(ctx, made["study_id"], 3) == 5
    assert on_prolific(ctx, made["study_id"])["total_available_places"] == 5
    with reading(ctx.engine) as connection:
        open_places = ledger.open_places(connection, ctx.environment, made["study_id"])
    assert len(open_places) == 5


def test_stopping_a_study_releases_the_places_nobody_took(ctx):
    made = draft(ctx, places=3)
    studies.publish(ctx, made["study_id"])
    assert studies.transition(ctx, made["study_id"], "STOP") in ("AWAITING REVIEW", "COMPLETED")
    assert studies.release_places(ctx, made["study_id"], keep=0, note="stopped") == 3
    with reading(ctx.engine) as connection:
        totals = ledger.totals(connection, ctx.environment, ctx.currency)
    assert totals.committed.total == 0 and totals.released.pay == 750


def test_a_publish_prolific_refuses_releases_its_reservation(ctx, prolific):
    made = draft(ctx, places=2)
    fault(prolific, "POST", "/api/v1/studies/*/transition/", when="before", status=400)
    with pytest.raises(studies.StudyError, match=f"Prolific did not publish study {made['study_id']}"):
        studies.publish(ctx, made["study_id"])
    with reading(ctx.engine) as connection:
        totals = ledger.totals(connection, ctx.environment, ctx.currency)
    assert totals.committed.total == 0 and totals.released.pay == 500
    assert studies.publish(ctx, made["study_id"]) == "published"  # reserved afresh, once
    with reading(ctx.engine) as connection:
        assert ledger.totals(connection, ctx.environment, ctx.currency).reserved.pay == 500


@pytest.mark.postgres
def test_two_studies_published_at_once_on_postgresql_never_pass_the_cap_together(postgres_url):  # noqa: F811
    """What `publish` does for each study: check the cap, then reserve its places."""
    import threading

    from study.prolific import money
    from study.prolific.context import Budget
    from study.store import create_tables, make_engine, writing
    from study.store.prolific import prolific_payments

    engine = make_engine(postgres_url)
    create_tables(engine)
    with engine.begin() as connection:
        connection.execute(prolific_payments.delete())
    budget, environment = Budget(cap=1000, live=True), "prolific:researcher"
    needed = money.Cost(600, 200, "GBP")  # either study fits under 10.00, not both

    def publish(study_id: str) -> None:
        with writing(engine) as connection:
            ledger.check_budget(connection, environment, budget, needed, f"publishing {study_id}")
            ledger.plan_places(connection, environment, study_id=study_id, reward=300, fee=100,
                               count=2, currency="GBP")  # fmt: skip

    second: dict = {}

    def second_command() -> None:
        try:
            publish("second")
            second["outcome"] = "reserved"
        except ledger.BudgetExceeded as error:
            second["outcome"] = str(error)

    try:
        with writing(engine) as connection:
            ledger.check_budget(connection, environment, budget, needed, "publishing first")
            ledger.plan_places(connection, environment, study_id="first", reward=300, fee=100,
                               count=2, currency="GBP")  # fmt: skip
            thread = threading.Thread(target=second_command)
            thread.start()
            until_done_or_waiting(thread, engine)
        thread.join()
        assert "Refusing publishing second" in second["outcome"]
        with reading(engine) as connection:
            assert ledger.totals(connection, environment, "GBP").committed.total == 800
    finally:
        engine.dispose()



def test_re_running_a_draft_whose_answer_was_lost_makes_no_second_study(ctx, prolific):
    fault(prolific, "POST", "/api/v1/studies/")
    with pytest.raises(studies.StudyError, match="Run the same command again"):
        draft(ctx)
    again = draft(ctx)  # what the error tells the researcher to do
    on_prolific_now = list(ctx.client.pages("studies/"))
    assert [s["id"] for s in on_prolific_now] == [again["study_id"]]
    assert [r["study_id"] for r in studies.rows(ctx)] == [again["study_id"]]


def test_releasing_more_of_the_newest_places_than_are_open_releases_every_open_one(ctx):
    # An add refused after participants took places meanwhile asks to release more than are left.
    made = draft(ctx, places=3)
    studies.publish(ctx, made["study_id"])
    assert studies.release_places(ctx, made["study_id"], newest=5, note="adding places failed") == 3
    with reading(ctx.engine) as connection:
        assert ledger.open_places(connection, ctx.environment, made["study_id"]) == []


def test_the_same_publish_run_twice_at_once_reserves_the_places_once(ctx, monkeypatch):
    """A second shell publishes the same study while the first asks Prolific's calculator: both
    say "published", and the study's three places are reserved once, not six times."""
    made = draft(ctx, reward=250, places=3)
    ask_calculator = studies.place_charge

    def second_shell_meanwhile(*args):
        monkeypatch.setattr(studies, "place_charge", ask_calculator)
        assert studies.publish(ctx, made["study_id"]) == "published"
        return ask_calculator(*args)

    monkeypatch.setattr(studies, "place_charge", second_shell_meanwhile)
    assert studies.publish(ctx, made["study_id"]) == "published"
    assert on_prolific(ctx, made["study_id"])["status"] == "ACTIVE"
    with reading(ctx.engine) as connection:
        held = [p for p in ledger.places(connection, ctx.environment, made["study_id"])
                if p["status"] != "cancelled"]  # fmt: skip
        reserved = ledger.totals(connection, ctx.environment, ctx.currency).reserved
    assert len(held) == 3
    assert reserved == studies.place_charge(ctx, 250).times(3)
