"""Token auth, the account's reads and the cost calculator answer as Prolific's API does."""

from __future__ import annotations

import requests


def test_requests_without_the_right_token_are_refused_in_prolifics_error_shape(emulator):
    missing = requests.get(emulator.api + "users/me/")
    wrong = requests.get(emulator.api + "users/me/", headers={"Authorization": "Token nope"})
    assert missing.status_code == wrong.status_code == 401
    assert missing.json()["error"]["detail"] == "Authentication credentials were not provided."
    assert wrong.json()["error"]["detail"] == "Invalid token."
    assert set(wrong.json()["error"]) >= {"status", "error_code", "title", "detail"}
    assert wrong.json()["error"]["status"] == 401


def test_me_names_the_researcher_and_paths_work_with_or_without_the_slash(researcher):
    me = researcher.get("users/me/")
    assert me.status_code == 200
    assert len(me.json()["id"]) == 24 and me.json()["user_type"] == "researcher"
    assert researcher.get("users/me").json()["id"] == me.json()["id"]


def test_unknown_paths_and_methods_get_404_and_405(researcher):
    assert researcher.get("no-such-thing/").status_code == 404
    assert researcher.get("studies/0123456789abcdef01234567/").json()["error"]["status"] == 404
    assert researcher.delete("users/me/").status_code == 405


def test_the_workspace_its_project_and_balance(researcher):
    me = researcher.get("users/me/").json()
    listed = researcher.get("workspaces/").json()["results"]
    assert [w["id"] for w in listed] == [me["current_workspace_id"]]
    projects = researcher.get(f"workspaces/{me['current_workspace_id']}/projects/").json()
    assert [p["id"] for p in projects["results"]] == [me["current_project_id"]]
    balance = researcher.balance()
    assert balance["total_balance"] == balance["available_balance"] == 100_000
    assert balance["currency_code"] == "USD"
    assert researcher.get("workspaces/0123456789abcdef01234567/balance/").status_code == 404


def test_the_cost_calculator_adds_the_service_fee(researcher):
    answer = researcher.post("study-cost-calculator/",
                             json={"reward": 150, "total_available_places": 10})
    assert answer.status_code == 200
    assert answer.json() == {"total_cost": 1500 + 500}  # 33.3% of 1,500 cents, rounded
    missing = researcher.post("study-cost-calculator/", json={"reward": 150})
    assert missing.status_code == 400
    assert "total_available_places" in missing.json()["error"]["detail"]


def test_vat_on_the_fee_where_the_account_pays_it(tmp_path):
    from study.prolific.emulator import State, serve_in_thread
    from tests.prolific.emulator.conftest import Researcher

    running = serve_in_thread(State(tmp_path / "uk.json", currency="GBP", vat_rate=0.2))
    try:
        answer = Researcher(running).post("study-cost-calculator/",
                                          json={"reward": 100, "total_available_places": 3})
        assert answer.json() == {"total_cost": 300 + 100 + 20}
    finally:
        running.stop()
