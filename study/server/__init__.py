"""The task server: the participant's path (pages) and the editor's API.

`create_app(study)` is the application factory; `study serve` runs it on granian with a worker
process per core (study.server.serving), `study demo` under waitress in one process, and
`gunicorn 'study.server.wsgi:app'` as the operator configures gunicorn (see README).
It also mounts the reviewers' workspace under /review (study.review.web).
"""

from __future__ import annotations

import os
import secrets
import threading

from flask import Flask, jsonify, request
from flask.sessions import SecureCookieSessionInterface
from werkzeug.exceptions import HTTPException

from study.config import Study
from study.paths import static_dir, templates_dir
from study.review import settings as review_settings
from study.server import limit_store as limit_stores
from study.server import limits as server_limits
from study.server.responses import WholeResponse
from study.server.throttle import StartThrottle
from study.store import create_tables, make_engine
from study.store.engine import digest as database_digest

# The default of [session] max_request_bytes (study.server.limits).
MAX_REQUEST_BYTES = server_limits.Limits.max_request_bytes


class NoCookieSession(SecureCookieSessionInterface):
    """Flask's signed-cookie session is never opened. Nothing keeps state in it (a session id
    travels in the URL, because MTurk shows the task in an iframe where browsers block
    third-party cookies; the reviewers' login is its own cookie), and verifying its signature on
    every event batch would cost a tenth of the event API's CPU budget. Anything that writes to
    `flask.session` fails loudly on Flask's null session instead of silently losing the value."""

    def open_session(self, app, request):
        return None


def create_app(study: Study, *, suggestion_engine=None, engine=None) -> Flask:
    # [[rounds]] and [review] are read when a participant enters (study.review.rounds): a round
    # naming a prompt the study lacks answered every /task with a 500. Raises ConfigError.
    review_settings.from_study(study)
    app = Flask(
        __name__,
        template_folder=str(templates_dir()),
        static_folder=str(static_dir()),
        static_url_path="/static",
    )
    # Event batches are small (a few KB); past [session] max_request_bytes is a client bug or
    # abuse, refused (413) before the body is read.
    # Quotas, throttles, text caps and the access-code list (study.server.limits), read once.
    limits = server_limits.from_study(study)
    request_bytes = limits.max_request_bytes
    app.config.update(
        MAX_CONTENT_LENGTH=request_bytes,
        MAX_FORM_MEMORY_SIZE=request_bytes,
        SECRET_KEY=os.environ.get("STUDY_SECRET_KEY") or secrets.token_hex(32),
        JSON_SORT_KEYS=False,
    )
    app.json.sort_keys = False
    app.session_interface = NoCookieSession()
    app.response_class = WholeResponse  # answers in one piece (study.server.responses)
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True

    engine = engine or make_engine(study.database_url)
    create_tables(engine)
    app.extensions["study"] = study
    app.extensions["study.engine"] = engine
    # A test's stand-in for the Tab paradigm's model calls; None: its own (study.paradigms.tab.api).
    app.extensions["study.suggestions"] = suggestion_engine
    app.extensions["study.limits"] = limits
    # Counted where every worker process and host sees the same count (study.server.limit_store).
    limit_store = limit_stores.from_environment(engine, study.id or study.name)
    limit_store.check()  # an unreachable Redis stops the server before it takes anyone in
    app.extensions["study.limit_store"] = limit_store
    app.extensions["study.start_throttle"] = StartThrottle(
        app.extensions["study.limits"].new_sessions_per_ip_per_hour, limit_store, study.id or study.name
    )
    # Model calls served at once: suggestions, ghost text, chat replies (study.server.model_calls).
    app.extensions["study.suggestion_slots"] = threading.BoundedSemaphore(
        app.extensions["study.limits"].concurrent_suggestions
    )

    from study import paradigms
    from study.review.web import URL_PREFIX as REVIEW_PREFIX
    from study.review.web import auth as review_auth
    from study.review.web import blueprint as review_blueprint
    # writing_stage adds the editor page's routes to the participant blueprint.
    from study.server import events_api, participant, surveys, writing_stage  # noqa: F401

    app.register_blueprint(participant.blueprint)
    app.register_blueprint(events_api.blueprint)
    app.register_blueprint(surveys.blueprint)
    # Each paradigm's pages and API (study.paradigms); its pages are participant pages, under
    # the same security policy as the core path's. Which stages they serve, study.server.stages
    # reads from here.
    for paradigm in paradigms.registered():
        for blueprint in paradigm.page_blueprints():
            app.register_blueprint(blueprint)
            app.after_request_funcs.setdefault(blueprint.name, []).append(participant.page_policy)
        for blueprint in paradigm.api_blueprints():
            app.register_blueprint(blueprint)
    app.extensions["study.stage_endpoints"] = paradigms.stage_endpoints()
    # What the participant's requests look up by name (each recruitment provider's entry path,
    # each paradigm's event rules, editor and log hooks (whether an arm has a Tab list, asked of
    # every event batch), the study's own path), imported now: `study serve`
    # forks its workers after this. A worker that imported them at its first request held its
    # GIL for the import while every writer's batches waited (MTurk's boto3 alone took 0.3 s),
    # and kept them out of the garbage collector's freeze (study.server.serving).
    from study import providers

    providers.registered()
    for paradigm in paradigms.registered():
        paradigm.event_rules()
        paradigm.editor_state()
        paradigm.log_hooks()
    paradigms.path_hooks(study)
    # The judges' pages of a judging round (study.judging.web).
    from study.judging.web import blueprint as judging_blueprint

    app.register_blueprint(judging_blueprint)
    # The reviewers' workspace (study.review.web); `study review DIR` serves it alone.
    app.register_blueprint(review_blueprint, url_prefix=REVIEW_PREFIX)
    # STUDY_TRUSTED_PROXIES: the client's address and https behind a TLS proxy (server/proxy.py)
    from study.server.favicon import add_favicon
    from study.server.proxy import behind_proxies

    behind_proxies(app)
    add_favicon(app)
    # What this process answered, for `study status` (study.server.activity); before the
    # contract's check, so an event request's time includes it.
    from study.server import activity

    activity.install(app, engine)
    # Every request's declared contract, checked before any view (study.server.contract).
    from study.server import contract

    contract.install(app)

    @app.get("/healthz")
    @contract.declare("Whether the server is up", responses={200: "api/responses.schema.json#/$defs/health"})
    def healthz():
        # The id too: every `study init` study is named "coauthor" until renamed, and
        # `study simulate --url` must find its own study's server, not a copy's (study.simulate.run).
        # And the database: a copy of the folder keeps the id, and `study demo --dir` serves the
        # same study into demo.db; the simulator marks its sessions in the folder's database.
        return {"ok": True, "study": study.name, "id": study.id, "database": database_digest(study.database_url)}

    # What every route above accepts, from the same declarations (study.server.openapi).
    from study.server import openapi

    openapi.serve(app, f"{study.name}: the task server")

    @app.errorhandler(limit_stores.LimitStoreUnavailable)
    def limits_unavailable(error: limit_stores.LimitStoreUnavailable):
        # The limits cannot be counted, so they cannot be kept: refuse (503) rather than let
        # everyone through, and tell the operator what to fix.
        app.logger.error("limits cannot be counted: %s", error)
        message = "the study server cannot take this request right now; please try again in a few minutes"
        if request.path.startswith("/api/"):
            return jsonify(error=message), 503
        return message[0].upper() + message[1:] + ".", 503

    from study.server import model_calls
    from study.server.worker_start import settle_calls_left

    # A server started again after a crash on this host: the calls its processes had in flight.
    settle_calls_left(engine, study)

    @app.errorhandler(model_calls.ModelCallLost)
    def model_call_lost(error: model_calls.ModelCallLost):
        # The database lost the call's row (a crash after the admission): no suggestion without
        # its record reaches the participant, who reads the usual calm sentence.
        app.logger.error("%s", error)
        return jsonify(error=model_calls.UNAVAILABLE), 502

    from study.server.database_trouble import install as database_trouble

    # A database that stopped taking writes (a full disk, a read-only mount) or, on PostgreSQL,
    # does not answer (a restart): 503, which the editor retries, and one line for the operator
    # with the database and the fix.
    database_trouble(app, engine.url)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        # The editor's API speaks JSON, errors included; pages keep Flask's HTML errors.
        if request.path.startswith("/api/"):
            message = error.description
            if error.code == 413:
                message = f"request body is larger than {request_bytes} bytes; send smaller batches"
            return jsonify(error=message), error.code
        if request.blueprint is None:
            # No route matched (a mistyped link: 404; a wrong method: 405), so no blueprint's
            # after_request gives Flask's page the headers of the pages around it: the
            # workspace's or the participant pages' policy, as a routed page there has.
            if request.path.startswith(REVIEW_PREFIX + "/"):
                return review_auth.security_headers(error.get_response())
            return participant.page_policy(error.get_response())
        return error

    # Last, so it is in front of every wrapper: well-formed event batches skip Flask's
    # request machinery (study.server.event_lane); everything else reaches Flask as before.
    from study.server import event_lane

    event_lane.install(app, request_bytes)
    return app
