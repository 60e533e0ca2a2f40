"""`study qualify` against the local MTurk endpoint, through the real boto3 client: workers take
the qualification HIT on the real task server, reviewers rate, and the command grants the
qualification with the score as its value and pays each qualification HIT exactly once."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from click.testing import CliRunner

from study import config
from study.mturk import ledger, posting
from study.mturk import settings as mturk_settings
from study.mturk.cli import mturk as mturk_cli
from study.mturk.context import open_context
from study.review import decisions, submissions
from study.review import ratings as rating_store
from study.review.cli import qualify
from study.store import reading, writing
from tests.mturk.conftest import with_model
from tests.mturk.walk import take_hit
from tests.review.conftest import add_reviewer, set_sections

TASK_URL = "https://study.example.org/task?round=qualification"
# worker -> (AI requests, the two reviewers' scores)
WRITERS = {
    "A1GREATWRITER": (2, (5, 5)),
    "A1GOODWRITER": (1, (5, 4)),
    "A1SPAMMER": (1, (1, 1)),
    "A1NEVERASKED": (0, None),
}


@pytest.fixture
def ctx(review_folder, requester):
    set_sections(review_folder, mturk={"reward": "2.50", "budget": "100.00"})
    study = config.load(review_folder)
    return open_context(study, mturk_settings.from_study(study), requester)


@pytest.fixture
def rated(ctx, emulator, model_url):
    """The qualification HIT taken by every writer, and every submission rated."""
    from study.server import create_app

    posted = posting.post(
        ctx, hits=1, assignments=len(WRITERS), reward=Decimal("2.50"), task_url=TASK_URL
    )
    hit_id = posted.hits[0]["hit_id"]
    # The writers press Tab on the real task server, which asks a local model.
    task = create_app(with_model(ctx.study, model_url), engine=ctx.engine).test_client()
    taken = {
        w: take_hit(emulator.url, task, hit_id, w, ai_requests=n) for w, (n, _) in WRITERS.items()
    }
    ana, ben = add_reviewer(ctx.engine, "ana"), add_reviewer(ctx.engine, "ben")
    with writing(ctx.engine) as connection:
        submissions.collect(connection, ctx.study)
        by_session = {
            s["session_id"]: s["submission_id"] for s in submissions.all_submissions(connection)
        }
        for worker, (_, scores) in WRITERS.items():
            for reviewer, score in zip((ana, ben), scores or ()):
                rating_store.rate(
                    connection,
                    by_session[taken[worker].session_id],
                    reviewer,
                    score,
                    "",
                    scores=(1, 2, 3, 4, 5),
                )
    return taken


def run(*args) -> str:
    result = CliRunner().invoke(qualify, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def held(ctx) -> dict[str, tuple[str, int]]:
    (qualification,) = [
        t
        for t in ctx.requester.client.list_qualification_types(
            MustBeOwnedByCaller=True, MustBeRequestable=False
        )["QualificationTypes"]
        if t["Name"] == "coauthor qualified"
    ]
    found = ctx.requester.client.list_workers_with_qualification_type(
        QualificationTypeId=qualification["QualificationTypeId"]
    )["Qualifications"]
    return {q["WorkerId"]: (q["Status"], q["IntegerValue"]) for q in found}


def rewards(ctx) -> dict[str, str]:
    with reading(ctx.engine) as connection:
        entries = ledger.entries(connection, ctx.environment, kind="reward")
    return {e["worker_id"]: e["status"] for e in entries if e["worker_id"]}


def test_qualify_grants_the_score_as_value_and_pays_each_hit_once(
    ctx, rated, emulator, review_folder
):
    mturk = ctx.requester.client
    before = Decimal(mturk.get_account_balance()["AvailableBalance"])
    output = run(
        str(review_folder), "--endpoint-url", emulator.url, "--message", "The main round is open."
    )
    assert "2 granted, 0 already held, 2 HITs paid or confirmed, 0 failures." in output
    assert "not emailed" not in output
    assert held(ctx) == {"A1GREATWRITER": ("Granted", 5), "A1GOODWRITER": ("Granted", 4)}
    # Paid: every rated submission but spam (pay_min_score 2); the session that never asked the
    # AI is left to `study mturk review`, which rejects it.
    assert rewards(ctx) == {"A1GREATWRITER": "confirmed", "A1GOODWRITER": "confirmed"}
    statuses = {
        w: mturk.get_assignment(AssignmentId=t.assignment_id)["Assignment"]["AssignmentStatus"]
        for w, t in rated.items()
    }
    assert statuses == {
        "A1GREATWRITER": "Approved", "A1GOODWRITER": "Approved",
        "A1SPAMMER": "Submitted", "A1NEVERASKED": "Submitted",
    }  # fmt: skip
    paid = Decimal(mturk.get_account_balance()["AvailableBalance"])
    assert before - paid == Decimal("6.00")  # two rewards of 2.50 plus MTurk's 20% fee

    again = run(str(review_folder), "--endpoint-url", emulator.url)
    assert "0 granted, 2 already held, 0 HITs paid or confirmed, 0 failures." in again
    assert Decimal(mturk.get_account_balance()["AvailableBalance"]) == paid
    with reading(ctx.engine) as connection:
        assert ledger.count(connection, ctx.environment, kind="reward", status="confirmed") == 2


def test_qualify_names_the_hits_it_leaves_unpaid_which_mturk_would_pay_by_itself(
    ctx, rated, emulator, review_folder
):
    """Spam and a session that never asked the AI are not paid by `study qualify`, but MTurk
    auto-approves a submitted HIT after auto_approve_hours: the researcher is told which, and
    how to decide them, until they are decided."""
    spam, never = rated["A1SPAMMER"].assignment_id, rated["A1NEVERASKED"].assignment_id
    output = run(str(review_folder), "--endpoint-url", emulator.url)
    assert f"not paid, scored 1, below pay_min_score 2 (assignment {spam})" in output
    assert f"not paid, disqualified (assignment {never})" in output
    assert "MTurk approves (pays) a submitted HIT by itself 72 hours after its submission" in output
    assert f"study mturk reject {review_folder} {spam} {never} --feedback TEXT" in output

    rejected = CliRunner().invoke(mturk_cli, [
        "reject", str(review_folder), spam, never, "--feedback", "No story was written.",
        "--endpoint-url", emulator.url,
    ], catch_exceptions=False)  # fmt: skip
    assert rejected.exit_code == 0, rejected.output
    CliRunner().invoke(mturk_cli, ["sync", str(review_folder), "--endpoint-url", emulator.url],
                       catch_exceptions=False)  # fmt: skip
    again = run(str(review_folder), "--endpoint-url", emulator.url)
    assert "not paid" not in again and "auto" not in again


def test_a_grant_is_undone_with_qual_revoke_and_not_repeated(ctx, rated, emulator, review_folder):
    run(str(review_folder), "--endpoint-url", emulator.url)
    revoked = CliRunner().invoke(
        mturk_cli,
        [
            "qual",
            "revoke",
            str(review_folder),
            "coauthor qualified",
            "A1GOODWRITER",
            "--endpoint-url",
            emulator.url,
        ],
    )
    assert revoked.exit_code == 0, revoked.output
    assert held(ctx)["A1GOODWRITER"] == ("Revoked", 4)
    run(str(review_folder), "--endpoint-url", emulator.url)
    assert held(ctx)["A1GOODWRITER"] == ("Revoked", 4)


def test_a_later_adjudication_changes_the_value_or_revokes(ctx, rated, emulator, review_folder):
    run(str(review_folder), "--endpoint-url", emulator.url)
    rita = add_reviewer(ctx.engine, "rita", role="researcher")
    with writing(ctx.engine) as connection:
        by_session = {
            s["session_id"]: s["submission_id"] for s in submissions.all_submissions(connection)
        }
        great = by_session[rated["A1GREATWRITER"].session_id]
        good = by_session[rated["A1GOODWRITER"].session_id]
        decisions.adjudicate(
            connection, great, rita, 4, "reasonable, not great", scores=(1, 2, 3, 4, 5)
        )
        decisions.adjudicate(connection, good, rita, 3, "no clear ending", scores=(1, 2, 3, 4, 5))
    output = run(str(review_folder), "--endpoint-url", emulator.url)
    assert f"{good}: revoked 'coauthor qualified' from A1GOODWRITER" in output
    assert held(ctx) == {"A1GREATWRITER": ("Granted", 4), "A1GOODWRITER": ("Revoked", 4)}
    assert rewards(ctx)["A1GOODWRITER"] == "confirmed"  # paid for the work all the same


def test_dry_run_changes_nothing(ctx, rated, emulator, review_folder):
    output = run(str(review_folder), "--endpoint-url", emulator.url, "--dry-run")
    lines = {line.split()[1]: line for line in output.splitlines() if line.startswith("S-")}
    assert lines["A1GREATWRITER"].endswith("passed  score 5  grant  pay")
    assert lines["A1SPAMMER"].endswith("failed  score 1  -  -")
    assert lines["A1NEVERASKED"].endswith("disqualified  score -  -  -")
    assert rewards(ctx) == {}  # nothing bound to a worker, nothing paid


@pytest.fixture
def no_rounds_ctx(review_folder, requester):
    """A study without [[rounds]]: every finished session is reviewed, and a worker may write
    more than once (README, Qualification rounds and reviewing)."""
    import tomllib

    import tomli_w

    path = review_folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data.pop("rounds")
    data["mturk"] = {"reward": "2.50", "budget": "100.00"}
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    study = config.load(review_folder)
    return open_context(study, mturk_settings.from_study(study), requester)


def test_a_writer_who_still_passes_with_another_submission_keeps_the_qualification(
    no_rounds_ctx, emulator
):
    from study.mturk import qualify as mturk_qualify

    ctx = no_rounds_ctx
    _, second = _two_submissions_rated(ctx, 5, 5)
    rita = add_reviewer(ctx.engine, "rita", role="researcher")
    by_session = _submission_ids(ctx)
    mturk_qualify.qualify(ctx, pay=False)
    assert held(ctx) == {"A1TWICE": ("Granted", 5)}
    # A researcher later fails the second submission; the first still passes.
    with writing(ctx.engine) as connection:
        decisions.adjudicate(
            connection, by_session[second], rita, 2, "below average", scores=(1, 2, 3, 4, 5)
        )
        # The task server's own reading: the writer passed (one of their submissions did).
        assert decisions.writer_passed(connection, ctx.study, None, worker_id="A1TWICE")
    report = mturk_qualify.qualify(ctx, pay=False)
    assert report.revoked == []
    assert held(ctx) == {"A1TWICE": ("Granted", 5)}


def test_a_writer_with_two_passing_submissions_holds_their_best_score(no_rounds_ctx, emulator):
    from study.mturk import qualify as mturk_qualify

    ctx = no_rounds_ctx
    _two_submissions_rated(ctx, 5, 4)

    report = mturk_qualify.qualify(ctx, pay=False)

    # As on Prolific, and as a main round requiring "EqualTo 5" should read it: the best score,
    # not whichever submission happened to be granted last.
    assert held(ctx) == {"A1TWICE": ("Granted", 5)}
    assert [worker for _, worker, _ in report.granted] == ["A1TWICE"]  # one grant, one email
    assert mturk_qualify.qualify(ctx, pay=False).granted == []
    assert held(ctx) == {"A1TWICE": ("Granted", 5)}


def _two_submissions_rated(ctx, first_score: int, second_score: int) -> tuple[str, str]:
    """Writer A1TWICE's two sessions (two HITs), each rated by two reviewers; their ids."""
    from sqlalchemy import update

    from study.store.db import sessions
    from study.store.mturk import mturk_assignments
    from tests.review.sessions import finished_session

    first = finished_session(ctx.engine, worker_id="A1TWICE", completed_at=1000.0)
    with writing(ctx.engine) as connection:  # each HIT the worker took has its own assignment
        connection.execute(
            update(sessions).where(sessions.c.session_id == first).values(assignment_id="ASSIGN1")
        )
    second = finished_session(ctx.engine, worker_id="A1TWICE", completed_at=2000.0)
    with writing(ctx.engine) as connection:  # both HITs submitted by A1TWICE, as sync saw them
        for assignment_id in ("ASSIGN1", "ASSIGNA1TWICE"):
            connection.execute(mturk_assignments.insert().values(
                environment=ctx.environment, assignment_id=assignment_id,
                hit_id="HITQUALIFICATION1", worker_id="A1TWICE", status="Submitted",
                synced_at=time.time(),
            ))  # fmt: skip
    ana, ben = add_reviewer(ctx.engine, "ana"), add_reviewer(ctx.engine, "ben")
    with writing(ctx.engine) as connection:
        submissions.collect(connection, ctx.study)
    by_session = _submission_ids(ctx)
    with writing(ctx.engine) as connection:
        for session, score in ((first, first_score), (second, second_score)):
            for reviewer in (ana, ben):
                rating_store.rate(
                    connection, by_session[session], reviewer, score, "", scores=(1, 2, 3, 4, 5)
                )
    return first, second


def _submission_ids(ctx) -> dict[str, str]:
    with writing(ctx.engine) as connection:
        return {s["session_id"]: s["submission_id"] for s in submissions.all_submissions(connection)}


def test_a_message_mturk_would_refuse_stops_qualify_before_anyone_is_paid_or_granted(
    ctx, rated, emulator, review_folder
):
    """The email goes out after the grants, which are remembered and not repeated: if MTurk's
    limits refused the message only then, fixing it and running again emailed nobody."""
    too_long = "The main round is open. " * 200  # 4800 characters; MTurk takes 4096
    refused = CliRunner().invoke(
        qualify, [str(review_folder), "--endpoint-url", emulator.url, "--message", too_long]
    )
    assert refused.exit_code == 1 and "MessageText" in refused.output and "4096" in refused.output
    assert emulator.state.data["qualifications"] == {} and rewards(ctx) == {}  # nothing done
    output = run(
        str(review_folder), "--endpoint-url", emulator.url, "--message", "The main round is open."
    )
    assert "2 granted" in output
    assert sorted(e["WorkerId"] for e in emulator.state.data["emails"]) == [
        "A1GOODWRITER",
        "A1GREATWRITER",
    ]


def test_qualify_grants_only_the_worker_mturk_says_did_the_qualification_hit(
    ctx, emulator, model_url, review_folder
):
    """The task URL's workerId is whatever the browser sends: a worker who accepted the HIT as
    A1EVE and opened the task as A1FRIEND wrote a session MTurk knows as A1EVE's."""
    from study.server import create_app

    hit_id = posting.post(
        ctx, hits=1, assignments=1, reward=Decimal("2.50"), task_url=TASK_URL
    ).hits[0]["hit_id"]
    task = create_app(with_model(ctx.study, model_url), engine=ctx.engine).test_client()
    taken = take_hit(emulator.url, task, hit_id, "A1EVE", opened_as="A1FRIEND")
    ana, ben = add_reviewer(ctx.engine, "ana"), add_reviewer(ctx.engine, "ben")
    with writing(ctx.engine) as connection:
        submissions.collect(connection, ctx.study)
        (submission,) = submissions.all_submissions(connection)
        for reviewer in (ana, ben):
            rating_store.rate(
                connection, submission["submission_id"], reviewer, 5, "", scores=(1, 2, 3, 4, 5)
            )
    dry = run(str(review_folder), "--endpoint-url", emulator.url, "--dry-run")
    assert "A1FRIEND  passed  score 5  -  -" in dry  # what the run below does: nothing
    output = run(str(review_folder), "--endpoint-url", emulator.url)
    assert "0 granted" in output and "A1EVE" in output  # skipped, naming who MTurk says it was
    assert [q for q in emulator.state.data["qualifications"].values()] == []  # nobody qualified
    status = ctx.requester.call("GetAssignment", AssignmentId=taken.assignment_id)
    assert status["Assignment"]["AssignmentStatus"] == "Submitted"  # left to `study mturk review`


def test_a_qualification_hit_the_researcher_rejected_stays_unpaid_and_says_how_to_pay_it(
    ctx, rated, emulator, review_folder
):
    """`study mturk review` rejected a submission (too little typed, say) that the reviewers then
    rated well: qualify neither fails on it run after run nor overrides the rejection itself."""
    from study.mturk import review as mturk_review

    good = rated["A1GOODWRITER"].assignment_id
    mturk_review.reject(ctx, good, "Sorry, we could not approve this HIT: too little text.")
    dry = run(str(review_folder), "--endpoint-url", emulator.url, "--dry-run")
    (line,) = [line for line in dry.splitlines() if " A1GOODWRITER " in line]
    assert line.endswith("passed  score 4  grant  -")  # what the run below does: no pay
    output = run(str(review_folder), "--endpoint-url", emulator.url)
    assert "2 granted, 0 already held, 1 HITs paid or confirmed, 0 failures." in output
    assert (
        f"skipped, assignment {good} was rejected on MTurk, so its HIT is not paid; to pay it "
        f"after all: study mturk approve {review_folder} {good} --override-rejection"
    ) in output
    status = ctx.requester.call("GetAssignment", AssignmentId=good)["Assignment"]["AssignmentStatus"]
    assert status == "Rejected" and rewards(ctx)["A1GOODWRITER"] == "cancelled"


def test_a_writer_who_withdrew_is_paid_for_the_work_but_granted_no_qualification(
    ctx, rated, emulator, review_folder
):
    from study.cli import main

    withdrawn = CliRunner().invoke(main, ["withdraw", "A1GOODWRITER", "--study", str(review_folder)])
    assert withdrawn.exit_code == 0, withdrawn.output

    output = run(str(review_folder), "--endpoint-url", emulator.url)

    assert "1 granted, 0 already held, 2 HITs paid or confirmed, 0 failures." in output
    assert ": paid, not qualified: withdrew (study withdraw --study)" in output
    assert held(ctx) == {"A1GREATWRITER": ("Granted", 5)}
    assert rewards(ctx) == {"A1GREATWRITER": "confirmed", "A1GOODWRITER": "confirmed"}
