"""How long a chat demo participant waits for each reply on the embedded SmolLM2-135M.

    python scripts/bench_chat_demo.py [--exchanges 8]

Runs what `study demo --paradigm chat` runs (the model endpoint and the study server, each in a
thread of this process, with the demo's caps: study.paradigms.chat.CHAT_DEMO), walks one participant
through consent, intent and pre-writing over HTTP, then sends the messages and reads each reply
as the page does (streamed). Prints, per exchange, the seconds to the first piece of the reply
and to the whole reply, its length, and what the model read (messages read / left out); then
PASS or FAIL against issue 25's goal (every reply under 10 s on 2 cores) and the load average,
since a busy machine makes every figure worse.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import httpx
from werkzeug.serving import make_server

from study import config
from study import config_texts
from study.cli import write_study_files
from study.paradigms.chat import CHAT_DEMO
from study.lm.server import serve_in_thread
from study.lm.smollm2 import SmolLM2Backend
from study.server import create_app
from study.paradigms.chat import store as chat_store
from study.store import make_engine, reading

GOAL_SECONDS = 10.0
ANSWER = "I want a warm and honest tone with short paragraphs and one vivid example."
ASKS = [
    "I want to write a blog post about my grandmother's vegetable garden.",
    "Can you suggest a warm opening sentence?",
    "Make it shorter, please.",
    "What could the second paragraph be about?",
    "Give me one vivid detail about tomatoes.",
    "How should I describe the smell of the soil?",
    "Suggest a title for the post.",
    "How could I end the post in one sentence?",
]


def walk_to_chat(http: httpx.Client) -> str:
    session_id = http.get("/task", params={"access_code": "bench"}).headers["location"].split("/")[2]
    http.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    http.post(f"/s/{session_id}/instructions", data={"confirm1": "yes", "confirm2": "yes"})
    page = http.get(f"/s/{session_id}/intent").text
    http.post(f"/s/{session_id}/intent", data={"intent": re.search(r'name="intent" value="([^"]+)"', page).group(1)})
    answered = http.post(f"/s/{session_id}/prewriting", data={f"q{n}": ANSWER for n in range(1, 7)})
    if not answered.headers.get("location", "").endswith("/chat"):
        raise SystemExit(f"could not reach the chat page: {answered.status_code}")
    return session_id


def exchange(http: httpx.Client, session_id: str, text: str) -> tuple[float | None, float, dict]:
    """Seconds to the first piece and to the whole reply, and the final line."""
    start, first, final = time.perf_counter(), None, {}
    body = {"client_id": uuid.uuid4().hex, "content": text, "stream": True}
    with http.stream("POST", f"/api/sessions/{session_id}/chat/messages", json=body, timeout=300) as response:
        for line in response.iter_lines():
            part = json.loads(line) if line else {}
            if "delta" in part and first is None:
                first = time.perf_counter() - start
            elif "assistant" in part or "error" in part:
                final = part
    return first, time.perf_counter() - start, final


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=8)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    start = time.perf_counter()
    model_url, stop_model = serve_in_thread(SmolLM2Backend())
    print(f"SmolLM2 loaded in {time.perf_counter() - start:.1f} s; demo caps: {CHAT_DEMO}")
    with tempfile.TemporaryDirectory() as folder:
        write_study_files(Path(folder), paradigm="chat", replacements={
            **CHAT_DEMO, config_texts.CONSENT_CONTACT_PLACEHOLDER: "a benchmark, no participant"})  # fmt: skip
        study = config.load(folder)
        study = replace(study, suggestions=replace(study.suggestions, endpoint=model_url))
        server = make_server("127.0.0.1", 0, create_app(study), threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        times = []
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}") as http:
            session_id = walk_to_chat(http)
            print(f"{'exchange':>8} {'first piece s':>13} {'whole reply s':>13} {'chars':>6} {'read':>5} {'left out':>8}")
            for n in range(1, args.exchanges + 1):
                first, whole, final = exchange(http, session_id, ASKS[(n - 1) % len(ASKS)])
                if "error" in final:
                    print(f"{n:>8} the reply failed: {final}")
                    times.append(float("inf"))
                    continue
                engine = make_engine(study.database_url)
                with reading(engine) as connection:
                    window = chat_store.reply_windows(connection, session_id)[final["assistant"]["seq"]]
                engine.dispose()
                times.append(whole)
                first_text = f"{first:.1f}" if first is not None else "-"
                print(f"{n:>8} {first_text:>13} {whole:>13.1f} {len(final['assistant']['content']):>6} "
                      f"{window['messages_read']:>5} {window['messages_left_out']:>8}")
                if final.get("owed"):  # the periodic rating, as the participant would give it
                    for owed in final["owed"]:
                        http.post(f"/api/sessions/{session_id}/surveys/{owed['survey']}/{owed['occasion']}",
                                  json={"answers": {"periodic_rating": 7}})
        server.shutdown()
    stop_model()
    slowest = max(times)
    print(f"slowest reply: {slowest:.1f} s; goal every reply < {GOAL_SECONDS:g} s: "
          f"{'PASS' if slowest < GOAL_SECONDS else 'FAIL'}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
