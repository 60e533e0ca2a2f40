"""A paged list is read to its end by its `next` links, whatever page size the API gives: one
that caps a page below the 100 items the client asks for still has every item read (a `sync`
that stopped after the first short page would miss submissions)."""

from __future__ import annotations

import json

import pytest
from werkzeug.wrappers import Request, Response

from study.prolific.client import Client

from .local_api import serving

ITEMS = [{"id": f"sub-{number}"} for number in range(45)]
CAP = 20  # the API's largest page, below the client's PAGE_SIZE


@Request.application
def _capped_api(request):
    page = int(request.args.get("page", 1))
    size = min(int(request.args.get("page_size", 20)), CAP)
    results = ITEMS[(page - 1) * size : page * size]
    more = page * size < len(ITEMS)
    following = {"href": f"{request.base_url}?page={page + 1}&page_size={size}"} if more else None
    body = {"results": results, "_links": {"next": following}, "meta": {"count": len(ITEMS)}}
    return Response(json.dumps(body), content_type="application/json")


def test_every_item_is_read_when_the_api_gives_smaller_pages_than_asked():
    with serving(_capped_api) as url:
        read = [item["id"] for item in Client(url, "token").pages("submissions/")]
    assert read == [item["id"] for item in ITEMS]


@Request.application
def _offset_api(request):
    """A list paged by limit and offset, as Prolific pages a study's submissions (its own CLI
    asks `?limit=&offset=`): `page` means nothing to it, only the next link leads on."""
    limit = int(request.args.get("limit", CAP))
    offset = int(request.args.get("offset", 0))
    results = ITEMS[offset : offset + limit]
    more = offset + limit < len(ITEMS)
    following = {"href": f"{request.base_url}?limit={limit}&offset={offset + limit}"} if more else None
    body = {"results": results, "_links": {"next": following}, "meta": {"count": len(ITEMS)}}
    return Response(json.dumps(body), content_type="application/json")


def test_every_item_is_read_once_from_a_list_paged_by_limit_and_offset():
    from itertools import islice

    with serving(_offset_api) as url:
        read = [item["id"] for item in islice(Client(url, "token").pages("studies/s1/submissions/"), 200)]
    assert read == [item["id"] for item in ITEMS]


def test_a_next_link_to_another_host_is_not_followed_with_the_token():
    from itertools import islice

    from study.prolific.client import ProlificError

    @Request.application
    def elsewhere(request):
        body = {"results": ITEMS[:CAP], "_links": {"next": {"href": "https://attacker.example.org/api/v1/x/?page=2"}}}
        return Response(json.dumps(body), content_type="application/json")

    with serving(elsewhere) as url, pytest.raises(ProlificError, match="not Prolific's address") as raised:
        list(islice(Client(url, "secret-token").pages("studies/"), 200))
    assert "secret-token" not in str(raised.value)
