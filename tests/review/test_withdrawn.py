"""A writer who withdrew (`study withdraw --study`) leaves the reviewers' workspace: their
qualification submission is in nobody's queue, page or count, and the ratings given it leave the
agreement figures (they stay in the audit log); `study qualify` pays their work once, as passed
work, and grants them nothing."""

from __future__ import annotations

from decimal import Decimal

from click.testing import CliRunner

from study import config
from study.cli import main
from study.mturk import ledger, posting
from study.mturk import settings as mturk_settings
from study.mturk.context import open_context
from study.review import ratings as rating_store
from study.review import submissions
from study.store import reading, writing
from tests.mturk.conftest import with_model
from tests.mturk.walk import take_hit
from tests.review.conftest import add_reviewer, log_in, set_sections
from tests.review.sessions import finished_session
from tests.review.test_qualify import TASK_URL, held, qualify, rewards, run


def withdraw(folder, writer: str) -> None:
    done = CliRunner().invoke(main, ["withdraw", writer, "--study", str(folder)])
    assert done.exit_code == 0, done.output


def next_submission(client) -> str:
    response = client.post("/review/next", data={"csrf_token": client.csrf})
    assert response.status_code == 302
    return response.location.rsplit("/", 1)[-1]


def test_a_withdrawn_writers_submission_leaves_the_queue_the_counts_and_the_agreement(
    review_folder, workspace, engine
):
    finished_session(engine, worker_id="A1LEAVES", round_name="qualification", completed_at=1000.0)
    finished_session(engine, worker_id="A1STAYS", round_name="qualification", completed_at=2000.0)
    for name in ("ana", "ben"):
        add_reviewer(engine, name)
    add_reviewer(engine, "rita", role="researcher")
    ana, ben, rita = (log_in(workspace, name) for name in ("ana", "ben", "rita"))
    gone = next_submission(ana)  # the oldest: the writer who withdraws
    ana.post(f"/review/s/{gone}/rating", data={"score": "5", "csrf_token": ana.csrf})
    assert next_submission(ben) == gone  # assigned to ben, not yet rated

    withdraw(review_folder, "A1LEAVES")

    # Nobody is handed it again, not even ben, whose assignment would come first.
    stays = next_submission(ben)
    assert stays != gone and next_submission(ana) == stays
    for client in (ana, ben):
        page = client.get(f"/review/s/{gone}")
        assert page.status_code == 403 and "its writer withdrew" in page.get_data(as_text=True)
        rated = client.post(f"/review/s/{gone}/rating", data={"score": "4", "csrf_token": client.csrf})
        assert rated.status_code == 403
    assert gone not in ana.get("/review/").get_data(as_text=True)  # not among her ratings either
    assert rita.get(f"/review/s/{gone}/adjudicate").status_code == 403

    results = rita.get("/review/results").get_data(as_text=True)
    assert gone not in results
    assert "awaiting ratings (1)" in results
    assert "0 submissions with two or more ratings; 0 ratings" in results  # ana's 5 left the figures
    assert gone in rita.get("/review/audit").get_data(as_text=True)  # the log keeps what was done

    status = CliRunner().invoke(main, ["status", str(review_folder)], catch_exceptions=False).output
    assert "Rounds (sessions): qualification 1 (1 complete), main 0 (0 complete)" in status
    assert ("Review: 1 submissions, 0 ratings by 0 reviewers; awaiting ratings 1, needs adjudication 0, "
            "passed 0, failed 0, disqualified 0; 1 submission(s) of writers who withdrew left out") in status


def two_took_the_qualification_hit(review_folder, requester, emulator, model_url):
    """A1STAYS and A1LEAVES took the qualification round's HIT on MTurk: the context, and each
    one's review submission id."""
    from study.server import create_app

    set_sections(review_folder, mturk={"reward": "2.50", "budget": "100.00"})
    study = config.load(review_folder)
    ctx = open_context(study, mturk_settings.from_study(study), requester)
    posted = posting.post(ctx, hits=1, assignments=2, reward=Decimal("2.50"), task_url=TASK_URL)
    hit_id = posted.hits[0]["hit_id"]
    task = create_app(with_model(study, model_url), engine=ctx.engine).test_client()
    taken = {w: take_hit(emulator.url, task, hit_id, w) for w in ("A1STAYS", "A1LEAVES")}
    with writing(ctx.engine) as connection:
        submissions.collect(connection, study)
        named = {s["session_id"]: s["submission_id"] for s in submissions.all_submissions(connection)}
    return ctx, {worker: named[took.session_id] for worker, took in taken.items()}


def rate(engine, submission_ids: list[str], score: int = 5) -> None:
    """Two reviewers give each submission `score`."""
    ana, ben = add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    with writing(engine) as connection:
        for reviewer in (ana, ben):
            for submission_id in submission_ids:
                rating_store.rate(connection, submission_id, reviewer, score, "", scores=(1, 2, 3, 4, 5))


def test_qualify_pays_a_withdrawn_writers_unrated_submission_once_and_grants_nothing(
    review_folder, requester, emulator, model_url
):
    ctx, named = two_took_the_qualification_hit(review_folder, requester, emulator, model_url)
    rate(ctx.engine, [named["A1STAYS"]])  # only the writer who stays is rated
    withdraw(review_folder, "A1LEAVES")
    leaving = named["A1LEAVES"]
    balance = Decimal(ctx.requester.client.get_account_balance()["AvailableBalance"])

    first = run(str(review_folder), "--endpoint-url", emulator.url)
    again = run(str(review_folder), "--endpoint-url", emulator.url)

    assert "Not decided yet" not in first  # it waits for no reviewer
    assert f"{leaving}: HIT approved" in first
    for output in (first, again):
        assert f"{leaving}: paid, not qualified: withdrew (study withdraw --study)" in output
    assert "1 granted, 0 already held, 2 HITs paid or confirmed, 0 failures." in first
    assert "0 granted, 1 already held, 0 HITs paid or confirmed, 0 failures." in again
    assert held(ctx) == {"A1STAYS": ("Granted", 5)}
    assert rewards(ctx) == {"A1STAYS": "confirmed", "A1LEAVES": "confirmed"}
    paid = balance - Decimal(ctx.requester.client.get_account_balance()["AvailableBalance"])
    assert paid == Decimal("6.00")  # two rewards of 2.50 plus MTurk's 20% fee, once each
    with reading(ctx.engine) as connection:
        assert ledger.count(connection, ctx.environment, kind="reward", status="confirmed") == 2


def test_a_writer_who_passed_and_then_withdrew_is_turned_away_from_the_main_round(
    review_folder, review_study, engine, model_url
):
    """The task server closes the main round to them at once, whatever the platform still says."""
    from study.server import create_app
    from tests.review.test_task_server import enter, finish

    client = create_app(with_model(review_study, model_url), engine=engine).test_client()
    finish(client, enter(client, "lab-2", "qualification").location.split("/")[2])
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, review_study)
    rate(engine, [submission_id])  # passed
    admitted = enter(client, "lab-2", "main", another=True)
    assert admitted.status_code == 302  # passed: let in
    finish(client, admitted.location.split("/")[2], prompt="mana")

    withdraw(review_folder, "lab-2")

    refused = enter(client, "lab-2", "main", another=True)
    assert refused.status_code == 403
    assert "You have withdrawn from this study" in refused.get_data(as_text=True)


def granted_two(review_folder, requester, emulator, model_url):
    """Two MTurk writers who passed the qualification round and were granted its qualification
    by `study qualify`; the context and A1LEAVES's submission id."""
    ctx, named = two_took_the_qualification_hit(review_folder, requester, emulator, model_url)
    rate(ctx.engine, [named["A1STAYS"], named["A1LEAVES"]])
    run(str(review_folder), "--endpoint-url", emulator.url)
    assert held(ctx) == {"A1STAYS": ("Granted", 5), "A1LEAVES": ("Granted", 5)}
    return ctx, named["A1LEAVES"]


def revocations(ctx) -> list[tuple[str, str]]:
    from study.review import audit

    with reading(ctx.engine) as connection:
        logged = audit.entries(connection, actions=(audit.QUALIFY_REVOKE,))
    return [(e["submission_id"], e["detail"]["why"]) for e in logged]


def test_qualify_revokes_the_qualification_of_a_writer_who_withdrew_after_the_grant_once(
    review_folder, requester, emulator, model_url
):
    ctx, leaving = granted_two(review_folder, requester, emulator, model_url)

    told = CliRunner().invoke(main, ["withdraw", "A1LEAVES", "--study", str(review_folder)])
    assert told.exit_code == 0, told.output
    assert "They hold the qualification study qualify granted them (MTurk sandbox)" in told.output
    assert f"the next `study qualify {review_folder}` revokes it" in told.output
    planned = run(str(review_folder), "--endpoint-url", emulator.url, "--dry-run")
    assert f"{leaving}  A1LEAVES  withdrew  score -  revoke  -" in planned
    assert held(ctx)["A1LEAVES"] == ("Granted", 5)  # a dry run changes nothing
    revoked = run(str(review_folder), "--endpoint-url", emulator.url)
    again = run(str(review_folder), "--endpoint-url", emulator.url)

    assert f"{leaving}: paid, qualification revoked: withdrew (study withdraw --study)" in revoked
    assert f"{leaving}: paid, not qualified: withdrew (study withdraw --study)" in again
    assert held(ctx) == {"A1STAYS": ("Granted", 5), "A1LEAVES": ("Revoked", 5)}
    state = emulator.state.data["qualifications"]
    (reason,) = [q["_reason"] for q in state.values() if q["WorkerId"] == "A1LEAVES"]
    assert "A1LEAVES" not in reason and "withdrew from this study" in reason
    assert revocations(ctx) == [(leaving, "withdrew")]  # called once, and the log shows it
    assert rewards(ctx) == {"A1STAYS": "confirmed", "A1LEAVES": "confirmed"}  # still paid, once


def test_a_revocation_while_mturk_is_out_of_reach_is_refused_clearly_and_made_by_the_next_run(
    review_folder, requester, emulator, model_url
):
    from study.mturk.emulator.server import serve_in_thread

    ctx, leaving = granted_two(review_folder, requester, emulator, model_url)
    withdraw(review_folder, "A1LEAVES")
    emulator.stop()  # MTurk out of reach

    failed = CliRunner().invoke(qualify, [str(review_folder), "--endpoint-url", emulator.url])

    assert failed.exit_code == 1 and "Traceback" not in failed.output
    assert "Fix: check the network connection" in failed.output
    assert revocations(ctx) == []  # nothing recorded as done
    back = serve_in_thread(emulator.state)
    try:
        retried = run(str(review_folder), "--endpoint-url", back.url)
    finally:
        back.stop()
    assert f"{leaving}: paid, qualification revoked: withdrew" in retried
    assert revocations(ctx) == [(leaving, "withdrew")]
