"""The emulator's HTTP side: Prolific's researcher API under /api/v1/, the participant's pages,
and the test controls under /_emulator/. WIRE.md (next to this file) documents every route.

API calls need `Authorization: Token <token>` (401 in Prolific's error shape without it or with a
wrong one), take and give JSON, and are answered after the state has caught up with the clock.
Paths are matched with or without their trailing slash, without redirecting.
"""

from __future__ import annotations

import json
import socket
import traceback
from html import escape

from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from study.prolific.emulator import (
    account,
    bonuses,
    fees,
    groups,
    messages,
    participant,
    studies,
    submissions,
)
from study.prolific.emulator.call import Call
from study.prolific.emulator.errors import ApiError, error_body
from study.prolific.emulator.faults import HEADER, Fault, Faults, from_header, parse
from study.prolific.emulator.state import State

API = "/api/v1"
# (path, method, operation); path parameters are passed to the operation by name.
OPERATIONS = [
    ("/users/me/", "GET", account.me),
    ("/workspaces/", "GET", account.workspaces),
    ("/workspaces/<workspace_id>/", "GET", account.workspace),
    ("/workspaces/<workspace_id>/projects/", "GET", account.projects),
    ("/workspaces/<workspace_id>/balance/", "GET", account.balance),
    ("/study-cost-calculator/", "POST", account.cost),
    ("/studies/", "GET", studies.list_studies),
    ("/studies/", "POST", studies.create),
    ("/studies/<study_id>/", "GET", studies.get),
    ("/studies/<study_id>/", "PATCH", studies.update),
    ("/studies/<study_id>/", "DELETE", studies.delete),
    ("/studies/<study_id>/transition/", "POST", studies.transition),
    ("/studies/<study_id>/submissions/", "GET", submissions.of_study),
    ("/submissions/", "GET", submissions.list_all),
    ("/submissions/bulk-approve/", "POST", submissions.bulk_approve),
    ("/submissions/bonus-payments/", "POST", bonuses.create),
    ("/submissions/<submission_id>/", "GET", submissions.get),
    ("/submissions/<submission_id>/transition/", "POST", submissions.transition),
    ("/bulk-bonus-payments/<bulk_id>/pay/", "POST", bonuses.pay),
    ("/participant-groups/", "GET", groups.list_groups),
    ("/participant-groups/", "POST", groups.create),
    ("/participant-groups/<group_id>/", "GET", groups.get),
    ("/participant-groups/<group_id>/", "PATCH", groups.update),
    ("/participant-groups/<group_id>/", "DELETE", groups.delete),
    ("/participant-groups/<group_id>/participants/", "GET", groups.list_members),
    ("/participant-groups/<group_id>/participants/", "POST", groups.add_members),
    ("/participant-groups/<group_id>/participants/", "DELETE", groups.remove_members),
    ("/messages/", "GET", messages.list_messages),
    ("/messages/", "POST", messages.send),
    ("/messages/bulk/", "POST", messages.send_bulk),
]
HANDLERS = {(path, method): operation for path, method, operation in OPERATIONS}

ROUTES = Map(
    [Rule(API + path, methods=[method], endpoint=("api", path, method))
     for path, method, _ in OPERATIONS]
    + [
        Rule("/", methods=["GET"], endpoint="home"),
        Rule("/_emulator/take-part", methods=["GET", "POST"], endpoint="take_part"),
        Rule("/submissions/complete", methods=["GET"], endpoint="complete"),
        Rule("/_emulator/return", methods=["POST"], endpoint="return_"),
        Rule("/_emulator/faults", methods=["GET", "POST", "DELETE"], endpoint="fault_control"),
        Rule("/_emulator/settle", methods=["POST"], endpoint="settle"),
        Rule("/_emulator/held", methods=["GET"], endpoint="held_answers"),
        Rule("/_emulator/clock", methods=["POST"], endpoint="clock"),
        Rule("/_emulator/state", methods=["GET"], endpoint="dump"),
        Rule("/_emulator/bonus-payments", methods=["GET"], endpoint="bonus_records"),
    ],
    strict_slashes=False,
)


class Emulator:
    """The WSGI application around one State."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.faults = Faults()

    def __call__(self, environ, start_response):
        request = Request(environ)
        fault = None
        if not request.path.startswith("/_emulator/"):
            header = request.headers.get(HEADER)
            fault = (from_header(header) if header else None) or self.faults.take(
                request.method, request.path)
        if fault and fault.when == "before":
            return self._fail(fault, environ, start_response)
        response = self._dispatch(request)
        if fault:  # "after": the work is done and saved; the answer is lost
            return self._fail(fault, environ, start_response)
        return response(environ, start_response)

    def _dispatch(self, request: Request) -> Response:
        try:
            endpoint, params = ROUTES.bind_to_environ(request.environ).match()
        except (NotFound, MethodNotAllowed) as error:
            if request.path.startswith(API):
                status = 405 if isinstance(error, MethodNotAllowed) else 404
                detail = (f'Method "{request.method}" not allowed.' if status == 405
                          else "Not found.")
                return _json(error_body(status, detail), status)
            return error.get_response()
        except HTTPException as error:
            return error.get_response()
        if isinstance(endpoint, tuple):
            return self.api(request, HANDLERS[endpoint[1:]], params)
        return getattr(self, endpoint)(request)

    # -- the researcher API -----------------------------------------------------------------

    def api(self, request: Request, operation, params: dict) -> Response:
        refusal = self._authenticate(request)
        if refusal:
            return refusal
        body = {}
        if request.get_data():
            try:
                body = json.loads(request.get_data(as_text=True))
            except json.JSONDecodeError as error:
                return _json(error_body(400, f"JSON parse error - {error}"), 400)
            if not isinstance(body, dict):
                return _json(error_body(400, "Expected a JSON object."), 400)
        call = Call(body=body, query=dict(request.args.items()), url=request.base_url)
        with self.state.lock:
            self.state.refresh()
            try:
                status, answer = operation(self.state, call, **params)
            except ApiError as error:
                return _json(error.body(), error.status)
            except Exception:  # noqa: BLE001 - a bug in the emulator: answer as the service would
                traceback.print_exc()
                return _json(error_body(500, "The emulator failed; see its log."), 500)
            finally:
                self.state.save()
        if answer is None:
            return Response(status=status)
        return _json(answer, status)

    def _authenticate(self, request: Request) -> Response | None:
        header = request.headers.get("Authorization", "")
        if not header:
            detail = "Authentication credentials were not provided."
        elif header != f"Token {self.state.token}":
            detail = "Invalid token."
        else:
            return None
        response = _json(error_body(401, detail), 401)
        response.headers["WWW-Authenticate"] = "Token"
        return response

    # -- the participant's side -------------------------------------------------------------

    def home(self, request: Request) -> Response:
        with self.state.lock:
            self.state.refresh()
            active = [s for s in self.state.data["studies"].values()
                      if s["status"] == "ACTIVE" and not s.get("_deleted")]
            rows = "".join(
                f"<li><b>{escape(s['name'])}</b> ({fees.show(s['reward'], self.state.currency)}, "
                f"{s['estimated_completion_time']} min, "
                f"{self.state.places_taken(s)}/{s['total_available_places']} places taken)"
                f"<form method='get' action='/_emulator/take-part'>"
                f"<input type='hidden' name='study_id' value='{escape(s['id'])}'>"
                f"<input name='participant_id' placeholder='participant id (blank: a new one)'"
                f" size='30'><button>Take part</button></form></li>"
                for s in active
            )
        return _page("Prolific emulator: studies open to participants",
                     f"<ul>{rows or '<li>none</li>'}</ul>")

    def take_part(self, request: Request) -> Response:
        fields = _fields(request)
        with self.state.lock:
            self.state.refresh()
            try:
                joined = participant.take_part(self.state, fields.get("study_id", ""),
                                               fields.get("participant_id") or None)
            except participant.Refused as refusal:
                if request.method == "GET":
                    return _page("You cannot take part", escape(str(refusal)), 409)
                return _json({"error": str(refusal)}, 409)
            finally:
                self.state.save()
        if request.method == "GET":
            response = Response(status=302, headers={"Location": joined["url"]})
        else:
            response = _json(joined, 201)
        response.set_cookie("prolific_pid", joined["participant_id"], httponly=True)
        return response

    def complete(self, request: Request) -> Response:
        participant_id = request.args.get("participant_id") or request.cookies.get(
            "prolific_pid")
        if not participant_id:
            return _page("Who are you?", "No participant: take part from the emulator's home "
                         "page first (it sets a cookie), or add ?participant_id=.", 400)
        with self.state.lock:
            self.state.refresh()
            try:
                done = participant.complete(self.state, participant_id, request.args.get("cc"))
            except participant.Refused as refusal:
                return _page("Nothing to complete", escape(str(refusal)), 409)
            finally:
                self.state.save()
        if not done["code_recognised"]:
            return _page("Completion code not recognised",
                         "The code you came back with is not one of this study's. Your "
                         "submission was sent to the researcher for review.")
        return _page("Submission complete", f"Thank you. Your submission is now "
                     f"{escape(done['status'])}.")

    def return_(self, request: Request) -> Response:
        with self.state.lock:
            self.state.refresh()
            try:
                done = participant.return_submission(
                    self.state, _fields(request).get("submission_id", ""))
            except participant.Refused as refusal:
                return _json({"error": str(refusal)}, 409)
            finally:
                self.state.save()
        return _json(done, 200)

    # -- test controls ----------------------------------------------------------------------

    def fault_control(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.faults.clear()
        elif request.method == "POST":
            try:
                self.faults.add(parse(_fields(request)))
            except ValueError as error:
                return _json({"error": str(error)}, 400)
        return _json({"faults": self.faults.listed()}, 200)

    def held_answers(self, request: Request) -> Response:
        return _json({"held": self.faults.held()}, 200)

    def settle(self, request: Request) -> Response:
        with self.state.lock:
            settled = self.state.settle_payments(due_only=False)
            self.state.refresh()
            self.state.save()
        return _json({"settled": settled}, 200)

    def clock(self, request: Request) -> Response:
        self.state.advance(float(_fields(request).get("advance", 0)))
        return _json({"now": self.state.now()}, 200)

    def dump(self, request: Request) -> Response:
        with self.state.lock:
            return _json(self.state.data, 200)

    def bonus_records(self, request: Request) -> Response:
        with self.state.lock:
            self.state.refresh()
            return _json({"results": bonuses.records(self.state)}, 200)

    # -- failures ---------------------------------------------------------------------------

    def _fail(self, fault: Fault, environ, start_response):
        if fault.hold:
            self.faults.hold()
        if fault.status is not None:
            response = _json(error_body(fault.status, "Injected failure (emulator fault)."),
                             fault.status)
            return response(environ, start_response)
        connection = environ.get("werkzeug.socket")
        if connection is not None:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        raise ConnectionAbortedError("emulator fault: the answer is lost")


def _fields(request: Request) -> dict:
    if request.is_json:
        body = request.get_json(silent=True)
        return body if isinstance(body, dict) else {}
    return {**request.args.to_dict(), **request.form.to_dict()}


def _json(body, status: int) -> Response:
    return Response(json.dumps(body), status, mimetype="application/json")


def _page(title: str, body: str, status: int = 200) -> Response:
    return Response(f"<!doctype html><title>{escape(title)}</title><h1>{escape(title)}</h1>"
                    f"<p>{body}</p>", status, mimetype="text/html")
