"""The editor's textDelta (study/static/editor-events.js), run in the browser that uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from study.paths import static_dir

pytestmark = pytest.mark.browser

EVENTS_JS = Path(static_dir()) / "editor-events.js"

# Random edits (replace a range by a random string) over text with newlines and emoji; every
# delta must turn the old text into the new one, without splitting a surrogate pair.
PROPERTY_CHECK = """
() => {
  const alphabet = ["a", "b", " ", "\\n", "\\u{1F600}", "\\u00e9"];
  let seed = 7;
  const random = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const word = (n) => Array.from({ length: n }, () => alphabet[random(alphabet.length)]).join("");
  const apply = (text, ops) => {
    let out = "", at = 0;
    for (const op of ops) {
      if (op.retain !== undefined) { out += text.slice(at, at + op.retain); at += op.retain; }
      else if (op.insert !== undefined) out += op.insert;
      else at += op.delete;
    }
    return out + text.slice(at);
  };
  const lone = /[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?:[^\\ud800-\\udbff]|^)[\\udc00-\\udfff]/;
  const problems = [];
  for (let i = 0; i < 3000; i += 1) {
    const before = word(random(12));
    const points = Array.from(before);
    const start = random(points.length + 1);
    const end = start + random(points.length - start + 1);
    const added = word(random(4));
    const head = points.slice(0, start).join("");
    const after = head + added + points.slice(end).join("");
    const delta = StudyEditor.diff(before, after, head.length + added.length);
    if (before === after) { if (delta !== null) problems.push(["no change", before]); continue; }
    const ops = delta.ops;
    if (apply(before, ops) !== after) problems.push(["wrong", before, after, ops]);
    if (ops.some((op) => op.retain === 0 || op.delete === 0 || op.insert === "")) problems.push(["empty op", ops]);
    if (ops.some((op) => op.insert !== undefined && lone.test(op.insert))) problems.push(["split pair", ops]);
  }
  return problems.slice(0, 5);
}
"""


@pytest.fixture
def events_page(page):
    page.set_content("<!doctype html><title>events</title>")
    page.add_script_tag(path=str(EVENTS_JS))
    return page


def diff(page, before: str, after: str, caret: int):
    return page.evaluate("([b, a, c]) => StudyEditor.diff(b, a, c)", [before, after, caret])


def test_every_delta_turns_the_old_text_into_the_new(events_page):
    assert events_page.evaluate(PROPERTY_CHECK) == []


def test_the_caret_places_an_ambiguous_edit_where_the_writer_made_it(events_page):
    # Typing "a" after the first "a" of "aa": an insert at 1, as Quill logs it.
    assert diff(events_page, "aa", "aaa", 2) == {"ops": [{"retain": 1}, {"insert": "a"}]}
    # Backspace after the second "a" of "aaa".
    assert diff(events_page, "aaa", "aa", 1) == {"ops": [{"retain": 1}, {"delete": 1}]}
    # An edit at position 0 has no retain.
    assert diff(events_page, "bc", "abc", 1) == {"ops": [{"insert": "a"}]}
    # Typing over a selection: retain, insert, delete (Quill's order).
    assert diff(events_page, "a big dog", "a red dog", 5) == {"ops": [{"retain": 2}, {"insert": "red"}, {"delete": 3}]}


def test_offsets_count_utf16_code_units_like_quill(events_page):
    assert diff(events_page, "\U0001F600", "\U0001F600!", 3) == {"ops": [{"retain": 2}, {"insert": "!"}]}


def test_typing_over_a_selection_is_logged_as_quill_logs_it_an_insert_replacing_the_selection(page, task_server, study_dir, tmp_path):
    # The writer selects "big" and types "b", then selects "dog" and pastes "doggy". Quill
    # (CoAuthor's editor) logs each as a text-insert of what was typed, replacing the whole
    # selection (the release: retain, insert "T", delete 9 after a cursor-select of 9), not
    # as a deletion of the part that does not happen to start like the new text.
    from tests.browser.participant import editor_text, export_session, replay, start_writing, type_text, wait_saved

    session_id = start_writing(page, task_server.url)
    start = len(editor_text(page))
    type_text(page, " big dog")
    for _ in range(4):
        page.keyboard.press("ArrowLeft")
    for _ in range(3):
        page.keyboard.press("Shift+ArrowLeft")
    type_text(page, "b")
    page.keyboard.press("End")
    for _ in range(3):
        page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.insert_text("doggy")
    wait_saved(page)
    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    edits = [(r["eventName"], r["textDelta"]["ops"]) for r in log if r["eventName"].startswith("text-")]
    assert edits[-2:] == [
        ("text-insert", [{"retain": start + 1}, {"insert": "b"}, {"delete": 3}]),
        ("text-insert", [{"retain": start + 3}, {"insert": "doggy"}, {"delete": 3}]),
    ]
    assert replay(log) == editor_text(page) + "\n"


def test_text_composed_with_an_input_method_is_logged_once_as_the_characters_it_commits(page, task_server, study_dir, tmp_path):
    # A writer of Chinese types "women" and the input method turns it into "我们": the
    # document never held "women", and the writer inserted two characters, not seven.
    from tests.browser.participant import editor_text, export_session, replay, start_writing, type_text, wait_saved

    session_id = start_writing(page, task_server.url)
    start = len(editor_text(page))
    cdp = page.context.new_cdp_session(page)
    for end in range(1, 6):
        cdp.send("Input.imeSetComposition", {"text": "women"[:end], "selectionStart": end, "selectionEnd": end})
    cdp.send("Input.insertText", {"text": "我们"})
    type_text(page, "!")
    wait_saved(page)
    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    edits = [(r["eventName"], r["eventSource"], r["textDelta"]["ops"]) for r in log if r["eventName"].startswith("text-")]
    assert edits == [
        ("text-insert", "user", [{"retain": start}, {"insert": "我们"}]),
        ("text-insert", "user", [{"retain": start + 2}, {"insert": "!"}]),
    ]
    assert replay(log) == editor_text(page) + "\n"
