"""`study judging post` and `review` as a researcher types them, against the emulator."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main
from study.mturk import client
from study.store import make_engine
from tests.judging.finished import set_section


def test_post_reaches_one_judge_per_task_and_review_waits_for_submissions(finished_study, emulator):
    study_folder = finished_study
    runner = CliRunner()

    before = runner.invoke(main, ["judging", "post", str(study_folder), "--endpoint-url", emulator.url])
    assert before.exit_code != 0 and f"Fix: study judging build {study_folder}" in before.output
    assert runner.invoke(main, ["judging", "build", str(study_folder)]).exit_code == 0
    posted = runner.invoke(main, ["judging", "post", str(study_folder), "--endpoint-url", emulator.url])
    assert posted.exit_code == 0, posted.output
    # 3 texts, 2 per task, k = 2: 4 tasks, so one HIT of 4 assignments at the [judging] reward;
    # the URL is /judge beside [mturk] task_url.
    assert "  4 x $0.60" in posted.output and "Posted 1 judging HITs" in posted.output
    hits = client.connect(live=False, endpoint_url=emulator.url).call("ListHITs")["HITs"]
    assert len(hits) == 1 and "https://study.example.org/judge" in hits[0]["Question"]
    waiting = runner.invoke(main, ["judging", "review", str(study_folder), "--yes", "--endpoint-url", emulator.url])
    assert waiting.exit_code == 0 and "Nothing to review" in waiting.output


def test_posting_again_does_not_double_the_judges_the_open_tasks_need(finished_study, emulator):
    study_folder = finished_study
    runner = CliRunner()
    assert runner.invoke(main, ["judging", "build", str(study_folder)]).exit_code == 0
    post = ["judging", "post", str(study_folder), "--endpoint-url", emulator.url]
    assert "  4 x $0.60" in runner.invoke(main, post).output  # 4 tasks, 4 judges
    again = runner.invoke(main, post)  # e.g. unsure the first went through
    assert again.exit_code != 0 and "--assignments" in again.output
    hits = client.connect(live=False, endpoint_url=emulator.url).call("ListHITs")["HITs"]
    assert [h["MaxAssignments"] for h in hits] == [4]  # nobody asked to rate what is covered


def test_a_post_run_again_after_a_crash_says_it_finished_the_interrupted_one(finished_study, emulator, monkeypatch):
    study_folder = finished_study
    from study.mturk import posting

    runner = CliRunner()
    assert runner.invoke(main, ["judging", "build", str(study_folder)]).exit_code == 0
    real_record = posting._record
    monkeypatch.setattr(posting, "_record", lambda *a, **k: (_ for _ in ()).throw(SystemExit(1)))
    post = ["judging", "post", str(study_folder), "--endpoint-url", emulator.url]
    assert runner.invoke(main, post).exit_code != 0  # crashed after MTurk made the HIT
    monkeypatch.setattr(posting, "_record", real_record)
    again = runner.invoke(main, [*post, "--hits", "2", "--assignments", "1"])
    assert again.exit_code == 0, again.output
    assert "interrupted post" in again.output and "nothing new was posted" in again.output


def test_judging_hits_do_not_require_the_qualification_writers_needed(finished_study, emulator, requester):
    # A two-round study's main round requires "passed the qualification round" ([[mturk.qualifications]],
    # as study init's study.toml shows): on a judging HIT it would let only the study's own
    # writers judge, rating their peers' texts and their own.
    from study.mturk import qualifications
    from study.review import settings as review_settings

    study_folder = finished_study
    set_section(study_folder, "mturk", {
        "budget": "50.00", "task_url": "https://study.example.org/task",
        "qualifications": [{"name": "coauthor qualified", "comparator": "GreaterThanOrEqualTo", "values": [4]},
                           {"name": "fluent in English"}],
    })  # fmt: skip
    study = config.load(study_folder)
    assert review_settings.from_study(study).qualification == "coauthor qualified"  # what `study qualify` grants
    engine = make_engine(study.database_url)
    writers_qualification = qualifications.create(requester, engine, "coauthor qualified", "Passed")
    # A requirement of the researcher's own, not the review's, is one judges must meet too.
    language = qualifications.create(requester, engine, "fluent in English", "Speaks English fluently")
    engine.dispose()
    runner = CliRunner()
    assert runner.invoke(main, ["judging", "build", str(study_folder)]).exit_code == 0

    posted = runner.invoke(main, ["judging", "post", str(study_folder), "--endpoint-url", emulator.url])

    assert posted.exit_code == 0, posted.output
    (hit,) = client.connect(live=False, endpoint_url=emulator.url).call("ListHITs")["HITs"]
    required = {r["QualificationTypeId"] for r in hit["QualificationRequirements"]}
    assert writers_qualification not in required
    assert language in required
    assert "000000000000000000L0" in required  # the paper's approval rate > 97% still applies


def test_a_round_of_ten_or_more_tasks_is_posted_in_hits_mturk_charges_20_percent_on(finished_study, emulator):
    # MTurk charges 40% on a HIT of 10 or more assignments; one HIT per round would double the
    # fees of every round past nine tasks, and a round's judges need not share a HIT.
    study_folder = finished_study
    set_section(study_folder, "judging", {"unit": "document", "k": 4, "items_per_task": 1, "reward": "$0.60"})
    runner = CliRunner()
    assert runner.invoke(main, ["judging", "build", str(study_folder)]).exit_code == 0  # 3 texts x 4: 12 tasks

    posted = runner.invoke(main, ["judging", "post", str(study_folder), "--endpoint-url", emulator.url])

    assert posted.exit_code == 0, posted.output
    hits = client.connect(live=False, endpoint_url=emulator.url).call("ListHITs")["HITs"]
    assert sorted(h["MaxAssignments"] for h in hits) == [6, 6]  # every task reached, each HIT under 10
    assert "at most $8.64 ($7.20 to workers + $1.44 MTurk fees)" in posted.output


def test_posting_without_a_task_url_names_the_judging_page_in_its_fix(finished_study, emulator):
    # Following a fix that names /task for a judging HIT would only meet a second error asking
    # for /judge.
    study_folder = finished_study
    set_section(study_folder, "mturk", {"budget": "50.00", "task_url": ""})
    runner = CliRunner()
    assert runner.invoke(main, ["judging", "build", str(study_folder)]).exit_code == 0

    posted = runner.invoke(main, ["judging", "post", str(study_folder), "--endpoint-url", emulator.url])

    assert posted.exit_code == 1
    assert "the /judge page beside it is used" in posted.output
    assert "--task-url https://study.example.org/judge" in posted.output
