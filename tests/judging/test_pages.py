"""The judges' pages and API case by case: preview, entry, a reload, another worker's
assignment, the access-code list, bad ratings, submitting too early or twice, a task left
unfinished past the assignment time, and a round with nothing left."""

from __future__ import annotations

import re
import time

import pytest
from click.testing import CliRunner
from sqlalchemy import update

from study import config
from study.cli import main, write_study_files
from study.server import create_app
from study.store import create_tables, make_engine, writing
from study.store.judging import judging_tasks
from tests.conftest import CONTACT
from tests.judging.finished import finish_sessions, set_section

TEXTS = ["The river forgot its name one spring.", "Cities should plant more trees on every street."]


def _judged(folder, texts: list[str], **finished) -> str:
    """A study of `texts` as finished sessions, with its judging round built; the build's output."""
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    set_section(folder, "judging", {"unit": "document", "k": 1, "items_per_task": 2})
    study = config.load(folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, texts, **finished)
    engine.dispose()
    built = CliRunner().invoke(main, ["judging", "build", str(folder)])
    assert built.exit_code == 0, built.output
    return built.output


@pytest.fixture
def judged_study(tmp_path):
    folder = tmp_path / "study"
    built = _judged(folder, TEXTS)
    assert "Built a judging round of 2 document item(s) from 2 session(s), 0 gold item(s): 1 task(s)" in built
    return folder


@pytest.fixture
def client(judged_study):
    app = create_app(config.load(judged_study), suggestion_engine=object())
    yield app.test_client()
    app.extensions["study.engine"].dispose()


MTURK = {"assignmentId": "3JA1", "workerId": "A1JUDGE", "hitId": "3JH1"}


def enter(client, **query):
    return client.get("/judge", query_string=query)


def items(client, location):
    return re.findall(r'data-item="([0-9a-f]+)"', client.get(location).get_data(as_text=True))


def test_a_preview_shows_the_rubric_and_no_text(client):
    page = enter(client, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE").get_data(as_text=True)
    assert "Accept the HIT to begin" in page and "Spam" in page
    assert not any(text in page for text in TEXTS)


def test_a_reload_finds_the_same_task_and_another_worker_is_refused(client):
    first = enter(client, **MTURK)
    assert first.status_code == 302
    assert enter(client, **MTURK).location == first.location
    other = enter(client, **{**MTURK, "workerId": "A2OTHER"})
    assert other.status_code == 409 and "belongs to another worker" in other.get_data(as_text=True)
    missing = enter(client, assignmentId="3JA9")
    assert missing.status_code == 400 and "missing workerId or hitId" in missing.get_data(as_text=True)


def test_bad_ratings_are_refused_naming_the_field_and_nothing_is_stored(client):
    location = enter(client, access_code="lab-1").location
    task_id = location.rsplit("/", 1)[-1]
    shown = items(client, location)
    url = f"/api/judging/{task_id}/ratings"
    wrong = client.post(url, json={"ratings": [{"item": shown[0], "score": 4}, {"item": "0123456789ab", "score": 4}]})
    assert wrong.status_code == 400 and "ratings[1].item" in wrong.json["error"]
    off_scale = client.post(url, json={"ratings": [{"item": shown[0], "score": 7}]})
    assert off_scale.status_code == 400 and "ratings[0].score: must be one of [1, 2, 3, 4, 5]" in off_scale.json["error"]
    early = client.post(url, json={"submit": True})
    assert early.status_code == 409 and "2 of 2 texts are not rated yet" in early.json["error"]
    assert client.post(url, json={"ratings": [{"item": i, "score": 3} for i in shown]}).json["rated"] == 2
    assert client.post(url, json={"submit": True}).status_code == 200
    late = client.post(url, json={"ratings": [{"item": shown[0], "score": 5}]})
    assert late.status_code == 409 and "already submitted" in late.json["error"]
    # Only one task (k = 1): nothing is left for the next judge.
    assert "nothing left to rate" in enter(client, access_code="lab-2").get_data(as_text=True)


def test_a_task_left_unfinished_past_the_assignment_time_goes_to_the_next_judge(client, judged_study):
    walked_away = enter(client, access_code="lab-1").location
    shown = items(client, walked_away)
    # Held by the first judge: the next is not told the texts have all their ratings, nor, with
    # an access code, to return a HIT they never took; the researcher sees the task held.
    waiting = enter(client, access_code="lab-2").get_data(as_text=True)
    assert "No text is left for you to rate right now: the texts still waiting are being rated by other judges" in waiting
    assert "all the ratings it needs" not in waiting and "return this HIT" not in waiting
    status = CliRunner().invoke(main, ["judging", "status", str(judged_study)]).output
    assert "1 task(s), 0 submitted\nBeing rated: 1 task(s) taken and not submitted; one not submitted within [mturk] assignment_minutes" in status
    engine = make_engine(config.load(judged_study).database_url)
    with writing(engine) as connection:  # the assignment time (60 minutes) has passed
        connection.execute(update(judging_tasks).values(claimed_at=time.time() - 61 * 60))
    engine.dispose()
    # The same task, under a new address (the old one is the walked-away judge's).
    assert items(client, enter(client, access_code="lab-2").location) == shown


def test_the_access_code_list_applies_to_judges(judged_study):
    (judged_study / "codes.txt").write_text("judge-ok\n")
    text = (judged_study / "study.toml").read_text()
    (judged_study / "study.toml").write_text(text.replace("[session]\n", '[session]\naccess_codes_file = "codes.txt"\n', 1))
    app = create_app(config.load(judged_study), suggestion_engine=object())
    client = app.test_client()
    refused = enter(client, access_code="guess")
    assert refused.status_code == 400 and "not one of this study&#39;s" in refused.get_data(as_text=True)
    assert enter(client, access_code="judge-ok").status_code == 302
    app.extensions["study.engine"].dispose()


def test_building_again_is_refused_once_a_judge_has_a_task(client, judged_study):
    enter(client, access_code="lab-1")
    again = CliRunner().invoke(main, ["judging", "build", str(judged_study)])
    assert again.exit_code != 0 and "1 judging task(s) are already taken" in again.output


def test_a_missing_gold_file_is_named_with_the_fix(judged_study):
    set_section(judged_study, "judging", {"gold": "gold.jsonl"})
    result = CliRunner().invoke(main, ["judging", "build", str(judged_study)])
    assert result.exit_code != 0
    assert "judging.gold: cannot read" in result.output and "Fix: create that file" in result.output


def test_status_counts_tasks_ratings_and_agreement(client, judged_study):
    location = enter(client, access_code="lab-1").location
    task_id = location.rsplit("/", 1)[-1]
    shown = items(client, location)
    client.post(f"/api/judging/{task_id}/ratings",
                json={"ratings": [{"item": i, "score": 2} for i in shown], "submit": True})  # fmt: skip
    result = CliRunner().invoke(main, ["judging", "status", str(judged_study)])
    assert result.exit_code == 0, result.output
    assert "Judging round: 2 document item(s), 1 task(s), 1 submitted" in result.output
    assert "Ratings kept: 2 of 2; judges 1, flagged by gold 0" in result.output
    # One judge per item (k = 1): no item is rated twice, so there is no alpha to give.
    assert "Krippendorff's alpha: not yet computable" in result.output


def test_status_before_any_round_says_so_with_the_fix_and_makes_no_database(tmp_path):
    folder = tmp_path / "study"
    write_study_files(folder, replacements=CONTACT)
    unserved = CliRunner().invoke(main, ["judging", "status", str(folder)])
    assert unserved.exit_code == 0 and "has not been served yet" in unserved.output
    assert f"Fix: study judging build {folder}" in unserved.output and not (folder / "study.db").exists()
    finish_sessions_of(folder)
    unbuilt = CliRunner().invoke(main, ["judging", "status", str(folder)])
    assert unbuilt.output.startswith(f"No judging round built yet. Fix: study judging build {folder}")
    assert "Judging round: 0" not in unbuilt.output


def finish_sessions_of(folder) -> None:
    study = config.load(folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, TEXTS)
    engine.dispose()


def test_a_judge_takes_a_second_task_though_it_repeats_a_gold_item(tmp_path):
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    (folder / "gold.jsonl").write_text('{"text": "spam spam spam spam", "score": 1}\n')
    set_section(folder, "judging", {"unit": "document", "k": 1, "items_per_task": 1, "gold": "gold.jsonl",
                                    "gold_per_task": 1})  # fmt: skip
    study = config.load(folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, TEXTS)
    engine.dispose()
    assert CliRunner().invoke(main, ["judging", "build", str(folder)]).exit_code == 0
    app = create_app(config.load(folder), suggestion_engine=object())
    client = app.test_client()
    seen = []
    for _ in range(2):
        location = enter(client, access_code="lab-1").location
        task_id = location.rsplit("/", 1)[-1]
        shown = items(client, location)
        assert len(shown) == 2  # one text and the gold item
        seen.append(set(shown))
        client.post(f"/api/judging/{task_id}/ratings",
                    json={"ratings": [{"item": i, "score": 1} for i in shown], "submit": True})  # fmt: skip
    assert len(seen[0] & seen[1]) == 1  # the gold item, and two different texts
    app.extensions["study.engine"].dispose()


@pytest.mark.parametrize("exclude", [True, False])
def test_a_judge_failing_gold_is_flagged_and_left_out_unless_configured(tmp_path, exclude):
    from study.judging import results
    from study.judging import settings as judging_settings
    from study.store import reading

    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    (folder / "gold.jsonl").write_text('{"text": "spam spam spam spam", "score": 1}\n')
    set_section(folder, "judging", {"unit": "document", "k": 1, "items_per_task": 2, "gold": "gold.jsonl",
                                    "gold_per_task": 1, "exclude_failed_gold": exclude})  # fmt: skip
    study = config.load(folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, TEXTS)
    assert CliRunner().invoke(main, ["judging", "build", str(folder)]).exit_code == 0
    app = create_app(study, suggestion_engine=object())
    client = app.test_client()
    location = enter(client, access_code="careless").location
    shown = items(client, location)
    client.post(f"/api/judging/{location.rsplit('/', 1)[-1]}/ratings",
                json={"ratings": [{"item": i, "score": 5} for i in shown], "submit": True})  # fmt: skip
    with reading(engine) as connection:
        found = results.collect(connection, study, judging_settings.from_study(study))
    assert found.flagged == ["careless"] and len(found.ratings) == 2
    assert len(found.kept) == (0 if exclude else 2)
    app.extensions["study.engine"].dispose()
    engine.dispose()


def test_a_worker_id_typed_into_the_text_never_reaches_the_judge(tmp_path):
    """Blind (README, Judging round): the judge's page shows the texts but never a worker id,
    even one the writer typed into their story, as the reviewers' workspace masks it."""
    folder = tmp_path / "study"
    _judged(folder, ["My worker id is A3WRITERX0, the river forgot its name.",
                     "Cities should plant trees (a3writerx1 here)."], worker_prefix="A3WRITERX")  # fmt: skip
    app = create_app(config.load(folder), suggestion_engine=object())
    client = app.test_client()
    page = client.get(enter(client, access_code="lab-1").location).get_data(as_text=True)
    app.extensions["study.engine"].dispose()
    assert "the river forgot its name" in page
    assert "a3writerx0" not in page.lower() and "a3writerx1" not in page.lower()


def test_a_judge_whose_task_was_handed_on_cannot_rate_or_submit_it_for_the_next_judge(client, judged_study):
    walked_away = enter(client, access_code="lab-1").location
    shown = items(client, walked_away)
    engine = make_engine(config.load(judged_study).database_url)
    with writing(engine) as connection:  # the assignment time (60 minutes) has passed
        connection.execute(update(judging_tasks).values(claimed_at=time.time() - 61 * 60))
    engine.dispose()
    taken_over = enter(client, access_code="lab-2").location
    # lab-1's page is still open: its script keeps posting to the address it was given.
    old_url = f"/api/judging/{walked_away.rsplit('/', 1)[-1]}/ratings"
    late = client.post(old_url, json={"ratings": [{"item": i, "score": 1} for i in shown]})
    assert late.status_code in (404, 409)
    assert client.post(old_url, json={"submit": True}).status_code in (404, 409)
    # lab-2 rates their task from scratch and submits it as their own.
    new_url = f"/api/judging/{taken_over.rsplit('/', 1)[-1]}/ratings"
    answer = client.post(new_url, json={"ratings": [{"item": shown[0], "score": 5}]})
    assert answer.status_code == 200 and answer.json["rated"] == 1


def test_an_access_code_that_is_a_workers_id_does_not_open_that_workers_task(client):
    """Lab judges and MTurk judges share the `judge` column: a lab judge typing an MTurk
    worker's id as their access code must not be handed that worker's task (its texts, its
    ratings, its submission and verification code)."""
    worker = enter(client, **MTURK).location
    task_id = worker.rsplit("/", 1)[-1]
    # Another person who knows the worker id (it is no secret) enters as a lab judge with it.
    lab = enter(client, access_code=MTURK["workerId"])
    assert lab.location != worker
    assert task_id not in (lab.location or "") and task_id not in lab.get_data(as_text=True)


def test_a_judge_who_comes_before_the_round_is_built_is_told_it_has_not_begun(tmp_path):
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    set_section(folder, "judging", {"unit": "document", "k": 1, "items_per_task": 2})
    app = create_app(config.load(folder), suggestion_engine=object())
    page = app.test_client().get("/judge", query_string={"access_code": "early-judge"}).get_data(as_text=True)
    app.extensions["study.engine"].dispose()
    assert "The judging round has not begun yet" in page
    assert "all the ratings it needs" not in page


def test_a_writer_who_judges_is_never_given_their_own_text(client):
    # A lab study's writers may judge too (finish_sessions' writers are W0 and W1): the round's
    # one task holds both texts, so W0 gets none, and is told so; a judge who wrote nothing gets it.
    writer = enter(client, access_code="W0")
    assert writer.status_code == 200
    page = writer.get_data(as_text=True)
    assert "No text is left for you to rate right now" in page and "wrote yourself" in page
    assert not any(text in page for text in TEXTS)
    other = enter(client, access_code="lab-judge-7")
    assert other.status_code == 302 and len(items(client, other.location)) == 2


def test_a_judges_pages_are_never_kept_in_the_browsers_cache(client):
    """The task page holds writers' texts, and after submitting, the back button would show it
    from the cache as if it could still be rated (every choice then fails as already
    submitted); like the writers' pages, a judge's pages are asked for again."""
    location = enter(client, access_code="lab-1").location
    task_id = location.rsplit("/", 1)[-1]
    page = client.get(location)
    assert page.headers.get("Cache-Control") == "no-store"
    shown = items(client, location)
    client.post(f"/api/judging/{task_id}/ratings",
                json={"ratings": [{"item": i, "score": 3} for i in shown], "submit": True})  # fmt: skip
    assert client.get(f"/judge/{task_id}/complete").headers.get("Cache-Control") == "no-store"
    # Asked again, the task page sends the judge to the completion page.
    assert client.get(location).location.endswith(f"/judge/{task_id}/complete")


@pytest.mark.parametrize("counted_in", ["the study database", "Redis"])
def test_one_address_may_claim_only_so_many_tasks_an_hour_and_others_still_get_theirs(
    tmp_path, request, monkeypatch, counted_in
):
    # A stranger with the round's address, making up a judge per request, would otherwise hold
    # every task for the assignment time while real judges read that nothing is left to rate.
    if counted_in == "Redis":
        monkeypatch.setenv("STUDY_REDIS_URL", request.getfixturevalue("redis_url"))
    folder = tmp_path / "study"
    _judged(folder, [f"Text number {n} for the judges to rate." for n in range(6)])
    toml = folder / "study.toml"
    toml.write_text(toml.read_text().replace("[session]\n", "[session]\nnew_sessions_per_ip_per_hour = 2\n"))
    app = create_app(config.load(folder), suggestion_engine=object())
    client = app.test_client()
    stranger = {"REMOTE_ADDR": "203.0.113.7"}
    statuses = [client.get("/judge", query_string={"access_code": f"bot-{n}"}, environ_base=stranger).status_code
                for n in range(3)]  # fmt: skip
    assert statuses == [302, 302, 429]
    # A judge reloading their task uses up nothing, and another address still gets a task.
    assert client.get("/judge", query_string={"access_code": "bot-0"}, environ_base=stranger).status_code == 302
    judge = client.get("/judge", query_string=MTURK, environ_base={"REMOTE_ADDR": "198.51.100.2"})
    assert judge.status_code == 302 and judge.location.startswith("/judge/")
    app.extensions["study.engine"].dispose()


def test_the_ratings_of_a_withdrawn_writers_text_leave_the_round_s_results(client, judged_study):
    location = enter(client, access_code="lab-1").location
    task_id = location.rsplit("/", 1)[-1]
    client.post(f"/api/judging/{task_id}/ratings",
                json={"ratings": [{"item": i, "score": 2} for i in items(client, location)], "submit": True})  # fmt: skip
    withdrawn = CliRunner().invoke(main, ["withdraw", "W1", "--study", str(judged_study)])
    assert withdrawn.exit_code == 0, withdrawn.output

    result = CliRunner().invoke(main, ["judging", "status", str(judged_study)])

    assert result.exit_code == 0, result.output
    assert "Ratings kept: 1 of 1; judges 1, flagged by gold 0" in result.output
