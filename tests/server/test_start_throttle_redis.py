"""The per-address start throttle counted in Redis (STUDY_REDIS_URL; study.server.throttle,
entry_pages.entering) uses up an address's hour only with sessions created, as the study
database's count does: a worker's double-click on the HIT sends two requests for one assignment,
both count before either creates the session, and the one that then finds the session there
gives its count back."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import redis

from study import config
from study.server import create_app

ADDRESS = "203.0.113.7"
MTURK = {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "3ASSIGN0001", "hitId": "3HIT0001",
         "turkSubmitTo": "https://workersandbox.mturk.com"}  # fmt: skip


def _app(study_folder, monkeypatch, redis_url, per_hour: int):
    monkeypatch.setenv("STUDY_REDIS_URL", redis_url)
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace("[session]\n", f"[session]\nnew_sessions_per_ip_per_hour = {per_hour}\n"))
    return create_app(config.load(study_folder), suggestion_engine=object())


def _counted(redis_url) -> int:
    client = redis.Redis.from_url(redis_url)
    return sum(client.zcard(key) for key in client.scan_iter("study:*:limit:starts:*"))


def test_a_double_click_on_one_assignment_counts_one_start_in_redis(study_folder, monkeypatch, redis_url):
    app = _app(study_folder, monkeypatch, redis_url, per_hour=2)
    client = app.extensions["study.limit_store"].client
    # Both clicks count in Redis before either goes on to create the session (the race a
    # double-click makes): each count waits here for the other's.
    both_counted = threading.Barrier(2, timeout=10)
    evalsha = client.evalsha

    def count_then_wait(*args, **kwargs):
        answer = evalsha(*args, **kwargs)
        both_counted.wait()
        return answer

    monkeypatch.setattr(client, "evalsha", count_then_wait)

    def click(_):
        response = app.test_client().get("/task", query_string=MTURK, environ_base={"REMOTE_ADDR": ADDRESS})
        return response.status_code, response.headers.get("Location")

    with ThreadPoolExecutor(2) as pool:
        clicks = list(pool.map(click, range(2)))
    monkeypatch.setattr(client, "evalsha", evalsha)

    assert [status for status, _ in clicks] == [302, 302]
    assert clicks[0][1] == clicks[1][1], "both clicks reach the one session"
    assert _counted(redis_url) == 1
    # The address's second start of the hour is still free for another worker behind it.
    other = app.test_client().get(
        "/task", query_string={**MTURK, "workerId": "B2", "assignmentId": "3ASSIGN0002"},
        environ_base={"REMOTE_ADDR": ADDRESS},
    )  # fmt: skip
    assert other.status_code == 302
    assert _counted(redis_url) == 2

