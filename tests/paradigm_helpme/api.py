"""POST /api/sessions/<id>/help: the study's model goes on from the writer's text.

The model call goes through the core's guards (study.server.model_calls: limits, the request
recorded in suggestion_requests, a bounded number at once) and the shared model client
(study.model_client), as a built-in paradigm's does.
"""

from __future__ import annotations

import time

from flask import Blueprint, jsonify

from study import model_client
from study.server import contract, model_calls
from study.server.context import session_or_404, study
from tests.paradigm_helpme import NAME

blueprint = Blueprint("helpme_api", __name__, url_prefix="/api/sessions")


@blueprint.post("/<session_id>/help")
@contract.declare("Ask for help (the helpme test paradigm)", body="helpme/help-request.schema.json",
                  responses={200: None, 409: contract.ERROR, 429: contract.ERROR, 502: contract.ERROR,
                             503: contract.ERROR, 504: contract.ERROR})  # fmt: skip
def help(session_id):
    session = session_or_404(session_id)
    condition = study().condition(session["condition"]) if session["condition"] else None
    if session["stage"] != "writing" or condition is None or condition.paradigm != NAME:
        return jsonify(error="this session asks for no help here"), 409
    doc = contract.body()["doc"]
    settings = study().suggestions
    try:
        with model_calls.slot():
            request_id = model_calls.admit(session_id, condition)
            started, error, text, answered = time.perf_counter(), None, "", None
            try:
                client = model_client.client(settings.base_url(), settings.api_key(), settings.timeout_seconds)
                response = client.completions.create(model=condition.model, prompt=doc, n=1,
                                                     max_tokens=condition.max_tokens)  # fmt: skip
                text = model_client.field(model_client.choices(response)[0], "text", str)
                answered = model_client.answered_model(response)
            except Exception as exc:  # noqa: BLE001 - the writer gets the calm line, the log the reason
                error = model_client.redact(model_client.describe(exc, settings, settings.base_url()),
                                            settings.api_key())  # fmt: skip
            model_calls.settle(request_id, condition, answered_model=answered, parameters={"paradigm": NAME},
                               raw=[{"text": text}], suggestions=[{"original": text}] if text else [],
                               latency_ms=(time.perf_counter() - started) * 1000, error=error)  # fmt: skip
    except model_calls.Refused as refusal:
        return refusal.response()
    if error or not text.strip():
        return model_calls.unavailable("help", session_id, error or "an empty answer", False)
    return jsonify(help=text)
