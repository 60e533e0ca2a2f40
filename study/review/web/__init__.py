"""The reviewers' workspace: a Flask blueprint under /review.

`study serve` mounts it next to the participant's path (study.server.create_app registers
`blueprint` at /review); `study review DIR` serves it alone (`create_review_app`). The blueprint
itself is `base` (which the views import, so none imports this package); views are split by
who uses them:
  - `auth`: logging in and out, the login cookie, the CSRF check on every POST, security headers;
  - `rating`: a reviewer's queue, a submission with its replay, rating it;
  - `researcher`: outcomes, agreement, adjudication and the audit log (researchers only).
Templates are templates/review/*.html, the page scripts study/static/review*.js.
"""

from __future__ import annotations

from flask import Flask, redirect, request
from werkzeug.exceptions import HTTPException

from study.config import Study
from study.paths import static_dir, templates_dir
from study.review.web import auth, rating, researcher  # noqa: F401  (they add the views)
from study.review.web.base import URL_PREFIX, blueprint
from study.server.favicon import add_favicon
from study.server import contract
from study.server.proxy import behind_proxies
from study.store import create_tables, make_engine

__all__ = ["URL_PREFIX", "blueprint", "create_review_app"]


def create_review_app(study: Study, *, engine=None) -> Flask:
    """The workspace alone, for `study review DIR` (no participant pages, no suggestions)."""
    app = Flask(
        __name__,
        template_folder=str(templates_dir()),
        static_folder=str(static_dir()),
        static_url_path="/static",
    )
    app.config.update(MAX_CONTENT_LENGTH=1_000_000)
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    engine = engine or make_engine(study.database_url)
    create_tables(engine)
    # The same keys as study.server.create_app, so study.server.context serves both apps.
    app.extensions["study"] = study
    app.extensions["study.engine"] = engine
    app.register_blueprint(blueprint, url_prefix=URL_PREFIX)
    behind_proxies(app)  # STUDY_TRUSTED_PROXIES: the client's address and https behind a proxy
    add_favicon(app)
    contract.install(app)  # every request's declared contract (study.server.contract)

    @app.errorhandler(HTTPException)
    def unrouted(error: HTTPException):
        # A page no route matched (404, 405) has no blueprint to give it the workspace's
        # headers (auth.security_headers): it gets them here, never framed or cached.
        if request.blueprint is None:
            return auth.security_headers(error.get_response())
        return error

    @app.get("/")
    @contract.declare("The workspace's front door (to /review/)", responses={302: None})
    def root():
        return redirect(f"{URL_PREFIX}/")

    @app.get("/healthz")
    @contract.declare("Whether the workspace is up", responses={200: "api/responses.schema.json#/$defs/health"})
    def healthz():
        return {"ok": True, "study": study.name, "workspace": True}

    return app
