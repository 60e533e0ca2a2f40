"""A judging round from posting to the joined ratings, against the local MTurk emulator driven
by real boto3: writers write through the real task server, `study judging build` splits their
texts into sentences, judges take judging HITs (/judge), one judge rates the gold items wrongly,
review pays every judge through the ledger, and the export joins each kept rating to its
session and arm."""

from __future__ import annotations

import csv
import json
import tomllib
from decimal import Decimal

import tomli_w
from click.testing import CliRunner

from study import config
from study.cli import main
from study.judging import results
from study.judging import settings as judging_settings
from study.judging.items import build
from study.mturk import judging as recruit
from study.mturk import ledger, posting
from study.mturk import review as writer_review
from study.store import reading, writing
from tests.judging.walk import judge_hit
from tests.mturk.walk import take_hit

STORIES = [
    "The lighthouse keeper counted ships every night. One evening a ship counted him back. He never lit the lamp again.",
    "Rain fell upward over the village of Morrow. The children collected it in inverted buckets.",
    "My grandmother kept a clock that ran backwards. It was always right about the past.",
]
GOLD = [
    {"text": "asdf asdf asdf qwer qwer", "score": 1},
    {"text": "zzz zzz zzz zzz zzz zzz zz", "score": 1},
]
WRITER_URL = "https://study.example.org/task"
JUDGE_URL = "https://study.example.org/judge"


def with_judging(folder, **values):
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["judging"] = values
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


def test_a_judging_round_from_posting_to_the_joined_ratings(study_folder, make_ctx, emulator, model_url, tmp_path):
    (study_folder / "gold.jsonl").write_text("\n".join(json.dumps(g) for g in GOLD) + "\n")
    with_judging(study_folder, unit="sentence", k=2, items_per_task=4, gold="gold.jsonl",
                 gold_per_task=1, gold_tolerance=1, gold_min_correct=1.0, min_chars=10,
                 reward="$0.80")  # fmt: skip
    ctx = make_ctx(budget="100.00")
    from study.server import create_app
    from tests.mturk.conftest import with_model

    task_client = create_app(with_model(ctx.study, model_url), engine=ctx.engine).test_client()
    writers = posting.post(ctx, hits=1, assignments=3, reward=Decimal("2.50"), task_url=WRITER_URL)
    writer_hit = writers.hits[0]["hit_id"]
    written = {}
    for number, story in enumerate(STORIES):
        taken = take_hit(emulator.url, task_client, writer_hit, f"WRITER{number}", written=story)
        written[taken.session_id] = story

    settings = judging_settings.from_study(ctx.study)
    with writing(ctx.engine) as connection:
        built = build(connection, ctx.study, settings)
    assert built.items == 7  # 3 + 2 + 2 sentences
    assert built.gold == 2 and built.tasks == 4  # 2 passes of 2 tasks (4 and 3 sentences)

    posted = recruit.post(ctx, settings, hits=1, assignments=4, reward=Decimal("0.80"), task_url=JUDGE_URL)
    judging_hit = posted.hits[0]["hit_id"]
    assert posted.hits[0]["HIT"]["Title"] == settings.title
    # The judging HIT's four rewards are reserved in the ledger beside the writers' three.
    with reading(ctx.engine) as connection:
        assert ledger.count(connection, ctx.environment, kind="reward") == 7

    def careful(text):
        return 1 if text in {g["text"] for g in GOLD} else 4

    def careless(text):
        return 5

    judged = [
        judge_hit(emulator.url, task_client, judging_hit, f"AJUDGE{n}", careless if n == 3 else careful)
        for n in range(4)
    ]
    # Judges are blind to the arm: no session id, condition or worker id on their page.
    for judge in judged:
        for session_id in written:
            assert session_id not in judge.page
        for condition in ctx.study.conditions:
            assert f">{condition.name}<" not in judge.page and f'"{condition.name}"' not in judge.page
        assert "WRITER" not in judge.page
    # Every sentence was shown to two different judges, and every judge saw a gold item.
    gold_texts = {g["text"] for g in GOLD}
    sentences = {text for judge in judged for text in judge.texts.values()} - gold_texts
    assert len(sentences) == 7
    assert all(sum(text in judge.texts.values() for judge in judged) == 2 for text in sentences)
    assert all(set(judge.texts.values()) & gold_texts for judge in judged)

    with reading(ctx.engine) as connection:
        found = results.collect(connection, ctx.study, settings)
    assert found.flagged == ["AJUDGE3"]
    # The careless judge's ratings are left out: only 4s remain.
    assert {r["score"] for r in found.kept} == {4}
    assert len(found.ratings) == 14 and len(found.kept) == 14 - (len(judged[3].texts) - 1)

    # Writers' review leaves the judges' assignments alone; judging review pays them all.
    from study.mturk import assignments

    synced = assignments.sync(ctx)
    assert all(not a.problems for a in synced.assignments)  # judges are not writers without sessions
    assert {p.worker_id for p in writer_review.proposals(ctx)} == {"WRITER0", "WRITER1", "WRITER2"}
    proposals = recruit.proposals(ctx, found)
    assert sorted(p.worker_id for p in proposals) == ["AJUDGE0", "AJUDGE1", "AJUDGE2", "AJUDGE3"]
    assert {p.decision for p in proposals} == {"approve"}
    outcomes = recruit.apply(ctx, proposals)
    assert set(outcomes.values()) == {"approved"}
    assert recruit.apply(ctx, proposals) == {p.assignment_id: "already approved" for p in proposals}
    with reading(ctx.engine) as connection:
        paid = [e for e in ledger.entries(connection, ctx.environment, kind="reward") if e["status"] == "confirmed"]
    assert len(paid) == 4 and all(Decimal(e["amount"]) == Decimal("0.80") for e in paid)
    # A bonus for a careful judge goes through the same ledger, once however often it is sent.
    from study.mturk import bonuses

    for _ in range(2):
        bonuses.pay(ctx, judged[0].assignment_id, Decimal("0.20"), "Careful ratings, thank you!")
    with reading(ctx.engine) as connection:
        (bonus,) = ledger.entries(connection, ctx.environment, kind="bonus")
    assert bonus["status"] == "confirmed" and bonus["worker_id"] == "AJUDGE0"

    # The export joins every rating to its session and arm.
    out = tmp_path / "export"
    result = CliRunner().invoke(main, ["judging", "export", str(ctx.study.directory), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader((out / "judging_ratings.csv").open()))
    conditions = {}
    with reading(ctx.engine) as connection:
        from study.store import sessions as session_store

        for session_id in written:
            conditions[session_id] = session_store.get(connection, session_id)["condition"]
    for row in rows:
        assert row["text"] in written[row["session_id"]]
        assert row["condition"] == conditions[row["session_id"]]
        assert row["paradigm"] == config.load(study_folder).condition(row["condition"]).paradigm
        assert not row["judge"].startswith("AJUDGE")  # numbered, no worker ids
    assert {row["kept"] for row in rows if row["judge_flagged"] == "true"} == {"false"}
    # `study export` writes the same ratings beside the sessions' logs.
    both = tmp_path / "both"
    exported = CliRunner().invoke(main, ["export", str(ctx.study.directory), "--out", str(both)])
    assert exported.exit_code == 0, exported.output
    assert (both / "metadata.csv").is_file()
    assert list(csv.DictReader((both / "judging_ratings.csv").open())) == rows
    sessions = list(csv.DictReader((out / "judging_sessions.csv").open()))
    assert {row["session_id"] for row in sessions} == set(written)
    assert {row["mean_score"] for row in sessions} == {"4.0000"}
