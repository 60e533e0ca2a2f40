"""A new user's demo is clean (issue 25, item 5): each paradigm's demo, started as the README
says from inside a checkout, logs no error in the browser's console, requests nothing that
404s (the favicon included), and leaves nothing `git status` reports."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.chat_participant import exchange, rate, start_chat
from tests.browser.conftest import free_port, wait_until_up
from tests.browser.participant import evaluate_and_survey, finish_writing, start_writing, type_text, wait_saved

pytestmark = pytest.mark.browser

CHECKOUT = Path(__file__).resolve().parents[2]


def checkout_copy(tmp_path: Path) -> Path:
    """A git repository holding the project's .gitignore, where the demo runs as in a checkout."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    shutil.copy(CHECKOUT / ".gitignore", repo / ".gitignore")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", ".gitignore"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=repo, check=True)
    return repo


def watch(page) -> list[str]:
    """Everything wrong the browser saw: console errors and answers that are 404s."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(f"console {m.type}: {m.text} ({m.location.get('url')})")
            if m.type == "error" else None)  # fmt: skip
    page.on("response", lambda r: seen.append(f"404 {r.url}") if r.status == 404 else None)
    return seen


@pytest.mark.parametrize("paradigm", ["writing", "proactive", "chat"])
def test_a_demo_has_a_clean_console_and_leaves_a_clean_checkout(page, tmp_path, paradigm):
    repo = checkout_copy(tmp_path)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "study", "demo", "--port", str(port), "--backend", "deterministic",
         "--min-seconds", "2", "--paradigm", paradigm],
        cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(f"{url}/healthz", timeout=60)
        seen = watch(page)
        if paradigm == "chat":
            start_chat(page, url, access_code="demo")
            for n in range(1, 9):
                exchange(page, f"My thought number {n}.", n)
                if n in (3, 6):
                    rate(page, 7)
            page.get_by_test_id("finish").click()
            page.wait_for_url("**/survey")
        else:
            start_writing(page, url, access_code="demo")
            type_text(page, "The lighthouse keeper counted the ships")
            if paradigm == "writing":
                page.keyboard.press("Tab")
                expect(page.get_by_test_id("suggestion").first).to_be_visible()
                page.keyboard.press("Enter")
            else:
                expect(page.get_by_test_id("suggestion-ghost")).to_be_visible(timeout=10_000)
                page.keyboard.press("Tab")
            wait_saved(page)
            finish_writing(page)
            evaluate_and_survey(page)
        assert not seen, seen
        # Headless Chromium asks for no icon; a desktop browser asks for the linked one, or
        # for /favicon.ico on a page without a link (a JSON answer).
        icon = page.locator("link[rel=icon]").get_attribute("href")
        for path in (icon, "/favicon.ico"):
            answer = page.request.get(f"{url}{path}")
            assert answer.ok and answer.headers["content-type"].startswith("image/"), path
    finally:
        server.terminate()
        server.wait(timeout=20)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert status == "", f"the demo left files git reports:\n{status}"
    assert any(repo.glob("demo*study/study.db"))  # the demo did write its folder
