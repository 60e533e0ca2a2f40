"""Debian's Chromium through Playwright, in a thread of its own.

Playwright's sync API allows one instance per thread, and tests/browser keeps a session-wide
one open in the main thread; a second one there fails ("Sync API inside the asyncio loop").
So these tests drive their own Chromium from a separate thread: `in_chromium(steps)` runs
`steps(page)` there and re-raises its failure (and any JavaScript error on the page) here.
"""

from __future__ import annotations

import threading

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, sync_api


def in_chromium(steps) -> None:
    failure: list[BaseException] = []

    def run() -> None:
        try:
            with sync_api.sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    context = browser.new_context(viewport={"width": 1100, "height": 800})
                    context.set_default_timeout(10_000)
                    page = context.new_page()
                    errors: list[str] = []
                    page.on("pageerror", lambda error: errors.append(str(error)))
                    steps(page)
                    assert not errors, f"JavaScript errors on the page: {errors}"
                finally:
                    browser.close()
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            failure.append(error)

    thread = threading.Thread(target=run, name="chromium", daemon=True)
    thread.start()
    thread.join(timeout=120)
    if thread.is_alive():
        raise TimeoutError("the browser steps did not finish within two minutes")
    if failure:
        raise failure[0]
