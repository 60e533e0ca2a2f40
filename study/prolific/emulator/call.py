"""One API call as the operations see it: the JSON body, the query string and where the
emulator is served (for the `_links` of paginated lists)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from study.prolific.emulator.errors import ApiError, invalid


@dataclass
class Call:
    body: dict = field(default_factory=dict)
    query: dict = field(default_factory=dict)
    url: str = ""  # the request's URL without its query string

    def integer(self, name: str, default: int) -> int:
        raw = self.query.get(name)
        if raw in (None, ""):
            return default
        try:
            value = int(raw)
        except ValueError:
            raise invalid(name, "A valid integer is required.") from None
        if value < 1:
            raise invalid(name, "Ensure this value is greater than or equal to 1.")
        return value


def paginate(call: Call, items: list, default_size: int = 20) -> dict:
    """Prolific's list answer: `results`, `_links` (self, next, previous, last: `href` is a full
    URL or null) and `meta.count`, paged with `page` and `page_size` (docs: default 20), or with
    `limit` and `offset` as Prolific's own CLI asks for a study's submissions."""
    if "limit" in call.query or "offset" in call.query:
        return _by_offset(call, items, default_size)
    size = call.integer("page_size", default_size)
    page = call.integer("page", 1)
    last = max((len(items) + size - 1) // size, 1)
    if page > last:
        raise ApiError(404, "Invalid page.")
    start = (page - 1) * size

    def link(number: int | None) -> dict:
        if number is None:
            return {"href": None, "title": None}
        query = {k: v for k, v in call.query.items() if k not in ("page", "page_size")}
        query.update(page=number, page_size=size)
        return {"href": f"{call.url}?{urlencode(query)}", "title": str(number)}

    return {
        "results": items[start:start + size],
        "_links": {
            "self": link(page),
            "next": link(page + 1 if page < last else None),
            "previous": link(page - 1 if page > 1 else None),
            "last": link(last),
        },
        "meta": {"count": len(items)},
    }


def _by_offset(call: Call, items: list, default_size: int) -> dict:
    limit = call.integer("limit", default_size)
    raw = call.query.get("offset") or "0"
    if not raw.isdigit():
        raise invalid("offset", "A valid integer is required.")
    offset = int(raw)

    def link(start: int | None) -> dict:
        if start is None:
            return {"href": None, "title": None}
        query = {k: v for k, v in call.query.items() if k not in ("limit", "offset")}
        query.update(limit=limit, offset=start)
        return {"href": f"{call.url}?{urlencode(query)}", "title": str(start // limit + 1)}

    last = max(len(items) - 1, 0) // limit * limit
    return {
        "results": items[offset:offset + limit],
        "_links": {
            "self": link(offset),
            "next": link(offset + limit if offset + limit < len(items) else None),
            "previous": link(max(offset - limit, 0) if offset > 0 else None),
            "last": link(last),
        },
        "meta": {"count": len(items)},
    }
