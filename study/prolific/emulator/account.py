"""The researcher, the workspace and its one project, the balance and the study cost calculator.

The emulator is one researcher with one workspace holding one project (Prolific's hierarchy is
workspace > project > study); its token answers for that workspace, as a real token is per
workspace. The API cannot top up a balance (docs: "Not supported"), so neither can the emulator's.
"""

from __future__ import annotations

from study.prolific.emulator.call import Call
from study.prolific.emulator.errors import invalid, not_found
from study.prolific.emulator.state import State


def me(state: State, call: Call) -> tuple[int, dict]:
    user, workspace = state.data["user"], state.data["workspace"]
    return 200, {
        **user,
        "name": f"{user['first_name']} {user['last_name']}",
        "username": user["email"],
        "user_type": "researcher",
        "currency_code": state.currency,
        "balance": state.data["balance"],
        "available_balance": state.available_balance(),
        "current_workspace_id": workspace["id"],
        "current_project_id": state.data["project"]["id"],
    }


def _workspace_view(state: State) -> dict:
    workspace = state.data["workspace"]
    return {
        "id": workspace["id"],
        "title": workspace["title"],
        "description": "",
        "owner": state.data["user"]["id"],
        "users": [{"id": state.data["user"]["id"], "email": state.data["user"]["email"],
                   "roles": ["WORKSPACE_ADMIN"]}],
        "currency_code": state.currency,
        "projects": [{"id": state.data["project"]["id"]}],
    }


def _workspace(state: State, workspace_id: str) -> dict:
    if workspace_id != state.data["workspace"]["id"]:
        raise not_found()
    return state.data["workspace"]


def workspaces(state: State, call: Call) -> tuple[int, dict]:
    return 200, {"results": [_workspace_view(state)], "meta": {"count": 1}}


def workspace(state: State, call: Call, workspace_id: str) -> tuple[int, dict]:
    _workspace(state, workspace_id)
    return 200, _workspace_view(state)


def projects(state: State, call: Call, workspace_id: str) -> tuple[int, dict]:
    _workspace(state, workspace_id)
    project = state.data["project"]
    view = {"id": project["id"], "title": project["title"], "description": "",
            "owner": state.data["user"]["id"], "workspace": workspace_id}
    return 200, {"results": [view], "meta": {"count": 1}}


def balance(state: State, call: Call, workspace_id: str) -> tuple[int, dict]:
    _workspace(state, workspace_id)
    held = state.held()
    total, available = state.data["balance"], state.available_balance()
    return 200, {
        "currency_code": state.currency,
        "total_balance": total,
        "balance_breakdown": {"rewards": total - held.fees - held.vat, "fees": held.fees,
                              "vat": held.vat},
        "available_balance": available,
        "available_balance_breakdown": {"rewards": available, "fees": 0, "vat": 0},
    }


def cost(state: State, call: Call) -> tuple[int, dict]:
    """POST study-cost-calculator/: reward x places with the fee and VAT, in cents."""
    reward = _number(call.body, "reward")
    places = _number(call.body, "total_available_places")
    return 200, {"total_cost": state.charge(round(reward * places)).total}


def _number(body: dict, name: str) -> float:
    value = body.get(name)
    if value is None:
        raise invalid(name, "This field is required.")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise invalid(name, "A valid number is required.")
    return value
