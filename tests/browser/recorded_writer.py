"""A real CoAuthor session played back by hand: what its writer did, read from the released log,
done again with Playwright's keyboard and mouse in our editor, and the model that answers with
the session's own suggestion lists (tests/browser/test_real_session_retyped.py).

The released record names what the writer did, not the key pressed (shared data README, "The
2021 record"); each user event maps to the one action that makes it in CoAuthor's editor (paper
§4.2.2-4.2.3): a text-insert is typed at the caret (Enter for a line break), a text-delete is
Backspace before the caret or over a selection, Delete after it, a cursor move is a click at its
index, a selection a drag, suggestion-get is Tab, suggestion-up/down the arrows, a hover the
pointer onto the item, suggestion-select a click after a hover or else Enter, a user's
suggestion-close Esc, suggestion-reopen Shift+Tab. Api events are the editor's own doing.
"""

from __future__ import annotations

import csv
import json
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, expect

from study.lm.backends import Generation
from study.lm.server import serve_in_thread
from tests.conftest import COAUTHOR


def read_session(session_id: str, events: int) -> list[dict]:
    """The first `events` records of a released session."""
    path = COAUTHOR / "sessions" / f"{session_id}.jsonl"
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for _, line in zip(range(events), lines)]


def study_toml_for(text: str, session_id: str, first: dict) -> str:
    """`study init`'s study.toml with the session's one condition (its genre from metadata.csv,
    its decoding settings from the record's controls) and its prompt (the first record's
    currentDoc) in place of the paper's four conditions and 20 prompts."""
    with (COAUTHOR / "metadata.csv").open(encoding="utf-8") as handle:
        genre = next(row["genre"] for row in csv.DictReader(handle) if row["session_id"] == session_id)
    head = re.sub(r"\[\[conditions\]\]\n(?:\w+ = .*\n)*", "", text[: text.index("# The paper's 20 prompts")])
    return head + (
        f'[[conditions]]\nname = "as-recorded"\ngenre = "{genre}"\nmode = "completion"\nmodel = "davinci-002"\n'
        f"n = {first['currentN']}\nmax_tokens = {first['currentMaxToken']}\n"
        f"temperature = {first['currentTemperature']}\ntop_p = {first['currentTopP']}\n"
        f"presence_penalty = {first['currentPresencePenalty']}\n"
        f"frequency_penalty = {first['currentFrequencyPenalty']}\n\n"
        f'[[prompts]]\ncode = "recorded"\ngenre = "{genre}"\n'
        f"text = {json.dumps(first['currentDoc'].removesuffix(chr(10)), ensure_ascii=False)}\n"
    )


class RecordedModel:
    """A backend for `study lm serve`'s app answering each query with the next list the session
    was shown, as model outputs that our post-processing (study.suggest.postprocess) turns back
    into the recorded `original`s: each is its own first sentence. Keeps the prompts it got.
    A query is answered when `answer` says so (where the log has its suggestion-open), so what
    the writer did while waiting is done while the editor waits too. Queries are answered in
    the order they came, the n-th with the n-th list: a writer who pressed Tab again before the
    answer (2f923aba events 68-72) has two queries waiting at once."""

    model_id = "recorded"

    def __init__(self, lists: Sequence[Sequence[str]]) -> None:
        self.lists = [list(items) for items in lists]
        self.prompts: list[str] = []
        self.url = ""  # the endpoint's base URL, once it is served
        self._turns = threading.Condition()
        self._answered = 0

    def answer(self, queries: int = 1) -> None:
        with self._turns:
            self._answered += queries
            self._turns.notify_all()

    def generate(self, prompt: str, *, n: int = 1, **_decoding) -> list[Generation]:
        with self._turns:
            turn = len(self.prompts)
            self.prompts.append(prompt)
            self._turns.wait_for(lambda: self._answered > turn, timeout=30)
        items = self.lists[turn] if turn < len(self.lists) else []
        return [Generation(text=text, token_logprobs=[-0.5], finish_reason="stop", tokens=[text]) for text in items[:n]]

    def wait_asked(self, page: Page, queries: int) -> None:
        """Wait until the model has been asked `queries` times in all, so a second Tab's query
        comes after the first's (and gets the second list); fails when it is not asked."""
        for _ in range(600):
            if len(self.prompts) >= queries:
                return
            page.wait_for_timeout(50)
        status = page.get_by_test_id("status").inner_text()
        raise AssertionError(f"Tab asked the model {len(self.prompts)} times, not {queries}; the status line: {status!r}")

    def format_chat(self, messages: Sequence[dict]) -> str:  # pragma: no cover - completion mode only
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def suggestion_lists(log: Sequence[dict]) -> list[list[str]]:
    return [[item["original"] for item in r["currentSuggestions"]] for r in log if r["eventName"] == "suggestion-open"]


# -- the writer's hands -----------------------------------------------------------------------


def _selection(page: Page) -> tuple[int, int]:
    return tuple(page.get_by_test_id("editor").evaluate("t => [t.selectionStart, t.selectionEnd - t.selectionStart]"))


def _point(page: Page, index: int) -> tuple[float, float]:
    """Where on the screen the caret at `index` is drawn (StudyEditor.caretPosition)."""
    return tuple(page.get_by_test_id("editor").evaluate(
        """(t, index) => {
          const at = StudyEditor.caretPosition(t, index), box = t.getBoundingClientRect();
          return [box.left + at.left + 1, box.top + at.top + at.lineHeight / 2];
        }""", index))  # fmt: skip


def _ops(record: dict) -> tuple[int, str, int]:
    ops = record["textDelta"]["ops"]
    retain = ops[0].get("retain", 0)
    return retain, "".join(op.get("insert", "") for op in ops), sum(op.get("delete", 0) for op in ops)


@contextmanager
def served(lists: Sequence[Sequence[str]]) -> Iterator[RecordedModel]:
    """A RecordedModel answering `lists`, served over HTTP (its `url` set) for the test's task
    server to ask; at the end, nothing is left waiting in it."""
    backend = RecordedModel(lists)
    base_url, stop = serve_in_thread(backend)
    backend.url = base_url
    try:
        yield backend
    finally:
        backend.answer(10)  # none left waiting
        stop()


def _where(number: int, record: dict) -> str:
    return f"event {number} ({record['eventName']}, {json.dumps(record['textDelta'] or record['cursorRange'])})"


def redo_all(page: Page, log: Sequence[dict], model: RecordedModel, start: int = 0) -> None:
    """Do what the writer did, in order; each query is answered where the log has its list."""
    asked = sum(record["eventName"] == "suggestion-get" for record in log[:start])
    for number, record in enumerate(log[start:], start):
        if record["eventSource"] == "user":
            redo(page, log, number)
            if record["eventName"] == "suggestion-get":
                asked += 1
                model.wait_asked(page, asked)
        elif record["eventName"] == "suggestion-open":
            model.answer()
            expect(page.get_by_test_id("suggestion")).to_have_count(len(record["currentSuggestions"]))


def redo(page: Page, log: Sequence[dict], number: int) -> None:
    """Do what the writer did to make user event `number` of `log`."""
    record, suggestions = log[number], page.get_by_test_id("suggestion")
    name = record["eventName"]
    if name == "text-insert":
        retain, text, deleted = _ops(record)
        assert _selection(page) == (retain, deleted), f"{_where(number, record)}: the caret is at {_selection(page)}"
        if text == "\n":
            page.keyboard.press("Enter")
        elif len(text) == 1:
            page.keyboard.type(text)
        else:
            page.keyboard.insert_text(text)
    elif name == "text-delete":
        retain, _, deleted = _ops(record)
        caret = _selection(page)
        if caret in ((retain, deleted), (retain + 1, 0)) and (deleted == 1 or caret[1] == deleted):
            page.keyboard.press("Backspace")
        elif caret == (retain, 0) and deleted == 1:
            page.keyboard.press("Delete")
        else:
            raise AssertionError(f"{_where(number, record)}: no single key deletes that from caret {caret}")
    elif name.startswith("cursor-"):
        start, length = record["cursorRange"]["index"], record["cursorRange"]["length"]
        page.mouse.move(*_point(page, start))
        page.mouse.down()
        page.mouse.move(*_point(page, start + length))
        page.mouse.up()
        assert _selection(page) == (start, length), f"{_where(number, record)}: the click put the caret at {_selection(page)}"
    elif name == "suggestion-get":
        page.keyboard.press("Tab")  # answered where the log has its suggestion-open (redo_all)
    elif name in ("suggestion-up", "suggestion-down"):
        page.keyboard.press("ArrowUp" if name == "suggestion-up" else "ArrowDown")
    elif name == "suggestion-hover":
        suggestions.nth(record["currentHoverIndex"]).hover()
    elif name == "suggestion-select":
        if log[number - 1]["eventName"] == "suggestion-hover":
            suggestions.nth(record["currentHoverIndex"]).click()  # the chosen item (editor-tab.js)
        else:
            page.keyboard.press("Enter")
        expect(suggestions).to_have_count(0)
    elif name == "suggestion-close":
        page.keyboard.press("Escape")
        expect(suggestions).to_have_count(0)
    elif name == "suggestion-reopen":
        page.keyboard.press("Shift+Tab")
    else:
        raise AssertionError(f"{_where(number, record)}: no action of the writer makes a {name}")
