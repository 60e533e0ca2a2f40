"""A paged list is read to its end by its `next` links, whatever page size the API gives: one
that caps a page below the 100 items the client asks for still has every item read (a `sync`
that stopped after the first short page would miss submissions)."""

from __future__ import annotations

import json
import threading

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from study.prolific.client import Client

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
    server = make_server("127.0.0.1", 0, _capped_api, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = Client(f"http://127.0.0.1:{server.port}/api/v1/", "token")
        assert [item["id"] for item in client.pages("submissions/")] == [item["id"] for item in ITEMS]
    finally:
        server.shutdown()
