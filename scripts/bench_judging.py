"""Benchmark a judging round: the time to assign (build) and serve a round of --sentences
sentences (issue 27: 10,000, as Jakesch et al.'s 9,223).

It makes a throwaway study with --sentences sentences in finished sessions (10 per session),
then times, in this process on the study's SQLite database:

1. `study judging build`: splitting with pysbd, the balanced design (k passes) and storing;
2. serving: each judge enters /judge with an access code (a task is claimed), loads the task
   page, posts every rating in one request and submits, through the real Flask app (test
   client: the server's work without the network's) for --judges judges (default: every task);
3. the results: collecting every rating and Krippendorff's alpha with its bootstrap interval.

It prints wall seconds and per-request milliseconds. Usage:

    python scripts/bench_judging.py [--sentences 10000] [--k 3] [--items-per-task 10] [--judges N]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tomli_w  # noqa: E402

from study import config  # noqa: E402
from study import config_texts  # noqa: E402
from study.cli import write_study_files  # noqa: E402
from study.judging import results  # noqa: E402
from study.judging import settings as judging_settings  # noqa: E402
from study.judging.items import build  # noqa: E402
from study.server import create_app  # noqa: E402
from study.store import create_tables, make_engine, reading, writing  # noqa: E402
from study.store import sessions as session_store  # noqa: E402

WORDS = "the a wolf house river quiet lamp morning city argued slowly bright paper garden".split()
PER_SESSION = 10


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."


def make_study(folder: Path, sentences: int, k: int, per_task: int) -> config.Study:
    write_study_files(folder, replacements={config_texts.CONSENT_CONTACT_PLACEHOLDER: "Benchmark, nobody"})
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["judging"] = {"unit": "sentence", "k": k, "items_per_task": per_task}
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    study = config.load(folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    rng = random.Random(27)
    now = time.time()
    with writing(engine) as connection:
        for start in range(0, sentences, PER_SESSION):
            text = " ".join(sentence(rng) for _ in range(min(PER_SESSION, sentences - start)))
            made = session_store.create(connection, access_code=f"w{start}")
            session_store.update_session(connection, made["session_id"], stage="complete",
                                         condition=study.conditions[0].name, final_text=text,
                                         writing_started_at=now - 600, writing_finished_at=now)  # fmt: skip
    engine.dispose()
    return study


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--items-per-task", type=int, default=10)
    parser.add_argument("--judges", type=int, default=None, help="judges to serve (default: every task)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-judging-") as scratch:
        study = make_study(Path(scratch) / "study", args.sentences, args.k, args.items_per_task)
        settings = judging_settings.from_study(study)
        engine = make_engine(study.database_url)
        started = time.perf_counter()
        with writing(engine) as connection:
            built = build(connection, study, settings)
        assign = time.perf_counter() - started
        print(f"assign: {built.items} sentences from {built.sessions} sessions into {built.tasks} tasks "
              f"(k={args.k}, {args.items_per_task} per task) in {assign:.2f} s")  # fmt: skip

        client = create_app(study, suggestion_engine=object(), engine=engine).test_client()
        judges = min(args.judges or built.tasks, built.tasks)
        timings = {"enter": 0.0, "page": 0.0, "rate": 0.0, "submit": 0.0}
        rng = random.Random(1)
        started = time.perf_counter()
        for judge in range(judges):
            t = time.perf_counter()
            entered = client.get(f"/judge?access_code=judge{judge}")
            timings["enter"] += time.perf_counter() - t
            assert entered.status_code == 302, entered.get_data(as_text=True)[:300]
            t = time.perf_counter()
            page = client.get(entered.location).get_data(as_text=True)
            timings["page"] += time.perf_counter() - t
            task_id = entered.location.rsplit("/", 1)[-1]
            items = re.findall(r'data-item="([0-9a-f]+)"', page)
            t = time.perf_counter()
            answer = client.post(f"/api/judging/{task_id}/ratings",
                                 json={"ratings": [{"item": i, "score": rng.randint(1, 5)} for i in items]})  # fmt: skip
            timings["rate"] += time.perf_counter() - t
            assert answer.status_code == 200, answer.json
            t = time.perf_counter()
            assert client.post(f"/api/judging/{task_id}/ratings", json={"submit": True}).status_code == 200
            timings["submit"] += time.perf_counter() - t
        serve = time.perf_counter() - started
        print(f"serve: {judges} judges' tasks in {serve:.2f} s ({judges / serve:.1f} tasks/s); per request: "
              + ", ".join(f"{name} {1000 * seconds / judges:.1f} ms" for name, seconds in timings.items()))

        started = time.perf_counter()
        with reading(engine) as connection:
            found = results.collect(connection, study, settings)
        a = found.agreement
        print(f"results: {len(found.ratings)} ratings, alpha {a.alpha:.3f} [{a.low:.3f}, {a.high:.3f}] "
              f"in {time.perf_counter() - started:.2f} s")  # fmt: skip
        engine.dispose()


if __name__ == "__main__":
    main()
