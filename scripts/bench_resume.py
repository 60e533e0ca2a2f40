"""Benchmark what a writer's batch costs the database's write lock when its worker process does
not know the session's latest state: after a restart (it knows nothing), and when another worker
stored the writer's previous batch (a browser's connections land on both). Real CoAuthor
sessions are loaded into a study through the event API, in-process (the Flask app called
directly, SQLite), then each session gets one more batch in each case.

Printed: the time each batch's checks ran inside the write transaction (study.server.arrival's
`check`: every other writer's batch waits for it) and the whole request, median and p99.

    python scripts/bench_resume.py --sessions 100
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = ROOT.parent / "shared" / "data" / "coauthor" / "sessions"
BATCH = 40  # events a batch, as a writer's page sends them after a pause


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100, help="sessions to load (the 31 real ones, in turn)")
    args = parser.parse_args()

    from study import config
    from study import config_texts
    from study.cli import write_study_files
    from study.server import arrival, create_app

    logs = [path.read_bytes().splitlines() for path in sorted(SESSIONS.glob("*.jsonl"))]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "study"
        write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0",
                                                config_texts.CONSENT_CONTACT_PLACEHOLDER: "Dr. Bench"})  # fmt: skip
        study = config.load(folder)
        app = create_app(study, suggestion_engine=object())
        client = app.test_client()

        print(f"loading {args.sessions} sessions (the {len(logs)} real CoAuthor sessions in turn)...", flush=True)
        sessions = []
        for number in range(args.sessions):
            events = _events(logs[number % len(logs)])
            session_id = _writing(client, f"bench-{number}")
            for start in range(0, len(events), BATCH):
                _post(client, session_id, events[start : start + BATCH])
            sessions.append((session_id, events))
        sizes = [len(events) for _, events in sessions]
        print(f"  {sum(sizes):,} events, {statistics.median(sizes):.0f} a session (median), max {max(sizes):,}")

        timed = _time_checks(arrival)

        # A restart: the new process knows no session.
        arrival._checked.clear()
        restart = [_next_batch(client, session_id, events, timed) for session_id, events in sessions]

        # Another worker stored the writer's previous batch: this one knows the state before it.
        behind = []
        for session_id, events in sessions:
            known_here = arrival._checked.get(session_id)
            arrival._checked.forget(session_id)
            _next_batch(client, session_id, events, timed)
            arrival._checked.remember(session_id, known_here)
            behind.append(_next_batch(client, session_id, events, timed))

    print("ms, median / p99        checks in the write lock   whole request")
    for label, runs in (("after a restart", restart), ("another worker's batch", behind)):
        inside, whole = [run[0] for run in runs], [run[1] for run in runs]
        print(f"  {label:<24} {_figures(inside):>22}   {_figures(whole):>13}")


def _events(lines: list[bytes]) -> list[dict]:
    events = []
    for seq, line in enumerate(lines):
        record = orjson.loads(line)
        del record["eventNum"]
        events.append({"seq": seq, **record})
    return events


def _writing(client, code: str) -> str:
    response = client.get("/task", query_string={"access_code": code})
    session_id = response.location.split("/")[2]
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    client.post(f"/s/{session_id}/instructions")
    client.post(f"/s/{session_id}/prompt", data={"prompt": "shapeshifter"})
    return session_id


def _post(client, session_id: str, batch: list[dict]):
    response = client.post(f"/api/sessions/{session_id}/events", json={"events": batch})
    if response.status_code != 200:
        sys.exit(f"a batch was refused ({response.status_code}): {response.get_json()}")
    return response


def _next_batch(client, session_id: str, events: list[dict], timed: list[float]) -> tuple[float, float]:
    """Post one more event (a caret move, as a writer resuming does) and return the checks' time
    in the write lock and the request's, in ms."""
    last = events[-1]
    move = {**last, "seq": len(events), "eventName": "cursor-forward", "eventSource": "user", "textDelta": "",
            "currentSuggestions": [], "eventTimestamp": last["eventTimestamp"] + 1000}  # fmt: skip
    events.append(move)
    timed.clear()
    began = time.perf_counter()
    _post(client, session_id, [move])
    whole = (time.perf_counter() - began) * 1000
    return sum(timed), whole


def _time_checks(arrival) -> list[float]:
    """Time `Arrival.check`, which runs inside the batch's write transaction."""
    timed: list[float] = []
    check = arrival.Arrival.check

    def timed_check(self, *args, **kwargs):
        began = time.perf_counter()
        try:
            return check(self, *args, **kwargs)
        finally:
            timed.append((time.perf_counter() - began) * 1000)

    arrival.Arrival.check = timed_check
    return timed


def _figures(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"{statistics.median(values):.2f} / {p99:.2f}"


if __name__ == "__main__":
    main()
