"""Posting HITs (ExternalQuestion, requirements, budget, crash safety), and the rules for
extending, expiring and deleting them."""

from __future__ import annotations

import re
import time
from dataclasses import replace
import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest
from sqlalchemy import select

from study import config

from study.mturk import budget, hit_actions, hits, ledger, posting, qualifications
from study.mturk.emulator import accept_and_submit
from study.mturk.hits import EXTERNAL_QUESTION_NS
from study.mturk.review import approve, reject
from study.review import settings as review_settings
from study.store import reading
from study.store.mturk import mturk_hits
from tests.mturk.conftest import TASK_URL, connect
from tests.mturk.walk import accept

NS = {"q": EXTERNAL_QUESTION_NS}


def _post(ctx, hits_count=1, assignments=2, reward="2.50"):
    return posting.post(
        ctx, hits=hits_count, assignments=assignments, reward=Decimal(reward), task_url=TASK_URL
    )


def test_the_external_question_points_to_the_task_page_with_ampersands_escaped():
    xml = hits.external_question(
        "https://study.example.org/task?round=main&lang=en", frame_height=0
    )
    assert "task?round=main&amp;lang=en" in xml
    root = ET.fromstring(xml)
    assert (
        root.find("q:ExternalURL", NS).text == "https://study.example.org/task?round=main&lang=en"
    )
    assert root.find("q:FrameHeight", NS).text == "0"


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://study.example.org/task", "not an https URL"),
        ("https://study.example.org/", "does not end with /task"),
        ("", "not an https URL"),
    ],
)
def test_task_urls_must_be_https_task_pages(url, words):
    with pytest.raises(hits.HitError, match=words):
        hits.check_task_url(url)


def test_post_creates_a_hit_type_and_hits_with_the_papers_requirements(ctx, emulator):
    posted = _post(ctx, hits_count=2, assignments=3)
    assert not posted.resumed and len(posted.hits) == 2
    state = emulator.state.data
    assert len(state["hit_types"]) == 1
    hit = state["hits"][posted.hits[0]["hit_id"]]
    assert (hit["MaxAssignments"], hit["Reward"]) == (3, "2.50")
    assert "task?round=main&amp;lang=en" in hit["Question"]
    required = {
        (
            r["QualificationTypeId"],
            r["Comparator"],
            str(r.get("IntegerValues") or r.get("LocaleValues")),
        )
        for r in hit["QualificationRequirements"]
    }
    assert required == {
        ("000000000000000000L0", "GreaterThan", "[97]"),
        ("00000000000000000071", "EqualTo", "[{'Country': 'US'}]"),
        ("00000000000000000040", "GreaterThan", "[10000]"),
    }
    with reading(ctx.engine) as connection:
        slots = ledger.entries(connection, ctx.environment, kind="reward")
        committed = budget.totals(connection, ctx.environment).committed
    assert len(slots) == 6 and all(s["status"] == "intended" and s["hit_id"] for s in slots)
    assert committed.total == Decimal("18.00")  # 6 x (2.50 + 0.50)


def test_the_studys_own_qualifications_are_required_by_name(make_ctx, requester, emulator):
    ctx = make_ctx(qualifications=[{"name": "coauthor-qualified"}], paper_requirements=False)
    with pytest.raises(qualifications.QualificationError, match="qual create"):
        _post(ctx)
    type_id = qualifications.create(
        requester, ctx.engine, "coauthor-qualified", "Passed the qualification round"
    )
    posted = _post(ctx)
    requirements = emulator.state.data["hits"][posted.hits[0]["hit_id"]][
        "QualificationRequirements"
    ]
    assert requirements == [{"QualificationTypeId": type_id, "Comparator": "Exists"}]


def test_the_qualification_a_main_round_requires_is_not_required_by_the_qualification_rounds_hits(
    make_ctx, requester, emulator
):
    # README: `study qualify` grants [review] qualification "so the main round's HITs can require
    # it". Required by every HIT, it also closed the qualification round's HITs to everyone who
    # had not passed that round already: a second batch of them found no writer.
    from dataclasses import replace

    from study.mturk import settings as mturk_settings
    from study.mturk.context import open_context

    base = make_ctx(paper_requirements=False)
    raw = {
        **base.study.raw,
        "rounds": [
            {"name": "qualification", "kind": "qualification"},
            {"name": "main", "kind": "main", "requires": "qualification"},
        ],
        "mturk": {
            "budget": "100.00",
            "paper_requirements": False,
            "qualifications": [
                {"name": "coauthor qualified", "comparator": "GreaterThanOrEqualTo", "values": [4]}
            ],
        },
    }
    study = replace(base.study, raw=raw)
    ctx = open_context(study, mturk_settings.from_study(study), requester, base.engine)
    type_id = qualifications.create(requester, ctx.engine, "coauthor qualified", "Passed")

    def post(url):
        hit_id = posting.post(
            ctx, hits=1, assignments=2, reward=Decimal("2.50"), task_url=url
        ).hits[0]["hit_id"]
        return hit_id, emulator.state.data["hits"][hit_id]["QualificationRequirements"]

    first_round, required = post("https://study.example.org/task?round=qualification")
    assert required == []
    assert accept(emulator.url, first_round, "A1NEWWRITER")["AssignmentId"]
    _, required = post("https://study.example.org/task?round=main")
    assert required == [
        {"QualificationTypeId": type_id, "Comparator": "GreaterThanOrEqualTo", "IntegerValues": [4]}
    ]


def _uncommented_two_rounds(text: str) -> str:
    """study.toml as `study init` wrote it, with its commented examples of a required
    qualification and of the two rounds uncommented, as their comments tell the researcher."""
    lines = text.splitlines()
    start = lines.index("# [[mturk.qualifications]]")
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("#"))
    rounds = next(i for i, line in enumerate(lines) if "Uncomment to run the study in two rounds" in line) + 1
    rounds_end = next(i for i in range(rounds, len(lines)) if not lines[i].startswith("#"))
    for i in [*range(start, end), *range(rounds, rounds_end)]:
        lines[i] = lines[i][2:] if lines[i].startswith("# ") else lines[i].lstrip("#")
    return "\n".join(lines) + "\n"


def test_the_templates_example_requirement_is_the_qualification_study_qualify_grants(
    study_folder, requester, emulator
):
    # The template's [mturk] example named "coauthor-qualified" while `study qualify` grants
    # [review] qualification, "coauthor qualified": uncommented, the qualification round's
    # HITs could not be posted (no such qualification), and once created by hand the main
    # round required a qualification nobody is ever granted.
    from study.mturk import settings as mturk_settings
    from study.mturk.context import open_context

    path = study_folder / "study.toml"
    path.write_text(_uncommented_two_rounds(path.read_text(encoding="utf-8")), encoding="utf-8")
    study = config.load(study_folder)
    raw = {**study.raw, "mturk": {**study.raw["mturk"], "paper_requirements": False}}
    study = replace(study, raw=raw)
    ctx = open_context(study, mturk_settings.from_study(study), requester)

    def required(url):
        hit_id = posting.post(ctx, hits=1, assignments=2, reward=Decimal("2.50"), task_url=url).hits[0]["hit_id"]
        return emulator.state.data["hits"][hit_id]["QualificationRequirements"]

    assert required("https://study.example.org/task?round=qualification") == []
    granted = qualifications.create(requester, ctx.engine, review_settings.from_study(study).qualification, "Passed")
    assert [r["QualificationTypeId"] for r in required("https://study.example.org/task?round=main")] == [granted]


def test_the_budget_cap_refuses_a_post_before_anything_is_created(make_ctx, emulator):
    ctx = make_ctx(budget="20.00")
    with pytest.raises(budget.BudgetExceeded) as caught:
        _post(ctx, hits_count=3, assignments=3)  # 9 x 3.00 = 27.00
    assert "$27.00" in str(caught.value) and "$20.00" in str(caught.value)
    assert emulator.state.data["hits"] == {} and emulator.state.data["hit_types"] == {}
    _post(ctx, hits_count=2, assignments=3)  # 18.00 fits
    with pytest.raises(budget.BudgetExceeded, match=r"\$18.00 is already committed"):
        _post(ctx, hits_count=1, assignments=1)  # 3.00 more would pass 20.00


def test_live_mode_needs_a_budget_cap(make_ctx, emulator):
    live = make_ctx(account=connect(emulator.url, live=True))
    with pytest.raises(budget.BudgetExceeded, match="no budget cap") as refused:
        _post(live)
    # The fix's example is a budget study.toml takes as it is written.
    example = re.search(r'e\.g\. budget = "([^"]+)"', str(refused.value)).group(1)
    capped = make_ctx(account=connect(emulator.url, live=True), budget=example)
    assert capped.settings.budget == Decimal("100.00")
    _post(capped)


def test_a_declined_confirmation_posts_nothing(ctx, emulator):
    seen = []
    assert (
        posting.post(
            ctx,
            hits=1,
            assignments=2,
            reward=Decimal("2.50"),
            task_url=TASK_URL,
            confirm=lambda cost: seen.append(cost) or False,
        )
        is None
    )
    assert seen[0].total == Decimal("6.00") and emulator.state.data["hits"] == {}


def test_a_post_that_crashed_after_creating_the_hit_is_finished_without_a_duplicate(
    ctx, emulator, monkeypatch
):
    real_record = posting._record
    monkeypatch.setattr(
        posting, "_record", lambda *a, **k: (_ for _ in ()).throw(SystemExit("crash"))
    )
    with pytest.raises(SystemExit):
        _post(ctx)
    assert (
        len(emulator.state.data["hits"]) == 1
    )  # MTurk has the HIT, the database does not know its id
    monkeypatch.setattr(posting, "_record", real_record)
    again = _post(ctx)
    assert again.resumed
    assert len(emulator.state.data["hits"]) == 1
    assert again.hits[0]["hit_id"] == next(iter(emulator.state.data["hits"]))
    assert ctx.requester.calls.count("CreateHITWithHITType") == 2  # the retry hit HitAlreadyExists


def test_a_post_interrupted_for_more_than_a_day_finds_its_hit_by_annotation(
    ctx, emulator, monkeypatch
):
    real_record = posting._record
    monkeypatch.setattr(
        posting, "_record", lambda *a, **k: (_ for _ in ()).throw(SystemExit("crash"))
    )
    with pytest.raises(SystemExit):
        _post(ctx)
    monkeypatch.setattr(posting, "_record", real_record)
    emulator.state.advance(25 * 3600)  # MTurk forgot the token
    with ctx.engine.begin() as connection:
        connection.execute(mturk_hits.update().values(created_at=time.time() - 25 * 3600))
    again = _post(ctx)
    assert again.resumed and len(emulator.state.data["hits"]) == 1
    assert (
        ctx.requester.calls.count("CreateHITWithHITType") == 1
    )  # found by annotation, not re-created


def test_extend_adds_assignments_but_not_across_ten(ctx, emulator):
    hit_id = _post(ctx, assignments=9).hits[0]["hit_id"]
    with pytest.raises(hits.HitError, match="fewer than 10 assignments to 10 or more"):
        hit_actions.extend(ctx, hit_id, more=1)
    assert emulator.state.data["hits"][hit_id]["MaxAssignments"] == 9
    small = _post(ctx, assignments=2).hits[0]["hit_id"]
    assert hit_actions.extend(ctx, small, more=3, hours=48)[0].startswith("3 more assignments (2 -> 5)")
    hit_actions.extend(ctx, small, more=3)  # a different target size: a new request
    assert emulator.state.data["hits"][small]["MaxAssignments"] == 8
    with reading(ctx.engine) as connection:
        open_slots = [
            s for s in ledger.slots(connection, ctx.environment, small) if s["status"] == "intended"
        ]
    assert len(open_slots) == 8


def test_expire_checks_the_state_first_so_running_it_twice_is_fine(ctx, emulator):
    hit_id = _post(ctx).hits[0]["hit_id"]
    assert hit_actions.expire(ctx, hit_id) == "expired"
    assert hit_actions.expire(ctx, hit_id) == "already expired"
    assert ctx.requester.calls.count("UpdateExpirationForHIT") == 1


def test_a_hit_expired_and_reopened_twice_within_a_second_is_each_time_as_asked(
    ctx, emulator, monkeypatch
):
    # MTurk builds UpdateExpirationForHIT's token from the HIT and the date (in whole seconds),
    # so the second expire is answered "already processed" and does nothing: the HIT stayed
    # open, taking workers, while the command said "expired".
    import datetime as dt
    from types import SimpleNamespace

    second = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)

    class Clock(dt.datetime):  # every step below in the same second
        @classmethod
        def now(cls, tz=None):
            return second

    monkeypatch.setattr(
        hit_actions, "dt", SimpleNamespace(datetime=Clock, timedelta=dt.timedelta, timezone=dt.timezone)
    )
    hit_id = _post(ctx).hits[0]["hit_id"]
    assert hit_actions.expire(ctx, hit_id) == "expired"
    hit_actions.extend(ctx, hit_id, hours=1)
    assert ctx.requester.call("GetHIT", HITId=hit_id)["HIT"]["HITStatus"] == "Assignable"
    assert hit_actions.expire(ctx, hit_id) == "expired"
    assert ctx.requester.call("GetHIT", HITId=hit_id)["HIT"]["HITStatus"] == "Reviewable"
    # And the other way: re-opened to the same second as the first extend, the HIT must open.
    assert any(line.startswith("open until") for line in hit_actions.extend(ctx, hit_id, hours=1))
    assert ctx.requester.call("GetHIT", HITId=hit_id)["HIT"]["HITStatus"] == "Assignable"


def test_delete_only_a_reviewable_hit_without_submitted_assignments(ctx, emulator):
    hit_id = _post(ctx, assignments=2).hits[0]["hit_id"]
    with pytest.raises(hits.HitError, match="Assignable.*expire"):
        hit_actions.delete(ctx, hit_id)
    working = accept(emulator.url, hit_id, "A1WORKING")
    done = accept_and_submit(emulator.state, hit_id, "A1DONE", {"verificationCode": "X"})
    hit_actions.expire(ctx, hit_id)
    with pytest.raises(hits.HitError, match="1 workers are still working"):
        hit_actions.delete(ctx, hit_id)
    emulator.state.data["assignments"][working["AssignmentId"]]["AssignmentStatus"] = "Returned"
    with pytest.raises(hits.HitError, match="1 submitted assignments nobody approved or rejected"):
        hit_actions.delete(ctx, hit_id)
    approve(ctx, done["AssignmentId"])
    assert hit_actions.delete(ctx, hit_id) == "deleted"
    assert hit_actions.delete(ctx, hit_id) == "already deleted"
    assert "DeleteHIT" in ctx.requester.calls and ctx.requester.calls.count("DeleteHIT") == 1
    with reading(ctx.engine) as connection:
        status = connection.execute(
            select(mturk_hits.c.status).where(mturk_hits.c.hit_id == hit_id)
        ).scalar_one()
    assert status == "Disposed"


def test_sandbox_and_live_are_kept_apart(ctx, emulator, make_ctx):
    _post(ctx)
    live = make_ctx(account=connect(emulator.url, live=True), budget="100")
    assert hits.study_hits(live) == [] and len(hits.study_hits(ctx)) == 1
    account_id = emulator.state.data["account_id"]
    assert (ctx.environment, live.environment) == (f"sandbox:{account_id}", f"live:{account_id}")


def test_a_rejection_cancels_the_reward_it_had_reserved(ctx, emulator):
    hit_id = _post(ctx, assignments=1).hits[0]["hit_id"]
    done = accept_and_submit(emulator.state, hit_id, "A1WORKER", {"verificationCode": "X"})
    reject(ctx, done["AssignmentId"], "No session found for this code.")
    with reading(ctx.engine) as connection:
        assert budget.totals(connection, ctx.environment).committed.total == Decimal("0.00")


def test_sync_after_a_crashed_post_records_the_hit_and_post_then_posts_anew(ctx, emulator, monkeypatch):
    from study.mturk import assignments

    real_record = posting._record
    monkeypatch.setattr(posting, "_record", lambda *a, **k: (_ for _ in ()).throw(SystemExit("crash")))
    with pytest.raises(SystemExit):
        _post(ctx)
    monkeypatch.setattr(posting, "_record", real_record)
    report = assignments.sync(ctx)
    (hit_id,) = emulator.state.data["hits"]
    assert report.adopted_hits == [hit_id]
    assert [r["hit_id"] for r in hits.study_hits(ctx, refresh=False)] == [hit_id]
    again = _post(ctx)
    assert not again.resumed and len(emulator.state.data["hits"]) == 2


def test_a_rejection_can_be_overridden_and_then_the_reward_is_paid(ctx, emulator):
    hit_id = _post(ctx, assignments=1).hits[0]["hit_id"]
    done = accept_and_submit(emulator.state, hit_id, "A1WORKER", {"verificationCode": "X"})
    reject(ctx, done["AssignmentId"], "Wrong code.")
    with pytest.raises(ValueError, match="override-rejection"):
        approve(ctx, done["AssignmentId"])
    assert approve(ctx, done["AssignmentId"], "Sorry, our mistake.", override_rejection=True) == "approved"
    with reading(ctx.engine) as connection:
        assert budget.totals(connection, ctx.environment).paid.total == Decimal("3.00")
        paid = ledger.reward_entry(connection, ctx.environment, done["AssignmentId"])
    assert ctx.requester.client.get_account_balance()["AvailableBalance"] == "9997.00"
    # The ledger's note (printed by `study mturk ledger`) says why a rejected assignment was paid.
    assert paid["status"] == "confirmed"
    assert paid["note"] == "rejected, then approved with --override-rejection"


def test_a_judging_post_does_not_finish_an_interrupted_writers_post_in_its_place(
    ctx, emulator, monkeypatch
):
    from study.judging.settings import JudgingSettings
    from study.mturk import judging

    real_record = posting._record
    monkeypatch.setattr(
        posting, "_record", lambda *a, **k: (_ for _ in ()).throw(SystemExit("crash"))
    )
    with pytest.raises(SystemExit):
        _post(ctx)  # the writers' HIT is planned, its answer lost
    monkeypatch.setattr(posting, "_record", real_record)
    judged = judging.post(
        ctx,
        JudgingSettings(title="Rate short texts", description="Rate how good each text is."),
        hits=1,
        assignments=1,
        reward=Decimal("0.80"),
        task_url="https://study.example.org/judge",
    )
    assert not judged.resumed
    assert [hits.is_judging(row) for row in judged.hits] == [True]
    assert judged.hits[0]["HIT"]["Reward"] == "0.80"
    writers = _post(ctx)  # the writers' own post finishes their HIT, once
    assert writers.resumed and not hits.is_judging(writers.hits[0])
    assert len(emulator.state.data["hits"]) == 2


def test_extend_hours_never_cuts_short_a_hit_that_is_open_longer(ctx, emulator):
    hit_id = _post(ctx).hits[0]["hit_id"]  # open for [mturk] lifetime_hours, 72 by default
    expires = emulator.state.data["hits"][hit_id]["Expiration"]
    done = hit_actions.extend(ctx, hit_id, hours=1)
    assert emulator.state.data["hits"][hit_id]["Expiration"] == expires
    assert "already open until" in done[0]
    hit_actions.extend(ctx, hit_id, hours=100)  # later than now: pushed
    assert emulator.state.data["hits"][hit_id]["Expiration"] > expires + 20 * 3600


def test_a_post_mturk_refuses_leaves_nothing_planned_so_the_fixed_post_goes_out(ctx, emulator):
    # The emulator (like MTurk) frames only https pages; the dry run let an http URL through.
    with pytest.raises(hits.HitError, match="MTurk refused the HIT") as refused:
        posting.post(
            ctx, hits=3, assignments=2, reward=Decimal("2.50"), task_url="http://127.0.0.1/task"
        )
    assert "none of the 3 HITs was posted" in str(refused.value)
    with reading(ctx.engine) as connection:
        assert budget.totals(connection, ctx.environment).committed.total == Decimal("0.00")
    fixed = _post(ctx, hits_count=3)  # the researcher fixed the URL: it is what gets posted
    assert not fixed.resumed and len(fixed.hits) == 3
    assert {row["task_url"] for row in fixed.hits} == {TASK_URL}
    assert len(emulator.state.data["hits"]) == 3


@pytest.mark.parametrize(
    "requirement, words",
    [
        ({"name": "coauthor qualified", "comparator": "GreaterThanOrEqualTo"}, "needs values"),
        ({"name": "coauthor qualified", "values": [1]}, "takes no values"),
    ],
)
def test_a_qualification_requirement_without_its_values_is_named_in_study_toml(
    make_ctx, requester, emulator, requirement, words
):
    from study.mturk import settings

    with pytest.raises(settings.SettingsError) as caught:
        ctx = make_ctx(qualifications=[requirement], budget="100.00")
        qualifications.create(requester, ctx.engine, "coauthor qualified", "Passed round 1")
        _post(ctx)
    assert "study.toml" in str(caught.value) and "qualifications[0]" in str(caught.value)
    assert words in str(caught.value) and "Fix:" in str(caught.value)
    assert emulator.state.data["hit_types"] == {}


def test_hit_already_exists_without_the_hits_id_is_found_by_its_annotation(
    ctx, emulator, monkeypatch
):
    from study.mturk.client import MTurkError

    real = ctx.requester.call
    answers = iter(["lost", "already exists"])

    def call(name, **params):
        if name != "CreateHITWithHITType":
            return real(name, **params)
        answer = next(answers)
        if answer == "lost":  # MTurk created the HIT; the answer never arrived
            real(name, **params)
            raise MTurkError(name, "ConnectionError", "read timeout")
        # A repeated token answered in words that name no HIT id.
        raise MTurkError(
            name,
            "RequestError",
            "There is already a HIT which exists with the same Unique Request Token.",
            "AWS.MechanicalTurk.HitAlreadyExists",
        )

    monkeypatch.setattr(ctx.requester, "call", call)
    with pytest.raises(hits.HitError, match="Run the same post again"):
        _post(ctx, assignments=2)
    again = _post(ctx, assignments=2)
    (hit_id,) = emulator.state.data["hits"]
    assert again.resumed and again.hits[0]["hit_id"] == hit_id
    with reading(ctx.engine) as connection:
        slots = ledger.slots(connection, ctx.environment, hit_id)
    assert [s["status"] for s in slots] == ["intended", "intended"]  # still under the cap
