"""A code in a page's address (the access code of /task?access_code=, the session id of every
/s/<id>/ page, which is all it takes to act as that writer) must not leave through the Referer
header: every page a writer, judge or reviewer sees says `Referrer-Policy: no-referrer`, and
loads nothing from another origin (no CDN, no web font, no analytics), so that a browser
without the policy still has nowhere to send it."""

from __future__ import annotations

import re

from tests.server.flow import finish, start, to_writing

CODE = "referer-check-7"
# Where a participant page may point away from this server: the completion form posts to MTurk.
MTURK_FORM = re.compile(r'action="https://(www|workersandbox)\.mturk\.com/mturk/externalSubmit"')
ELSEWHERE = re.compile(r'(?:src|href|action|srcset)\s*=\s*["\']?\s*(?:[a-z][a-z0-9+.-]*:)?//', re.IGNORECASE)


def _pages(client) -> dict[str, object]:
    entered = client.get("/task", query_string={"access_code": CODE})
    session_id = entered.location.split("/")[2]
    pages = {"/task redirect": entered}
    for stage in ("consent", "instructions", "prompt"):
        pages[stage] = client.get(f"/s/{session_id}/{stage}")
        if stage == "prompt":
            to_writing(client, session_id)
    pages["writing"] = client.get(f"/s/{session_id}/writing")
    finish(client, session_id)
    pages["complete"] = client.get(f"/s/{session_id}/complete")
    pages["judge entry"] = client.get("/judge", query_string={"access_code": CODE})
    pages["reviewers' login"] = client.get("/review/login", query_string={"next": "/review/"})
    pages["mistyped link"] = client.get(f"/s/{session_id}/nowhere")
    return pages


def test_every_page_with_a_code_in_its_address_sends_no_referrer(client):
    pages = _pages(client)
    assert {name: page.headers.get("Referrer-Policy") for name, page in pages.items()} == {
        name: "no-referrer" for name in pages
    }


def test_no_page_loads_or_links_anything_from_another_origin(client):
    for name, page in _pages(client).items():
        html = MTURK_FORM.sub("", page.get_data(as_text=True))
        assert not ELSEWHERE.findall(html), f"{name} points to another origin: {ELSEWHERE.findall(html)}"
