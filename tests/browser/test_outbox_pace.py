"""A writer's outbox sends each batch when it is due (a second after its oldest event, or at once
when twenty wait), after a slow answer too: a busy server's answers slowing down does not make
every writer send smaller batches more often, which would slow it further (docs/benchmarks.md).
The outbox is the editor's own (study/static/editor-outbox.js), with its post answered by a
server that takes 300 ms."""

from __future__ import annotations

import pytest

from tests.browser.participant import start_writing, type_text, wait_saved
from tests.browser.routed import Routed

pytestmark = pytest.mark.browser

TYPING = """async () => {
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const posts = [];
  const outbox = new StudyEditor.Outbox("pace", "/unused", [], { onState() {} });
  outbox.post = async (batch) => {
    posts.push({ at: Date.now(), size: batch.length, oldest: batch[0].eventTimestamp });
    await sleep(300);  // the slow answer
    const acked = new Set(batch.map((record) => record.seq));
    outbox.pending = outbox.pending.filter((record) => !acked.has(record.seq));
  };
  for (let seq = 0; seq < 40; seq++) {  // ten events a second for four seconds
    outbox.add({ seq, eventTimestamp: Date.now() });
    await sleep(100);
  }
  const typed = posts.length;
  await outbox.drain();  // the writer finishes: whatever waits goes at once
  return { posts: posts.slice(0, typed), left: outbox.pending.length };
}"""


def test_a_slow_answer_does_not_make_the_outbox_send_more_often(page, task_server):
    start_writing(page, task_server.url)
    typed = page.evaluate(TYPING)
    assert typed["left"] == 0  # everything was acknowledged in the end
    posts = typed["posts"]
    # Each batch went when its oldest event was a second old (a timer's few ms early at most),
    # and none waited much longer than that and one slow answer.
    waited = [post["at"] - post["oldest"] for post in posts]
    assert all(950 <= wait <= 1000 + 300 + 250 for wait in waited), waited
    # So four seconds of typing took four or five posts, not one after every 300 ms answer.
    assert 3 <= len(posts) <= 5, waited


def test_a_clock_set_back_does_not_hold_the_writers_text_back(page, task_server):
    # The computer's clock goes back an hour (a manual change, a time sync) while a batch is on
    # its way and a later keystroke waits: that keystroke still reaches the server within about
    # a second, not once the clock has caught up with the hour.
    events = Routed(page, "**/events")
    session_id = start_writing(page, task_server.url)
    wait_saved(page)
    events.hold(count=1)
    type_text(page, "a")
    on_its_way = events.first_held('typing "a"')  # the batch with "a" is on its way
    type_text(page, "b")
    page.evaluate("() => { const now = Date.now.bind(Date); Date.now = () => now() - 3600 * 1000; }")
    on_its_way.continue_()
    wait_saved(page, timeout=10_000)
    state = page.request.get(f"{task_server.url}/api/sessions/{session_id}/state").json()
    assert state["doc"].rstrip("\n").endswith("ab")
