"""Logging in and out, the login cookie, the CSRF check on every POST, and security headers.

Cases of a request, in order (`load_login`):
  1. any request: the login cookie, if live, becomes `g.login` (study.review.logins);
  2. a POST to the login form: its token must match the pre-login cookie set with the form
     (double submit: a page elsewhere can post the form but cannot read that cookie);
  3. any other POST: the sender must be logged in and send the login's CSRF token, as the form
     field `csrf_token` or the `X-CSRF-Token` header; otherwise 403 and nothing changes.
Pages that need a login redirect to it; researcher pages answer 403 to reviewers.
"""

from __future__ import annotations

import functools
import math
import secrets

from flask import abort, g, jsonify, make_response, redirect, render_template, request, url_for

from study.review import accounts, audit, logins
from study.review.web.base import blueprint
from study.server import contract, proxy, throttle
from study.server.context import engine, study
from study.store import reading, writing

COOKIE = "study_review"
LOGIN_COOKIE = "study_review_login"  # the login form's CSRF token, before anyone is logged in


def wants_json() -> bool:
    return request.headers.get("Accept", "").startswith("application/json")


def refuse(status: int, message: str):
    if wants_json():
        return jsonify(error=message), status
    return render_template(
        "review/message.html", study=study(), title="Not allowed", message=message
    ), status


def secure_cookies() -> bool:
    """Cookies only over https: when this request came over TLS (as the trusted proxy reports
    it, `study.server.proxy`), or always with STUDY_SECURE_COOKIES=1."""
    return proxy.over_https()


def _cookie_path() -> str:
    return url_for("review.home")


@blueprint.before_request
def load_login():
    with reading(engine()) as connection:
        g.login = logins.find(connection, request.cookies.get(COOKIE))
    if request.method != "POST":
        return None
    sent = request.form.get("csrf_token") or request.headers.get("X-CSRF-Token")
    if request.endpoint == "review.login":
        if not logins.csrf_matches(request.cookies.get(LOGIN_COOKIE, ""), sent):
            return refuse(403, "The login form expired. Reload the page and log in again.")
        return None
    if g.login is None:
        return _logged_out()
    if not logins.csrf_matches(g.login.csrf_token, sent):
        return refuse(
            403,
            "This request did not carry the page's security token. Reload the page and try again.",
        )
    return None


# The page a POST came from, to return to after logging in again (the workspace sends no Referer).
_RETURN_TO = {"review.rate": "review.submission", "review.decide": "review.adjudication"}

LOGGED_OUT = ("Your login expired (or you logged out), so this was not saved. Log in again, "
              "then send it again.")


def _logged_out():
    """A POST without a live login (it expired mid-rating, or ended on another machine): nothing
    is saved, and the reviewer gets the way back to the page they were on and, without
    JavaScript, what they wrote there, to copy (with it, review-rating.js keeps the comment)."""
    back = _RETURN_TO.get(request.endpoint or "")
    page = url_for(back, **request.view_args) if back and request.view_args else url_for("review.home")
    login_url = url_for("review.login", next=page)
    if wants_json():
        return jsonify(error=LOGGED_OUT, login=login_url), 403
    unsaved = (request.form.get("comment") or request.form.get("note") or "").strip()
    return render_template(
        "review/message.html", study=study(), title="Not saved", message=LOGGED_OUT,
        unsaved=unsaved, next_url=login_url, next_label="Log in again",
    ), 403  # fmt: skip


@blueprint.after_request
def security_headers(response):
    # Ratings are private to their reviewer: never cached, never framed, no referrer leaks.
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'; form-action 'self'"
    )
    return response


@blueprint.context_processor
def review_context():
    login = g.get("login")
    return {"login": login, "csrf_token": login.csrf_token if login else ""}


def login_required(view):
    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        if g.login is None:
            return redirect(url_for("review.login", next=request.full_path))
        return view(*args, **kwargs)

    return wrapper


def researcher_required(view):
    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        if g.login is None:
            return redirect(url_for("review.login", next=request.full_path))
        if not g.login.researcher:
            abort(403)
        return view(*args, **kwargs)

    return wrapper


def _safe_next(target: str | None) -> str:
    # Only paths inside the workspace: never an open redirect to another site. A control
    # character (a line break) cannot go into the Location header: the login would end in a
    # 500 after it was made.
    home = url_for("review.home")
    if target and target.startswith(home) and not target.startswith("//") and target.isprintable():
        return target
    return home


@blueprint.route("/login", methods=["GET", "POST"])
@contract.declare(
    "Log in to the reviewers' workspace", query="api/review.schema.json#/$defs/loginQuery", form="api/review.schema.json#/$defs/loginForm",
    responses={200: None, 302: None, 401: None, 403: None, 429: None},
)  # fmt: skip
def login():
    error = None
    status = 200
    if request.method == "POST":
        name = request.form.get("name", "").strip()[:64]
        password = request.form.get("password", "")
        # Counted as the start throttle counts a client: an IPv6 line its /64, from which it
        # may take a fresh address for every guess.
        address = throttle.counted_as(request.remote_addr) if request.remote_addr else None
        account = None
        with writing(engine()) as connection:
            wait = logins.wait_seconds(connection, address)
            if wait > 0:
                error = (
                    "Too many failed logins from your address. "
                    f"Try again in {math.ceil(wait)} second{'s' if math.ceil(wait) != 1 else ''}."
                )
            else:
                account = accounts.verify(connection, name, password)
                if account is None:
                    logins.record_failure(connection, name, address)
                    error = "Wrong name or password."
                else:
                    token = logins.start(connection, account)
        if account is not None:
            response = redirect(_safe_next(request.form.get("next")))
            response.set_cookie(
                COOKIE, token, httponly=True, samesite="Strict", secure=secure_cookies(),
                path=_cookie_path(), max_age=logins.LOGIN_HOURS * 3600,
            )  # fmt: skip
            response.delete_cookie(
                LOGIN_COOKIE, path=_cookie_path(), secure=secure_cookies(), httponly=True,
                samesite="Strict",
            )  # fmt: skip
            return response
        status = 429 if wait > 0 else 401
    with reading(engine()) as connection:
        nobody = not accounts.all_accounts(connection)
    form_token = secrets.token_urlsafe(32)
    response = render_template(
        "review/login.html",
        study=study(),
        error=error,
        nobody=nobody,
        form_token=form_token,
        next=request.values.get("next", ""),
    )
    response = make_response(response, status)
    if status == 429:
        response.headers["Retry-After"] = str(math.ceil(wait))
    response.set_cookie(
        LOGIN_COOKIE, form_token, httponly=True, samesite="Strict", secure=secure_cookies(),
        path=_cookie_path(),
    )  # fmt: skip
    return response


@blueprint.post("/logout")
@contract.declare("Log out", form="api/review.schema.json#/$defs/tokenForm", responses={302: None, 403: None})
def logout():
    with writing(engine()) as connection:
        logins.end(connection, request.cookies.get(COOKIE, ""))
        audit.record(connection, g.login.name, audit.LOGOUT)
    response = redirect(url_for("review.login"))
    response.delete_cookie(
        COOKIE, path=_cookie_path(), secure=secure_cookies(), httponly=True, samesite="Strict"
    )
    return response
