"""The emulator's HTTP side: MTurk's JSON wire protocol, plus the worker's pages.

Requester API (what boto3 sends):
  POST /   X-Amz-Target: MTurkRequesterServiceV20170117.<Operation>
           Content-Type: application/x-amz-json-1.1, body: the request as JSON
  -> 200 with the response as JSON, or 400 {"__type": "RequestError" | "ServiceFault",
     "Message": ..., "TurkErrorCode": ... (where MTurk gives one)}; 500 ServiceFault on a bug.
  Every request is checked against botocore's MTurk model first (study.mturk.validate), which
  is how the service refuses a Reward of "0.001" or MaxResults=500.
  STS GetCallerIdentity (query protocol, Action=GetCallerIdentity) is answered too, with the
  account id of the state file (emulator.identity).

Worker side (no equivalent in the API; for tests and dry runs):
  GET  /                         the HITs a worker can see, each with an "accept" form
  POST /_emulator/accept         HITId, WorkerId -> {"AssignmentId", "TaskURL"} (or a redirect
                                 to the task when `redirect` is set, as from the page above)
  GET  /_emulator/preview        ?HITId= -> {"PreviewURL"}
  POST /mturk/externalSubmit     the task page's form: assignmentId + answer fields
  POST /_emulator/return         AssignmentId
  POST /_emulator/accept-and-submit  {"HITId", "WorkerId", "Answers": {...}}
  POST /_emulator/workers        {"WorkerId", "ApprovalRate", "ApprovedHITs", "Country"}
  POST /_emulator/qualification-requests  {"QualificationTypeId", "WorkerId"}
  POST /_emulator/clock          {"advance": seconds}
  GET  /_emulator/state          the whole state as JSON
"""

from __future__ import annotations

import json
import traceback
import uuid
from html import escape

from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from study.mturk import validate
from study.mturk.emulator import (  # noqa: F401
    assignments,
    hits,
    identity,
    qualifications,
    worker,
    workers,
)
from study.mturk.emulator.registry import OPERATIONS
from study.mturk.emulator.state import ServiceError, State

TARGET_PREFIX = "MTurkRequesterServiceV20170117."
JSON_TYPE = "application/x-amz-json-1.1"

ROUTES = Map(
    [
        Rule("/", methods=["POST"], endpoint="api"),
        Rule("/", methods=["GET"], endpoint="worker_site"),
        Rule("/mturk/externalSubmit", methods=["POST"], endpoint="external_submit"),
        Rule("/_emulator/accept", methods=["POST"], endpoint="accept"),
        Rule("/_emulator/preview", methods=["GET"], endpoint="preview"),
        Rule("/_emulator/return", methods=["POST"], endpoint="return_"),
        Rule("/_emulator/accept-and-submit", methods=["POST"], endpoint="accept_and_submit"),
        Rule("/_emulator/workers", methods=["POST"], endpoint="set_worker"),
        Rule(
            "/_emulator/qualification-requests", methods=["POST"], endpoint="qualification_request"
        ),
        Rule("/_emulator/clock", methods=["POST"], endpoint="clock"),
        Rule("/_emulator/state", methods=["GET"], endpoint="dump"),
    ]
)


class Emulator:
    """The WSGI application around one State."""

    def __init__(self, state: State) -> None:
        self.state = state

    def __call__(self, environ, start_response):
        request = Request(environ)
        try:
            endpoint, _args = ROUTES.bind_to_environ(environ).match()
            response = getattr(self, endpoint)(request)
        except HTTPException as error:
            response = error.get_response()
        return response(environ, start_response)

    # -- requester API ----------------------------------------------------------------------

    def api(self, request: Request) -> Response:
        target = request.headers.get("X-Amz-Target", "")
        if not target and request.form.get("Action") == "GetCallerIdentity":
            if not request.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256"):
                return Response("Missing Authentication Token", 403)
            return identity.caller_identity(self.state)
        if not target:
            return self._worker_error("POST / is MTurk's API: send X-Amz-Target (use boto3).", 400)
        name = target.removeprefix(TARGET_PREFIX)
        if (
            not target.startswith(TARGET_PREFIX)
            or name not in validate.service_model().operation_names
        ):
            return _json(
                {"__type": "UnknownOperationException", "Message": f"Unknown operation {target}"},
                400,
            )
        if not request.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256"):
            return _json(
                {
                    "__type": "MissingAuthenticationTokenException",
                    "Message": "Missing Authentication Token",
                },
                400,
            )
        try:
            params = json.loads(request.get_data(as_text=True) or "{}")
        except json.JSONDecodeError as error:
            return _json({"__type": "SerializationException", "Message": str(error)}, 400)
        try:
            return _json(self.call(name, params), 200)
        except ServiceError as error:
            return _json(error.body(), 400)
        except Exception:  # a bug in the emulator: say so as the service would
            traceback.print_exc()
            return _json(
                {"__type": "ServiceFault", "Message": "The emulator failed; see its log."}, 500
            )

    def call(self, name: str, params: dict) -> dict:
        """Run one operation on the state, as the service would (also usable without HTTP)."""
        problems = validate.problems(name, params) if isinstance(params, dict) else []
        if not isinstance(params, dict):
            raise ServiceError("The request body must be a JSON object.")
        if problems:
            count = len(problems)
            raise ServiceError(
                f"{count} validation error{'s' if count > 1 else ''} detected: "
                + "; ".join(p.service_message() for p in problems)
            )
        handler = OPERATIONS.get(name)
        if handler is None:
            raise ServiceError(f"The emulator does not implement {name}.", kind="ServiceFault")
        with self.state.lock:
            self.state.refresh()
            try:
                return handler(self.state, params)
            finally:
                self.state.save()

    # -- the worker's side ------------------------------------------------------------------

    def worker_site(self, request: Request) -> Response:
        with self.state.lock:
            self.state.refresh()
            rows = "".join(
                f"<li><b>{escape(h['Title'])}</b> ({escape(h['HITId'])}, ${escape(h['Reward'])})"
                f"<form method='post' action='/_emulator/accept'>"
                f"<input type='hidden' name='HITId' value='{escape(h['HITId'])}'>"
                f"<input type='hidden' name='redirect' value='1'>"
                f"<input name='WorkerId' value='A1EMULATEDWORKER' size='20'>"
                f"<button>Accept as this worker</button></form></li>"
                for h in worker.visible_hits(self.state)
            )
        page = f"<h1>MTurk emulator: HITs available</h1><ul>{rows or '<li>none</li>'}</ul>"
        return Response(page, 200, mimetype="text/html")

    def accept(self, request: Request) -> Response:
        fields = _fields(request)
        with self.state.lock:
            self.state.refresh()
            try:
                assignment = worker.accept(
                    self.state, fields.get("HITId", ""), fields.get("WorkerId", "")
                )
            except ServiceError as error:
                return self._worker_error(error.message, 409)
            finally:
                self.state.save()
            url = worker.task_url(self.state, assignment, _submit_to(request))
        if fields.get("redirect"):
            return Response(status=303, headers={"Location": url})
        return _plain_json({"AssignmentId": assignment["AssignmentId"], "TaskURL": url}, 200)

    def preview(self, request: Request) -> Response:
        with self.state.lock:
            try:
                return _plain_json(
                    {"PreviewURL": worker.preview_url(self.state, request.args.get("HITId", ""))},
                    200,
                )
            except ServiceError as error:
                return self._worker_error(error.message, 404)

    def external_submit(self, request: Request) -> Response:
        fields = {key: value for key, value in request.form.items()}
        with self.state.lock:
            self.state.refresh()
            try:
                worker.submit(self.state, fields.get("assignmentId", ""), fields)
            except ServiceError as error:
                return self._worker_error(error.message, 400)
            finally:
                self.state.save()
        return Response(
            "<h1>HIT submitted</h1><p>Thank you. You may close this page.</p>",
            200,
            mimetype="text/html",
        )

    def return_(self, request: Request) -> Response:
        return self._worker_action(
            lambda f: worker.return_assignment(self.state, f.get("AssignmentId", "")), request
        )

    def accept_and_submit(self, request: Request) -> Response:
        fields = _fields(request)
        try:
            assignment = worker.accept_and_submit(
                self.state,
                fields.get("HITId", ""),
                fields.get("WorkerId", ""),
                fields.get("Answers") or {},
            )
        except ServiceError as error:
            return self._worker_error(error.message, 409)
        return _plain_json({"AssignmentId": assignment["AssignmentId"]}, 200)

    def set_worker(self, request: Request) -> Response:
        def update(fields: dict) -> dict:
            profile = self.state.data["workers"].setdefault(fields["WorkerId"], {})
            profile.update(
                {k: fields[k] for k in ("ApprovalRate", "ApprovedHITs", "Country") if k in fields}
            )
            return {"WorkerId": fields["WorkerId"], **self.state.worker(fields["WorkerId"])}

        return self._worker_action(update, request)

    def qualification_request(self, request: Request) -> Response:
        return self._worker_action(
            lambda f: worker.request_qualification(
                self.state, f["QualificationTypeId"], f["WorkerId"]
            ),
            request,
        )

    def clock(self, request: Request) -> Response:
        self.state.advance(float(_fields(request).get("advance", 0)))
        return _plain_json({"now": self.state.now()}, 200)

    def dump(self, request: Request) -> Response:
        with self.state.lock:
            return _plain_json(self.state.data, 200)

    def _worker_action(self, action, request: Request) -> Response:
        fields = _fields(request)
        with self.state.lock:
            self.state.refresh()
            try:
                result = action(fields)
            except (ServiceError, KeyError) as error:
                message = error.message if isinstance(error, ServiceError) else f"missing {error}"
                return self._worker_error(message, 409)
            finally:
                self.state.save()
        return _plain_json({k: v for k, v in result.items() if not k.startswith("_")}, 200)

    def _worker_error(self, message: str, status: int) -> Response:
        return _plain_json({"error": message}, status)


def _fields(request: Request) -> dict:
    if request.is_json:
        body = request.get_json(silent=True)
        return body if isinstance(body, dict) else {}
    return dict(request.form.items())


def _submit_to(request: Request) -> str:
    """turkSubmitTo: where the task page posts the finished assignment (the emulator itself)."""
    return request.host_url.rstrip("/")


def _json(body: dict, status: int) -> Response:
    return Response(
        json.dumps(body),
        status,
        content_type=JSON_TYPE,
        headers={"x-amzn-RequestId": str(uuid.uuid4())},
    )


def _plain_json(body: dict, status: int) -> Response:
    return Response(json.dumps(body), status, mimetype="application/json")
