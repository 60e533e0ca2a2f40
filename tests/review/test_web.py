"""The workspace over HTTP: logging in, CSRF, blindness, the researcher's pages, and no worker id
in any response."""

from __future__ import annotations

import re

import pytest

from study.review import logins
from tests.review.conftest import PASSWORD, add_reviewer, csrf_of, log_in
from tests.review.sessions import finished_session

WORKERS = ("A1SECRETWORKERONE", "A1SECRETWORKERTWO", "A1SECRETLONER")


@pytest.fixture
def submitted(engine):
    """Three qualification sessions: two that asked the AI, one that never did."""
    sessions = [
        finished_session(engine, worker_id=w, round_name="qualification") for w in WORKERS[:2]
    ]
    sessions.append(
        finished_session(
            engine, worker_id=WORKERS[2], round_name="qualification", script=[("W", " Alone.")]
        )
    )
    return sessions


@pytest.fixture
def team(engine):
    return {
        "ana": add_reviewer(engine, "ana"),
        "ben": add_reviewer(engine, "ben"),
        "rita": add_reviewer(engine, "rita", role="researcher"),
    }


def next_submission(client) -> str:
    response = client.post("/review/next", data={"csrf_token": client.csrf})
    assert response.status_code == 302
    return response.location.rsplit("/", 1)[-1]


# -- logging in -------------------------------------------------------------------------------


def test_pages_need_a_login(workspace, team):
    client = workspace.test_client()
    assert client.get("/review/").status_code == 302
    assert client.get("/review/").location.startswith("/review/login")
    assert client.get("/review/results").status_code == 302


def test_logging_in_sets_a_strict_http_only_cookie(workspace, team):
    client = workspace.test_client()
    form = client.get("/review/login")
    assert "No reviewer accounts" not in form.get_data(as_text=True)
    response = client.post(
        "/review/login",
        data={
            "name": "ana",
            "password": PASSWORD,
            "csrf_token": csrf_of(form.get_data(as_text=True)),
            "next": "/review/",
        },
    )
    assert response.status_code == 302 and response.location == "/review/"
    cookie = next(
        c for c in response.headers.getlist("Set-Cookie") if c.startswith("study_review=")
    )
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/review/" in cookie
    assert client.get("/review/").status_code == 200


def test_a_wrong_password_is_refused_and_logged(workspace, team):
    client = workspace.test_client()
    token = csrf_of(client.get("/review/login").get_data(as_text=True))
    response = client.post(
        "/review/login", data={"name": "ana", "password": "wrong!", "csrf_token": token}
    )
    assert response.status_code == 401 and "Wrong name or password" in response.get_data(
        as_text=True
    )
    assert client.get("/review/").status_code == 302


class Clock:
    """time.time() stopped, moved forward only by the test (logins, audit entries and expiries
    follow it): a slow machine's real seconds between two requests do not shorten the waits."""

    def __init__(self, monkeypatch) -> None:
        import time

        self.offset = 0.0
        start = time.time()
        monkeypatch.setattr(time, "time", lambda: start + self.offset)

    def advance(self, seconds: float) -> None:
        self.offset += seconds


def attempt(app, password: str, address: str, name: str = "ana", **headers):
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    token = csrf_of(client.get("/review/login", headers=headers).get_data(as_text=True))
    return client.post(
        "/review/login", data={"name": name, "password": password, "csrf_token": token},
        headers=headers,
    )  # fmt: skip


def test_guessing_slows_the_address_down_and_never_locks_the_name(workspace, team, monkeypatch):
    clock = Clock(monkeypatch)
    attacker, researcher = "198.51.100.7", "192.0.2.10"
    for _ in range(logins.FREE_FAILURES):
        assert attempt(workspace, "wrong guess!", attacker).status_code == 401
    for _ in range(20):  # refused unchecked: these do not count, nor prolong the wait
        refused = attempt(workspace, PASSWORD, attacker)
        assert refused.status_code == 429
        assert "Too many failed logins from your address. Try again in 2 seconds." in (
            refused.get_data(as_text=True)
        )
        assert refused.headers["Retry-After"] == "2"
    # The name is not locked: its owner, elsewhere, logs in at once.
    assert attempt(workspace, PASSWORD, researcher).status_code == 302
    # The wait doubles with every further failure.
    clock.advance(2.1)
    assert attempt(workspace, "another guess", attacker).status_code == 401
    assert attempt(workspace, PASSWORD, attacker).headers["Retry-After"] == "4"
    clock.advance(4.1)
    assert attempt(workspace, "and another", attacker).status_code == 401
    assert attempt(workspace, PASSWORD, attacker).headers["Retry-After"] == "8"
    # Failures are forgotten after the window.
    clock.advance(logins.FAILURE_WINDOW_SECONDS + 1)
    assert attempt(workspace, PASSWORD, attacker).status_code == 302


def test_an_ipv6_guesser_cannot_escape_the_wait_with_a_fresh_address_of_its_network(workspace, team, monkeypatch):
    """An IPv6 line is handed a whole /64 and may use a new address for every request (as the
    start throttle counts it, study.server.throttle): counted per address, guesses from one
    network would never slow down."""
    Clock(monkeypatch)
    network = "2001:db8:7:1::"
    for n in range(logins.FREE_FAILURES):
        assert attempt(workspace, "wrong guess!", f"{network}{n + 1:x}").status_code == 401
    refused = attempt(workspace, PASSWORD, f"{network}ffff")
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "2"
    # Another network (another line) is not held up.
    assert attempt(workspace, PASSWORD, "2001:db8:7:2::1").status_code == 302


def test_a_password_change_ends_every_login_of_the_account(workspace, team, engine):
    from study.review import accounts
    from study.store import writing

    first, second = log_in(workspace, "ana"), log_in(workspace, "ana")
    other = log_in(workspace, "ben")
    with writing(engine) as connection:
        accounts.set_password(connection, "ana", "a brand new password")
    assert first.get("/review/").status_code == 302 and second.get("/review/").status_code == 302
    assert other.get("/review/").status_code == 200
    assert log_in(workspace, "ana", "a brand new password").get("/review/").status_code == 200


def test_a_disabled_then_re_enabled_account_does_not_revive_old_logins(workspace, team, engine):
    from study.review import accounts
    from study.store import writing

    old = log_in(workspace, "ana")
    with writing(engine) as connection:
        accounts.disable(connection, "ana")
        accounts.set_password(connection, "ana", "a brand new password")  # enables it again
    assert old.get("/review/").status_code == 302


def set_cookie_headers(response) -> list[str]:
    return [c for c in response.headers.getlist("Set-Cookie") if c.startswith("study_review")]


def test_behind_a_trusted_tls_proxy_cookies_are_secure_and_the_client_is_throttled(
    review_study, engine, team, monkeypatch
):
    from study.review.web import create_review_app

    forwarded = {"X-Forwarded-For": "203.0.113.5", "X-Forwarded-Proto": "https"}
    # Not configured: the headers are ignored (a client could forge them to dodge the throttle).
    plain = create_review_app(review_study, engine=engine)
    response = attempt(plain, PASSWORD, "127.0.0.1", **forwarded)
    assert response.status_code == 302
    assert not any("Secure" in c for c in set_cookie_headers(response))

    monkeypatch.setenv("STUDY_TRUSTED_PROXIES", "1")
    proxied = create_review_app(review_study, engine=engine)
    response = attempt(proxied, PASSWORD, "127.0.0.1", **forwarded)
    assert response.status_code == 302
    cookies = set_cookie_headers(response)
    assert cookies and all("Secure" in c for c in cookies)
    for _ in range(logins.FREE_FAILURES):
        attempt(proxied, "wrong guess!", "127.0.0.1", **forwarded)
    assert attempt(proxied, PASSWORD, "127.0.0.1", **forwarded).status_code == 429
    # Another client behind the same proxy is not slowed down by that one.
    other = {**forwarded, "X-Forwarded-For": "203.0.113.99"}
    assert attempt(proxied, PASSWORD, "127.0.0.1", **other).status_code == 302


def test_secure_cookies_can_be_forced(workspace, team, monkeypatch):
    monkeypatch.setenv("STUDY_SECURE_COOKIES", "1")
    response = attempt(workspace, PASSWORD, "127.0.0.1")
    assert all("Secure" in c for c in set_cookie_headers(response))


def test_a_bad_proxy_setting_is_a_clear_error(review_folder, monkeypatch):
    from click.testing import CliRunner

    from study.review.cli import review

    monkeypatch.setenv("STUDY_TRUSTED_PROXIES", "yes")
    result = CliRunner().invoke(review, [str(review_folder)])
    assert result.exit_code == 1 and "STUDY_TRUSTED_PROXIES='yes'" in result.output


def test_the_login_form_itself_needs_its_token(workspace, team):
    client = workspace.test_client()
    client.get("/review/login")
    response = client.post(
        "/review/login", data={"name": "ana", "password": PASSWORD, "csrf_token": "guess"}
    )
    assert response.status_code == 403


def test_after_login_only_workspace_addresses_are_followed(workspace, team):
    client = workspace.test_client()
    token = csrf_of(client.get("/review/login").get_data(as_text=True))
    response = client.post(
        "/review/login",
        data={
            "name": "ana",
            "password": PASSWORD,
            "csrf_token": token,
            "next": "https://evil.example/",
        },
    )
    assert response.location == "/review/"


def test_a_login_link_whose_next_holds_a_line_break_still_logs_the_reviewer_in(workspace, team):
    """A link such as /review/login?next=/review/%0A (mistyped, or sent to make logins fail)
    puts the line break into the form's hidden field; the login must still land at home."""
    client = workspace.test_client()
    form = client.get("/review/login", query_string={"next": "/review/\n"}).get_data(as_text=True)
    response = client.post(
        "/review/login",
        data={"name": "ana", "password": PASSWORD, "csrf_token": csrf_of(form), "next": "/review/\r\nX-Injected: 1"},
    )
    assert response.status_code == 302 and response.location == "/review/"
    assert "X-Injected" not in response.headers
    assert client.get("/review/").status_code == 200


def test_logging_out_ends_the_login_for_good(workspace, team):
    client = log_in(workspace, "ana")
    cookie = client.get_cookie("study_review", path="/review/").value
    assert client.post("/review/logout", data={"csrf_token": client.csrf}).status_code == 302
    stolen = workspace.test_client()
    stolen.set_cookie("study_review", cookie, path="/review/")
    assert stolen.get("/review/").status_code == 302


# -- CSRF -------------------------------------------------------------------------------------


def test_posts_without_the_logins_csrf_token_change_nothing(workspace, team, submitted):
    ana = log_in(workspace, "ana")
    ben = log_in(workspace, "ben")
    submission_id = next_submission(ana)
    url = f"/review/s/{submission_id}/rating"
    for headers, data in (
        ({}, {"score": "4"}),  # no token
        ({}, {"score": "4", "csrf_token": "not-the-token"}),  # a wrong one
        ({}, {"score": "4", "csrf_token": ben.csrf}),  # another login's token
        ({"X-CSRF-Token": "nope", "Accept": "application/json"}, {"score": "4"}),
    ):
        refused = ana.post(url, data=data, headers=headers)
        assert refused.status_code == 403
    assert ana.post("/review/next", data={}).status_code == 403
    assert ana.post("/review/logout", data={}).status_code == 403
    page = ana.get(f"/review/s/{submission_id}").get_data(as_text=True)
    assert "Your rating: " not in page  # nothing was stored
    accepted = ana.post(
        url, data={"score": "4"}, headers={"X-CSRF-Token": ana.csrf, "Accept": "application/json"}
    )
    assert accepted.status_code == 200 and accepted.json["score"] == 4


def test_a_score_that_is_not_a_number_is_refused_with_the_scale(workspace, team, submitted):
    ana, rita = log_in(workspace, "ana"), log_in(workspace, "rita")
    submission_id = next_submission(ana)
    # "²" and "٣" pass str.isdigit, and only "٣" is a number int() reads; "--4" is a digit
    # once every leading "-" is stripped, and no number either.
    for raw in ("²", "4²", "four", "--4"):
        refused = ana.post(
            f"/review/s/{submission_id}/rating", data={"score": raw, "csrf_token": ana.csrf},
            headers={"Accept": "application/json"},
        )  # fmt: skip
        assert refused.status_code == 400, raw
        assert refused.json["error"].startswith("score must be one of 1, 2, 3, 4, 5")
        decided = rita.post(
            f"/review/s/{submission_id}/decision", data={"score": raw, "csrf_token": rita.csrf}
        )
        assert decided.status_code == 400, raw
        assert "score must be one of 1, 2, 3, 4, 5" in decided.get_data(as_text=True)


# -- rating and blindness ---------------------------------------------------------------------


def test_a_reviewer_cannot_see_another_reviewers_rating_before_rating(workspace, team, submitted):
    ana, ben = log_in(workspace, "ana"), log_in(workspace, "ben")
    submission_id = next_submission(ana)
    rated = ana.post(
        f"/review/s/{submission_id}/rating",
        data={"score": "5", "comment": "ANA-PRIVATE-NOTE", "csrf_token": ana.csrf},
        headers={"Accept": "application/json"},
    )
    assert rated.json == {
        "score": 5,
        "comment": "ANA-PRIVATE-NOTE",
        "version": 1,
        "others": [],
        "progress": {"rated": 1, "total": 2},
    }
    assert next_submission(ben) == submission_id  # closest to complete first
    before = ben.get(f"/review/s/{submission_id}").get_data(as_text=True)
    assert "ANA-PRIVATE-NOTE" not in before and ">ana<" not in before
    assert "ANA-PRIVATE-NOTE" not in ben.get("/review/").get_data(as_text=True)
    answer = ben.post(
        f"/review/s/{submission_id}/rating",
        data={"score": "4", "csrf_token": ben.csrf},
        headers={"Accept": "application/json"},
    ).json
    assert answer["others"] == [{"reviewer": "ana", "score": 5, "comment": "ANA-PRIVATE-NOTE"}]
    assert "ANA-PRIVATE-NOTE" in ben.get(f"/review/s/{submission_id}").get_data(as_text=True)


def test_a_reviewer_sees_only_submissions_in_their_queue(workspace, engine, team, submitted):
    add_reviewer(engine, "cai")
    ana, ben, cai = log_in(workspace, "ana"), log_in(workspace, "ben"), log_in(workspace, "cai")
    first = next_submission(ana)
    assert next_submission(ben) == first  # the one closest to its two ratings
    second = next_submission(cai)  # the first has both its places held
    assert second != first
    assert ana.get(f"/review/s/{second}").status_code == 403
    assert cai.get(f"/review/s/{first}").status_code == 403
    assert (
        ana.post(
            f"/review/s/{second}/rating", data={"score": "4", "csrf_token": ana.csrf}
        ).status_code
        == 403
    )
    assert ana.get("/review/s/S-NOSUCH00").status_code == 404
    # A researcher not assigned to it is taken to the adjudication view.
    rita = log_in(workspace, "rita")
    assert rita.get(f"/review/s/{first}").location.endswith(f"/review/s/{first}/adjudicate")


def test_a_rating_sent_after_the_place_went_to_others_who_rated_is_refused(
    workspace, engine, team, submitted
):
    import time

    from sqlalchemy import update

    from study.review import ratings as rating_store
    from study.store import reading, writing
    from study.store.review_tables import review_assignments

    add_reviewer(engine, "cai")
    ana, ben, cai = log_in(workspace, "ana"), log_in(workspace, "ben"), log_in(workspace, "cai")
    submission_id = next_submission(ana)  # ana opens it, and leaves the page open for a day
    with writing(engine) as connection:
        connection.execute(
            update(review_assignments)
            .where(review_assignments.c.submission_id == submission_id)
            .values(assigned_at=time.time() - 25 * 3600)
        )
    for reviewer in (ben, cai):
        assert next_submission(reviewer) == submission_id
        rated = reviewer.post(
            f"/review/s/{submission_id}/rating", data={"score": "5", "csrf_token": reviewer.csrf}
        )
        assert rated.status_code == 302

    late = ana.post(
        f"/review/s/{submission_id}/rating", data={"score": "2", "csrf_token": ana.csrf},
        headers={"Accept": "application/json"},
    )  # fmt: skip

    assert late.status_code == 409
    assert "expired" in late.json["error"]
    with reading(engine) as connection:
        assert [r["score"] for r in rating_store.of_submission(connection, submission_id)] == [5, 5]


def test_a_save_from_a_second_tab_that_showed_an_older_rating_is_refused_not_written_over(
    workspace, team, submitted
):
    """Ana opens the submission in two tabs; the first rates 4 with a comment. The second, still
    showing no rating, sends 2: refused (409) saying what is stored, and nothing changes."""
    from study.review import ratings as rating_store
    from study.store import reading

    ana = log_in(workspace, "ana")
    submission_id = next_submission(ana)
    page = ana.get(f"/review/s/{submission_id}").get_data(as_text=True)
    assert 'name="version" id="rating-version" value="0"' in page  # both tabs show this
    url = f"/review/s/{submission_id}/rating"
    as_json = {"Accept": "application/json"}
    first = ana.post(url, data={"score": "4", "comment": "Strong ending.", "version": "0",
                                "csrf_token": ana.csrf}, headers=as_json)  # fmt: skip
    assert first.status_code == 200 and first.json["version"] == 1

    stale = ana.post(url, data={"score": "2", "comment": "Weak middle.", "version": "0",
                                "csrf_token": ana.csrf}, headers=as_json)  # fmt: skip
    assert stale.status_code == 409
    assert stale.json["stale"] is True
    assert {k: stale.json["current"][k] for k in ("score", "comment", "version")} == {
        "score": 4, "comment": "Strong ending.", "version": 1
    }
    assert "changed in another tab" in stale.json["error"]
    assert 'it is now 4 with the comment "Strong ending."' in stale.json["error"]

    # Without JavaScript: the page again, with the message, the stored rating chosen, the
    # reviewer's unsaved comment in its box and the stored version, so rating again replaces it.
    form = ana.post(url, data={"score": "2", "comment": "Weak middle.", "version": "0",
                               "csrf_token": ana.csrf})  # fmt: skip
    shown = form.get_data(as_text=True)
    assert form.status_code == 409
    assert "changed in another tab" in shown
    assert ">Weak middle.</textarea>" in shown
    assert 'id="rating-version" value="1"' in shown
    assert re.search(r'class="score chosen"[^>]*data-testid="score-4"', shown)
    with reading(workspace.extensions["study.engine"]) as connection:
        (stored,) = rating_store.of_submission(connection, submission_id)
    assert (stored["score"], stored["comment"]) == (4, "Strong ending.")

    again = ana.post(url, data={"score": "2", "comment": "Weak middle.", "version": "1",
                                "csrf_token": ana.csrf})  # fmt: skip
    assert again.status_code == 302
    with reading(workspace.extensions["study.engine"]) as connection:
        (stored,) = rating_store.of_submission(connection, submission_id)
    assert (stored["score"], stored["comment"], stored["version"]) == (2, "Weak middle.", 2)
    refused = ana.post(url, data={"score": "3", "version": "1²", "csrf_token": ana.csrf}, headers=as_json)
    assert refused.status_code == 400 and refused.json["error"].startswith("version must be")


def test_keyboard_shortcuts_and_progress_are_on_the_page(workspace, team, submitted):
    ana = log_in(workspace, "ana")
    page = ana.get(f"/review/s/{next_submission(ana)}").get_data(as_text=True)
    assert 'aria-keyshortcuts="4"' in page and 'aria-keyshortcuts="n"' in page
    assert re.search(r"Rated <span[^>]*>0</span> of <span[^>]*>2</span>", page)
    assert 'src="/static/review-replay.js"' in page and 'id="replay-data"' in page
    assert "A great story with a clear ending" in page


def test_when_the_queue_is_empty_the_reviewer_is_told(workspace, team, submitted):
    ana = log_in(workspace, "ana")
    for _ in range(2):
        submission_id = next_submission(ana)
        ana.post(f"/review/s/{submission_id}/rating", data={"score": "4", "csrf_token": ana.csrf})
    done = ana.post("/review/next", data={"csrf_token": ana.csrf})
    assert done.location == "/review/?done=1"
    assert "Nothing more to rate" in ana.get(done.location).get_data(as_text=True)


# -- the researcher ---------------------------------------------------------------------------


def test_researcher_pages_are_closed_to_reviewers(workspace, team, submitted):
    ana = log_in(workspace, "ana")
    submission_id = next_submission(ana)
    for url in ("/review/results", "/review/audit", f"/review/s/{submission_id}/adjudicate"):
        assert ana.get(url).status_code == 403
    assert (
        ana.post(
            f"/review/s/{submission_id}/decision", data={"score": "5", "csrf_token": ana.csrf}
        ).status_code
        == 403
    )


def test_disagreements_are_adjudicated_and_agreement_is_shown(workspace, team, submitted):
    ana, ben, rita = log_in(workspace, "ana"), log_in(workspace, "ben"), log_in(workspace, "rita")
    for client, scores in ((ana, (5, 2)), (ben, (3, 2))):
        for score in scores:
            submission_id = next_submission(client)
            client.post(
                f"/review/s/{submission_id}/rating",
                data={"score": str(score), "csrf_token": client.csrf},
            )
    results = rita.get("/review/results").get_data(as_text=True)
    assert (
        "needs adjudication (1)" in results
        and "failed (1)" in results
        and "disqualified (1)" in results
    )
    assert "Krippendorff's α (ordinal)" in results and "Fleiss' κ" in results
    assert "Cohen's κ: ana &amp; ben" in results
    disputed = re.search(
        r'<tr class="status-needs-adjudication">\s*<td><a href="([^"]+)"', results
    ).group(1)
    page = rita.get(disputed).get_data(as_text=True)
    assert ">ana<" in page and ">ben<" in page
    submission_id = disputed.split("/")[3]
    decided = rita.post(
        f"/review/s/{submission_id}/decision",
        data={"score": "4", "note": "has an ending", "csrf_token": rita.csrf},
    )
    assert decided.status_code == 302
    results = rita.get("/review/results?status=passed").get_data(as_text=True)
    assert submission_id in results and "adjudicated" in results
    log = rita.get("/review/audit").get_data(as_text=True)
    assert "decision.adjudicate" in log and "note=has an ending" in log and "rating.create" in log
    assert "login" not in re.findall(r"<td>(login[^<]*)</td>", log)
    assert "login" in rita.get("/review/audit?all=1").get_data(as_text=True)


def test_no_response_of_the_workspace_carries_a_worker_id(workspace, team, submitted, engine):
    """Every page and answer, for reviewers and the researcher, after rating and deciding."""
    from study.store import reading
    from study.store import sessions as session_store

    with reading(engine) as connection:
        identifiers = set(WORKERS)
        for session_id in submitted:
            session = session_store.get(connection, session_id)
            identifiers |= {session["assignment_id"], session["hit_id"], session_id}
    clients = {name: log_in(workspace, name) for name in ("ana", "ben", "rita")}
    bodies = [workspace.test_client().get("/review/login").get_data(as_text=True)]
    for name in ("ana", "ben"):
        client = clients[name]
        for _ in range(2):
            submission_id = next_submission(client)
            bodies.append(client.get(f"/review/s/{submission_id}").get_data(as_text=True))
            rated = client.post(
                f"/review/s/{submission_id}/rating",
                data={"score": "4", "csrf_token": client.csrf},
                headers={"Accept": "application/json"},
            )
            bodies.append(rated.get_data(as_text=True))
            bodies.append(client.get(f"/review/s/{submission_id}").get_data(as_text=True))
        bodies.append(
            client.post(
                "/review/next",
                data={"csrf_token": client.csrf},
                headers={"Accept": "application/json"},
            ).get_data(as_text=True)
        )
        bodies.append(client.get("/review/").get_data(as_text=True))
    rita = clients["rita"]
    results = rita.get("/review/results").get_data(as_text=True)
    bodies.append(results)
    for submission_id in set(re.findall(r"/review/s/(S-[A-Z0-9]+)/adjudicate", results)):
        bodies.append(rita.get(f"/review/s/{submission_id}/adjudicate").get_data(as_text=True))
        rita.post(
            f"/review/s/{submission_id}/decision", data={"score": "5", "csrf_token": rita.csrf}
        )
        bodies.append(rita.get(f"/review/s/{submission_id}/adjudicate").get_data(as_text=True))
    bodies += [
        rita.get(url).get_data(as_text=True)
        for url in ("/review/audit", "/review/audit?all=1", "/review/results?status=passed")
    ]
    assert len(bodies) > 20
    for body in bodies:
        for identifier in identifiers:
            assert identifier.lower() not in body.lower()


def test_the_standalone_workspace_answers_at_its_root(workspace):
    client = workspace.test_client()
    assert client.get("/").location == "/review/"
    assert client.get("/healthz").json == {"ok": True, "study": "coauthor", "workspace": True}
    page = client.get("/review/login")
    assert page.headers["X-Frame-Options"] == "DENY" and page.headers["Cache-Control"] == "no-store"
    assert "No reviewer accounts exist yet" in page.get_data(as_text=True)


def test_the_standalone_workspaces_error_pages_are_never_framed_or_cached(workspace):
    client = workspace.test_client()
    for response in (client.get("/review/no-such-page"), client.get("/no-such-page"), client.delete("/review/login")):
        assert response.status_code in (404, 405)
        assert response.headers.get("X-Frame-Options") == "DENY"
        assert "frame-ancestors 'none'" in response.headers.get("Content-Security-Policy", "")
        assert response.headers.get("Cache-Control") == "no-store"


def test_a_simulated_writers_submission_says_so_to_its_reviewers(workspace, team, engine):
    from study.store import simulated, writing

    session_id = finished_session(engine, access_code="sim-0", round_name="qualification")
    with writing(engine) as connection:  # as `study simulate` marks its writers' sessions
        simulated.mark(connection, session_id, persona="a hurried crowd worker", intent="a story", model="deterministic")
    ana, rita = log_in(workspace, "ana"), log_in(workspace, "rita")
    submission_id = next_submission(ana)
    page = ana.get(f"/review/s/{submission_id}").get_data(as_text=True)
    assert "simulated writer" in page and "study simulate" in page
    assert "simulated writer" in rita.get(f"/review/s/{submission_id}/adjudicate").get_data(as_text=True)
    results = rita.get("/review/results").get_data(as_text=True)
    assert re.search(rf"{submission_id}</a></td>\s*<td>qualification \(simulated\)</td>", results)


def test_a_participants_submission_is_not_marked_simulated(workspace, team, submitted):
    ana = log_in(workspace, "ana")
    assert "simulated" not in ana.get(f"/review/s/{next_submission(ana)}").get_data(as_text=True)


def test_the_home_page_reads_as_a_sentence_with_a_submission_waiting(workspace, team, engine):
    """"You have rated 0, 1 waiting for your rating ...", not "rated 0 , 1 waiting"."""
    finished_session(engine, worker_id="A1WAITING", round_name="qualification")
    client = log_in(workspace, "ana")
    assert client.post("/review/next", data={"csrf_token": client.csrf}).status_code == 302
    page = client.get("/review/").get_data(as_text=True)
    progress = re.search(r'<p data-testid="progress">(.*?)</p>', page, re.S).group(1)
    shown = " ".join(re.sub(r"<[^>]+>", "", progress).split())  # as a browser lays it out
    assert shown.startswith("You have rated 0, 1 waiting for your rating and "), shown
