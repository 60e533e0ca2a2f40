"""Bonuses: set up, then paid asynchronously; pay is not idempotent, exactly as on Prolific."""

from __future__ import annotations

import pytest
import requests

from tests.prolific.emulator.conftest import control, take_part_and_finish

ALICE, BOB = "a" * 24, "b" * 24


@pytest.fixture
def study(researcher, emulator):
    study = researcher.published()
    for pid in (ALICE, BOB):
        take_part_and_finish(emulator, study["id"], pid)
    return study


def _bonuses(researcher, study) -> dict:
    return {s["participant_id"]: s["bonus_payments"] for s in researcher.submissions(study["id"])}


def _set_up(researcher, study, csv=f"{ALICE},1.50\n{BOB},0.75\n"):
    return researcher.post("submissions/bonus-payments/",
                           json={"study_id": study["id"], "csv_bonuses": csv})


def test_setting_up_answers_the_cost_and_pays_nothing(researcher, study):
    answer = _set_up(researcher, study)
    assert answer.status_code == 201
    # Fees to a hundredth of a cent, as Prolific's docs show them ("fees": 283.34).
    assert answer.json()["amount"] == 225 and answer.json()["fees"] == 74.93
    assert answer.json()["total_amount"] == 299.93 and answer.json()["study"] == study["id"]
    assert _bonuses(researcher, study) == {ALICE: [], BOB: []}


def test_ids_that_did_not_take_part_and_bad_amounts_are_refused(researcher, study):
    stranger = _set_up(researcher, study, csv=f"{ALICE},1.00\n{'c' * 24},1.00")
    assert stranger.status_code == 400 and "c" * 24 in str(stranger.json()["error"]["detail"])
    for amount in ("-1", "abc", "1.005"):
        assert _set_up(researcher, study, csv=f"{ALICE},{amount}").status_code == 400


def test_pay_is_asynchronous(researcher, emulator, study):
    bulk = _set_up(researcher, study).json()
    before = researcher.balance()["total_balance"]
    paid = researcher.post(f"bulk-bonus-payments/{bulk['id']}/pay/")
    assert paid.status_code == 202
    assert _bonuses(researcher, study) == {ALICE: [], BOB: []}  # not yet
    assert researcher.balance()["total_balance"] == before
    control(emulator, "clock", {"advance": 61})  # "in the following minutes"
    assert _bonuses(researcher, study) == {ALICE: [150], BOB: [75]}
    assert researcher.balance()["total_balance"] == before - 300


def test_paying_the_same_bulk_payment_twice_pays_twice(researcher, emulator, study):
    bulk = _set_up(researcher, study).json()
    before = researcher.balance()["total_balance"]
    for _ in range(2):
        assert researcher.post(f"bulk-bonus-payments/{bulk['id']}/pay/").status_code == 202
    assert control(emulator, "settle").json() == {"settled": 2}
    assert _bonuses(researcher, study) == {ALICE: [150, 150], BOB: [75, 75]}
    assert researcher.balance()["total_balance"] == before - 600
    (record,) = control(emulator, "bonus-payments", method="get").json()["results"]
    assert record["pay_calls"] == 2 and all(p["settled_at"] for p in record["payments"])


def test_an_answer_lost_after_paying_still_paid(researcher, emulator, study):
    bulk = _set_up(researcher, study).json()
    control(emulator, "faults", {"method": "POST", "when": "after",
                                 "path": "/api/v1/bulk-bonus-payments/*/pay/"})
    with pytest.raises(requests.ConnectionError):
        researcher.post(f"bulk-bonus-payments/{bulk['id']}/pay/")
    control(emulator, "settle")
    assert _bonuses(researcher, study) == {ALICE: [150], BOB: [75]}


def test_a_failure_before_paying_pays_nothing(researcher, emulator, study):
    bulk = _set_up(researcher, study).json()
    control(emulator, "faults", {"method": "POST", "when": "before", "status": 503,
                                 "path": "/api/v1/bulk-bonus-payments/*/pay/"})
    failed = researcher.post(f"bulk-bonus-payments/{bulk['id']}/pay/")
    assert failed.status_code == 503 and failed.json()["error"]["status"] == 503
    assert control(emulator, "settle").json() == {"settled": 0}
    assert _bonuses(researcher, study) == {ALICE: [], BOB: []}
    assert control(emulator, "faults", method="get").json() == {"faults": []}  # used up


def test_the_fault_header_fails_one_request(researcher, study):
    bulk = _set_up(researcher, study).json()
    lost = researcher.post(f"bulk-bonus-payments/{bulk['id']}/pay/",
                           headers={"X-Emulator-Fault": "after; status=500"})
    assert lost.status_code == 500
    assert researcher.get(f"studies/{study['id']}/").status_code == 200


def test_paying_an_unknown_id_is_404_and_a_short_balance_is_refused(tmp_path):
    from study.prolific.emulator import State, serve_in_thread
    from tests.prolific.emulator.conftest import Researcher

    running = serve_in_thread(State(tmp_path / "poor.json", balance=700))
    try:
        researcher = Researcher(running)
        assert researcher.post(f"bulk-bonus-payments/{'f' * 24}/pay/").status_code == 404
        study = researcher.published(total_available_places=1)  # holds 200 of the 700
        take_part_and_finish(running, study["id"], ALICE)
        bulk = researcher.post("submissions/bonus-payments/", json={
            "study_id": study["id"], "csv_bonuses": f"{ALICE},4.00"}).json()
        refused = researcher.post(f"bulk-bonus-payments/{bulk['id']}/pay/")
        assert refused.status_code == 400 and "balance" in refused.json()["error"]["detail"]
    finally:
        running.stop()
