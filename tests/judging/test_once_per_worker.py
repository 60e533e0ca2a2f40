"""A judging round in a study with [mturk] once_per_worker, through the commands a researcher
types and the emulator: writers stay out of judging (they would rate their own study's texts), a
judge takes several judging tasks (a judge usually rates several), and a judge cannot then write
in the study (they have read its prompts and other writers' texts)."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
from click.testing import CliRunner

from study import config
from study.cli import main
from study.mturk import client
from study.server import create_app
from study.store import make_engine
from tests.judging.finished import set_section
from tests.judging.walk import judge_hit
from tests.mturk.walk import accept, take_hit

TASK_URL = "https://study.example.org/task"


def run(*args):
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_judges_take_several_tasks_and_neither_writers_judge_nor_judges_write(finished_study, emulator):
    folder = finished_study
    set_section(folder, "mturk", {"budget": "50.00", "task_url": TASK_URL, "once_per_worker": True})
    set_section(folder, "judging", {"unit": "document", "k": 2, "items_per_task": 1, "reward": "$0.60"})
    where = ("--endpoint-url", emulator.url)
    study = config.load(folder)
    server = create_app(study, suggestion_engine=object(), engine=make_engine(study.database_url)).test_client()
    run("mturk", "post", str(folder), "--assignments", "2", "--task-url", TASK_URL, *where)
    mturk = client.connect(live=False, endpoint_url=emulator.url)
    (writers_hit,) = [h["HITId"] for h in mturk.call("ListHITs")["HITs"]]
    take_hit(emulator.url, server, writers_hit, "A1WRITER", ai_requests=0)
    run("judging", "build", str(folder))
    run("judging", "post", str(folder), "--hits", "2", "--assignments", "2", *where)
    first, second = [h["HITId"] for h in mturk.call("ListHITs")["HITs"] if h["HITId"] != writers_hit]
    judge_hit(emulator.url, server, first, "A1JUDGE", lambda text: 4)

    synced = run("mturk", "sync", str(folder), *where)

    assert "Exclusion qualification granted to 1 workers." in synced  # the writer, not the judge
    # The writer cannot take a judging HIT.
    for hit in (first, second):
        refused = httpx.post(f"{emulator.url}/_emulator/accept", data={"HITId": hit, "WorkerId": "A1WRITER"})
        assert refused.status_code == 409 and "DoesNotExist" in refused.json()["error"]
    # The judge takes a second judging task, on another HIT, and rates texts they have not rated.
    again = judge_hit(emulator.url, server, second, "A1JUDGE", lambda text: 3)
    assert again.texts
    # The judge cannot write: the task server refuses them, as it refuses a writer's second HIT.
    url = urlsplit(accept(emulator.url, writers_hit, "A1JUDGE")["TaskURL"])
    entered = server.get(f"{url.path}?{url.query}")
    assert entered.status_code == 403
    assert "rated texts" in entered.get_data(as_text=True)
    assert "return this HIT" in entered.get_data(as_text=True)
    # Their judging assignments still never earn them the exclusion qualification.
    assert "Exclusion qualification granted" not in run("mturk", "sync", str(folder), *where)
