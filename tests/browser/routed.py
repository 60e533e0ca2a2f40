"""A page's requests to one URL, routed from before the page opens, for a test to hold or answer.

Why not `page.route` at the moment a test needs it: Chromium starts intercepting a running
page's requests a moment after `page.route` returns, and a request the page sends in between
goes to the server unseen. On a loaded machine (a full suite, two workers on two cores) a Tab
pressed right after `page.route("**/suggestions", ...)` reached the model and opened its list
while the test waited for ever for the request it meant to hold. Routed from before the page
loads, interception is on from its first request, and the test only changes what the next
requests get.
"""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, Request, Route


class Routed:
    """Requests of `page` to `pattern`: they go on to the server until the test says otherwise
    (`hold`, or `answer` with its own handler). Make it before the page opens its first page
    (before `start_writing`, before `goto`). `status` is the test id of the element a failed
    wait quotes: the writing page's status line unless the page has its own (a chat study's
    "chat-error", a judging task's "judging-status")."""

    def __init__(self, page: Page, pattern: str, status: str = "status") -> None:
        self.page = page
        self.pattern = pattern
        self.status = status
        self.held: list[Route] = []
        self.answer: Callable[[Route], None] | None = None  # None: on to the server
        page.route(pattern, self._arrived)

    def _arrived(self, route: Route) -> None:
        if self.answer is None:
            route.continue_()
        else:
            self.answer(route)

    def hold(self, count: int | None = None, which: Callable[[Request], bool] | None = None) -> None:
        """Keep the next requests (the next `count`; the ones after go on) until let go; with
        `which`, only the requests it says yes to (the others go on)."""

        def keep(route: Route) -> None:
            if which is not None and not which(route.request):
                route.continue_()
            elif count is None or len(self.held) < count:
                self.held.append(route)
            else:
                route.continue_()

        self.answer = keep

    def first_held(self, doing: str, seconds: float = 30) -> Route:
        """The first request held, once the page has sent it; fails naming the page's status line
        when `doing` (what the test did, e.g. "Tab") sent none within `seconds`."""
        for _ in range(int(seconds * 20)):
            if self.held:
                return self.held[0]
            self.page.wait_for_timeout(50)
        line = self.page.get_by_test_id(self.status)
        status = line.inner_text() if line.count() else f"(no element with test id {self.status!r})"
        raise AssertionError(f"{doing} sent no request to {self.pattern}; the status line: {status!r}")
