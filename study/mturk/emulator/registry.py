"""The emulator's operations by name, and the paging every List* operation shares."""

from __future__ import annotations

from typing import Callable

from study.mturk.emulator.state import ServiceError, State

Handler = Callable[[State, dict], dict]
OPERATIONS: dict[str, Handler] = {}
DEFAULT_PAGE_SIZE = 10


def operation(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        OPERATIONS[name] = handler
        return handler

    return register


def page(items: list, params: dict, key: str) -> dict:
    """One page of `items`; NextToken is an opaque cursor (here the offset, prefixed)."""
    start = 0
    token = params.get("NextToken")
    if token:
        if not token.startswith("p") or not token[1:].isdigit():
            raise ServiceError(f"The pagination token {token!r} is not valid.")
        start = int(token[1:])
    size = params.get("MaxResults") or DEFAULT_PAGE_SIZE
    chunk = items[start : start + size]
    result = {"NumResults": len(chunk), key: chunk}
    if start + size < len(items):
        result["NextToken"] = f"p{start + size}"
    return result


def processed(token: str) -> ServiceError:
    """What MTurk answers when a UniqueRequestToken is used again within 24 hours."""
    return ServiceError(f'The idempotency token "{token}" has already been processed.')
