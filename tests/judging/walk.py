"""A judge taking a judging HIT: accept on the emulator, open the /judge URL MTurk hands out on
the real task server (Flask test client), rate every text as the page's script does, submit,
and post the completion form to the emulator's /mturk/externalSubmit as a browser would."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from urllib.parse import urlsplit

import httpx

from tests.mturk.walk import accept, completion_form


@dataclass
class Judged:
    task_id: str
    assignment_id: str
    texts: dict[str, str]  # item id -> the text the judge was shown
    page: str


def items_on(page: str) -> dict[str, str]:
    found = re.findall(
        r'data-item="([0-9a-f]+)".*?<blockquote class="judging-text">(.*?)</blockquote>', page, re.S
    )
    return {item: unescape(text) for item, text in found}


def judge_hit(emulator_url: str, task_client, hit_id: str, worker_id: str, score_of) -> Judged:
    """`score_of(text)`: the score this judge gives a text."""
    accepted = accept(emulator_url, hit_id, worker_id)
    url = urlsplit(accepted["TaskURL"])
    assert url.path == "/judge"
    entered = task_client.get(f"{url.path}?{url.query}")
    assert entered.status_code == 302, entered.get_data(as_text=True)
    task_path = entered.location
    task_id = task_path.rstrip("/").split("/")[-1]
    page = task_client.get(task_path).get_data(as_text=True)
    texts = items_on(page)
    assert texts, page
    ratings = [{"item": item, "score": score_of(text)} for item, text in texts.items()]
    stored = task_client.post(f"/api/judging/{task_id}/ratings", json={"ratings": ratings})
    assert stored.status_code == 200, stored.json
    done = task_client.post(f"/api/judging/{task_id}/ratings", json={"submit": True})
    assert done.status_code == 200, done.json
    complete = task_client.get(done.json["next"]).get_data(as_text=True)
    action, fields = completion_form(complete)
    assert httpx.post(action, data=fields).status_code in (200, 302)
    return Judged(task_id, accepted["AssignmentId"], texts, page)
