"""Benchmark event ingest: simulated writers typing into a real task server on 127.0.0.1.

    python scripts/bench_ingest.py                       # 200 writers x 5 events/s, 30 s, SQLite, waitress
    python scripts/bench_ingest.py --server gunicorn --workers 4
    python scripts/bench_ingest.py --database postgresql+psycopg://study@127.0.0.1/bench

The script creates a study in a temporary folder, starts the server as a subprocess (`study serve`,
i.e. waitress, or gunicorn on study.server.wsgi), and takes every writer through the participant
pages with an access code up to the editor. Then each writer types as a person does: phases of
steady typing at --rate events/s, bursts at --burst times that rate and pauses, averaging --rate.
Its outbox behaves like study/static/editor-outbox.js: a batch goes out 1 s after the first
unsent event, or at once when 20 are waiting; one request at a time; unacknowledged events are
resent. Records are valid per schemas/event-batch.schema.json (text-insert and text-delete with
their deltas, cursor moves).

It prints events stored per second, requests per second, acknowledgement latency (p50, p90, p99,
max), errors, and CPU used by server and client, then checks in the database that exactly the
acknowledged events are stored. The load goes only to 127.0.0.1 and stops after --duration.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson

from study import config as study_config
from study.cli import write_study_files

SEND_DELAY = 1.0  # editor-outbox.js SEND_DELAY_MS
SEND_AT_COUNT = 20  # editor-outbox.js SEND_AT_COUNT
MAX_BATCH = 50  # editor-outbox.js MAX_BATCH
RETRY = (0.5, 1.0, 2.0, 4.0, 5.0)  # editor-outbox.js RETRY_MS
REQUEST_TIMEOUT = 10.0
# Typing comes in phases that last PHASE_SECONDS on average: bursts at --burst times --rate for
# BURST_SHARE of the time, pauses, and steady typing at --rate, with the pauses' share chosen
# so that a writer's long-run average is --rate.
PHASE_SECONDS = 3.0
BURST_SHARE = 0.2
CONTROLS = {
    "currentN": "5", "currentMaxToken": "30", "currentTemperature": "0.3",
    "currentTopP": "1", "currentPresencePenalty": "0", "currentFrequencyPenalty": "0",
}
WORDS = ("the", "night", "was", "quiet", "and", "she", "walked", "towards", "old", "harbour",
         "where", "ships", "waited", "for", "morning", "light", "because", "nobody", "knew")


# -- one writer -------------------------------------------------------------------------------


class Editor:
    """The document and the CoAuthor records a writer's editor produces."""

    def __init__(self, prompt_text: str, rng: random.Random) -> None:
        self.rng = rng
        self.doc = prompt_text.rstrip("\n") + "\n"  # Quill ends a document with a newline
        self.cursor = len(self.doc) - 1
        self.seq = 0
        self.words = iter(())

    def record(self, name: str, *, delta="", cursor_range="", doc="") -> dict:
        record = {
            "seq": self.seq, "eventName": name,
            "eventSource": "api" if name == "system-initialize" else "user",
            "eventTimestamp": int(time.time() * 1000), "textDelta": delta,
            "cursorRange": cursor_range, "currentDoc": doc, "currentCursor": self.cursor,
            "currentSuggestions": [], "currentSuggestionIndex": 0, "currentHoverIndex": "",
            **CONTROLS,
        }
        self.seq += 1
        return record

    def initialize(self) -> dict:
        return self.record("system-initialize", doc=self.doc)

    def next_event(self) -> dict:
        roll = self.rng.random()
        if roll < 0.07 and self.cursor > 0:  # backspace
            self.cursor -= 1
            self.doc = self.doc[: self.cursor] + self.doc[self.cursor + 1 :]
            ops = ([{"retain": self.cursor}] if self.cursor else []) + [{"delete": 1}]
            return self.record("text-delete", delta={"ops": ops})
        if roll < 0.12:  # arrow keys
            step = self.rng.choice((-1, 1))
            self.cursor = max(0, min(len(self.doc) - 1, self.cursor + step))
            name = "cursor-forward" if step > 0 else "cursor-backward"
            return self.record(name, cursor_range={"index": self.cursor, "length": 0})
        character = next(self.words, None)
        if character is None:
            self.words = iter(" " + self.rng.choice(WORDS))
            character = next(self.words)
        ops = ([{"retain": self.cursor}] if self.cursor else []) + [{"insert": character}]
        self.doc = self.doc[: self.cursor] + character + self.doc[self.cursor :]
        self.cursor += 1
        return self.record("text-insert", delta={"ops": ops})


class Connection:
    """One writer's keep-alive HTTP/1.1 connection, as its browser holds one.

    Deliberately minimal (POST with a JSON body, a response with Content-Length): a full client
    such as httpx spends about a millisecond of CPU per request, and on a 2-core machine that
    shares its cores with the server, the client's own delays would end up in the latencies.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """(status, body); raises OSError, EOFError or TimeoutError when the exchange fails."""
        reused = self.streams is not None
        try:
            return await self._exchange(path, body)
        except (ConnectionResetError, BrokenPipeError, asyncio.IncompleteReadError) as error:
            # The server closed an idle keep-alive connection just as the request went out
            # (gunicorn does after 2 s): like browsers, try once more on a new connection.
            if not reused or (isinstance(error, asyncio.IncompleteReadError) and error.partial):
                raise
            return await self._exchange(path, body)

    async def _exchange(self, path: str, body: bytes) -> tuple[int, bytes]:
        try:
            if self.streams is None:
                self.streams = await asyncio.wait_for(
                    asyncio.open_connection(self.host, self.port), REQUEST_TIMEOUT
                )
            reader, writer = self.streams
            writer.write(
                f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT)
            headers = head.decode("latin-1").lower()
            length = re.search(r"\r\ncontent-length: *(\d+)", headers)
            if length is None:
                raise ValueError(f"a response without Content-Length: {head[:200]!r}")
            length = int(length.group(1))
            content = await asyncio.wait_for(reader.readexactly(length), REQUEST_TIMEOUT)
            if "\r\nconnection: close" in headers:
                self.close()
            return int(head[9:12]), content
        except (OSError, EOFError, asyncio.TimeoutError, ValueError):
            self.close()  # a broken connection is not reused; the next post opens a new one
            raise

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


@dataclass
class WriterResult:
    session_id: str
    acked: set[int] = field(default_factory=set)
    made: int = 0
    latencies: list[float] = field(default_factory=list)
    requests: int = 0
    errors: list[str] = field(default_factory=list)


class Writer:
    """One writer: a typist adding events and an outbox sending them, sharing `pending`."""

    def __init__(self, client, session_id, prompt_text, rate, burst, seed) -> None:
        self.client = client
        self.rng = random.Random(seed)
        self.editor = Editor(prompt_text, self.rng)
        self.result = WriterResult(session_id)
        self.url = f"/api/sessions/{session_id}/events"
        self.rate = rate
        pause = BURST_SHARE * (burst - 1)
        self.phases = ((pause, 0.0), (1 - pause - BURST_SHARE, 1.0), (BURST_SHARE, burst))
        self.pending: list[dict] = []
        self.first_pending_at: float | None = None
        self.changed = asyncio.Event()
        self.typing = True
        self.send_now = False  # the outbox sends at once after an answer if events are waiting

    def add(self, record: dict) -> None:
        if not self.pending:
            self.first_pending_at = time.monotonic()
        self.pending.append(record)
        self.result.made += 1
        self.changed.set()

    async def type(self, until: float) -> None:
        # Writers start at different moments of the first second, as real ones would.
        await asyncio.sleep(self.rng.random())
        self.add(self.editor.initialize())
        while time.monotonic() < until:
            phase_end = min(until, time.monotonic() + self.rng.expovariate(1 / PHASE_SECONDS))
            share = self.rng.random()
            multiple = next(m for s, m in _cumulative(self.phases) if share < s)
            while time.monotonic() < phase_end:
                if multiple == 0:
                    await asyncio.sleep(phase_end - time.monotonic())
                    break
                await asyncio.sleep(self.rng.expovariate(self.rate * multiple))
                self.add(self.editor.next_event())
        self.typing = False
        self.changed.set()

    async def send_loop(self, flush_deadline: float) -> None:
        failures = 0
        while self.typing or self.pending:
            if not self.pending:
                self.changed.clear()
                await self.changed.wait()
                continue
            if self.typing and len(self.pending) < SEND_AT_COUNT and not (failures or self.send_now):
                wait = self.first_pending_at + SEND_DELAY - time.monotonic()
                if wait > 0:
                    self.changed.clear()
                    try:
                        await asyncio.wait_for(self.changed.wait(), wait)
                    except asyncio.TimeoutError:
                        pass
                    if len(self.pending) < SEND_AT_COUNT and time.monotonic() < self.first_pending_at + SEND_DELAY:
                        continue
            if not self.typing and time.monotonic() > flush_deadline:
                self.result.errors.append(f"gave up with {len(self.pending)} unacknowledged events")
                return
            if await self.post(self.pending[:MAX_BATCH]):
                failures = 0
                self.send_now = bool(self.pending)
            else:
                failures += 1
                await asyncio.sleep(RETRY[min(failures, len(RETRY)) - 1])

    async def post(self, batch: list[dict]) -> bool:
        body = orjson.dumps({"events": batch})
        started = time.perf_counter()
        self.result.requests += 1
        try:
            status, content = await self.client.post(self.url, body)
        except (OSError, EOFError, asyncio.TimeoutError, ValueError) as error:
            self.result.errors.append(f"{type(error).__name__}: {error}")
            return False
        latency = time.perf_counter() - started
        if status != 200:
            self.result.errors.append(f"HTTP {status}: {content[:200]!r}")
            return False
        self.result.latencies.append(latency)
        acked = set(orjson.loads(content)["acked"])
        self.result.acked |= acked
        self.pending = [record for record in self.pending if record["seq"] not in acked]
        return True


def _cumulative(phases):
    total = 0.0
    for share, multiple in phases:
        total += share
        yield total, multiple
    yield float("inf"), phases[-1][1]


async def _watch_loop(lags: list[float], until: float) -> None:
    """How late this client's event loop runs a 10 ms timer: past a few ms, the client itself
    adds to the latencies it measures."""
    while time.monotonic() < until:
        expected = time.monotonic() + 0.01
        await asyncio.sleep(0.01)
        lags.append(max(0.0, time.monotonic() - expected))


async def _run_writers(base_url, writers, rate, burst, duration, seed):
    """Type and send until `duration` is over, then flush; returns the writers' results, the
    event loop's lags and the (start, end) of the load on the monotonic clock."""
    # One keep-alive connection per writer, as each writer's browser holds its own.
    host, port = base_url.removeprefix("http://").split(":")
    clients = [Connection(host, int(port)) for _ in writers]
    try:
        started = time.monotonic()
        until = started + duration
        simulated = [
            Writer(client, session_id, prompt_text, rate, burst, seed * 100_003 + i)
            for i, (client, (session_id, prompt_text)) in enumerate(zip(clients, writers))
        ]
        lags: list[float] = []
        tasks = [_watch_loop(lags, until)]
        for writer in simulated:
            tasks.append(writer.type(until))
            tasks.append(writer.send_loop(flush_deadline=until + 30))
        await asyncio.wait_for(asyncio.gather(*tasks), duration + 60)
        finished = time.monotonic()
    finally:
        for client in clients:
            client.close()
    return [writer.result for writer in simulated], lags, (started, finished)


def _client_process(args):
    """One client process's share of the writers: _run_writers' answer and its CPU seconds."""
    cpu = time.process_time()
    results, lags, span = asyncio.run(_run_writers(*args))
    return results, lags, span, time.process_time() - cpu


# -- the server -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_server(options, directory: Path, port: int, log: Path) -> subprocess.Popen:
    env = dict(os.environ)
    if options.server == "waitress":
        command = [sys.executable, "-m", "study", "serve", str(directory), "--port", str(port),
                   "--threads", str(options.threads)]
    else:
        command = [sys.executable, "-m", "gunicorn", "-w", str(options.workers),
                   "-b", f"127.0.0.1:{port}", "study.server.wsgi:app"]
        if options.gunicorn_threads > 1:
            command += ["--threads", str(options.gunicorn_threads)]
        env.update(STUDY_DIR=str(directory), STUDY_SECRET_KEY=os.urandom(16).hex())
    with open(log, "ab") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.1)
    _stop_server(process)
    raise SystemExit(f"the server did not answer within 60 s:\n{log.read_text()[-3000:]}")


def _stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _cpu_seconds(group: int) -> float:
    """User + system CPU seconds of every process in a process group (the server and its workers)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group:  # pgrp
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


# -- setup and checks -------------------------------------------------------------------------


async def _start_sessions(base_url: str, study, count: int) -> list[tuple[str, str]]:
    """Each writer's way through the pages: access code, consent, instructions, a prompt."""
    semaphore = asyncio.Semaphore(16)
    run = os.urandom(4).hex()  # fresh access codes, also in a database that earlier runs used

    async def step(client, method, url, **kwargs) -> str:
        response = await client.request(method, url, **kwargs)
        if response.status_code != 302:
            raise SystemExit(f"{method} {url}: expected a redirect, got {response.status_code}")
        return response.headers["location"]

    async def one(client, i):
        prompt = study.prompts[i % len(study.prompts)]
        async with semaphore:
            location = await step(client, "GET", f"/task?access_code=bench-{run}-{i}")
            session_id = re.search(r"/s/([0-9a-f]{32})/", location).group(1)
            location = await step(client, "POST", location, data={"consent": "yes"})
            location = await step(client, "POST", location)
            location = await step(client, "POST", location, data={"prompt": prompt.code})
            if not location.endswith("/writing"):
                raise SystemExit(f"writer {i} did not reach the editor but {location}")
        return session_id, prompt.text

    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        return await asyncio.gather(*(one(client, i) for i in range(count)))


def _stored(database_url: str, session_ids: list[str]) -> set[tuple[str, int]]:
    from sqlalchemy import select

    from study.store import make_engine, reading
    from study.store.db import events

    engine = make_engine(database_url)
    stored = set()
    try:
        with reading(engine) as connection:
            for start in range(0, len(session_ids), 100):
                query = select(events.c.session_id, events.c.seq).where(
                    events.c.session_id.in_(session_ids[start : start + 100])
                )
                stored.update(tuple(row) for row in connection.execute(query))
    finally:
        engine.dispose()
    return stored


def _percentile(ordered: list[float], fraction: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", choices=("waitress", "gunicorn"), default="waitress",
                        help="waitress: `study serve`; gunicorn: study.server.wsgi (default: waitress)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes (default 2)")
    parser.add_argument("--gunicorn-threads", type=int, default=4,
                        help="threads per gunicorn worker (the gthread worker when above 1; default 4)")
    parser.add_argument("--threads", type=int, default=16, help="waitress threads (default 16, as `study serve`)")
    parser.add_argument("--writers", type=int, default=200, help="concurrent writers (default 200)")
    parser.add_argument("--rate", type=float, default=5.0, help="average events/s per writer (default 5)")
    parser.add_argument("--burst", type=float, default=3.0, help="bursts type this many times --rate (default 3)")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of typing (default 30)")
    parser.add_argument("--database", default="", help="SQLAlchemy URL (default: SQLite in the temporary study)")
    parser.add_argument("--clients", type=int, default=1, help="client processes sharing the writers (default 1)")
    parser.add_argument("--target-p99-ms", type=float, default=100.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the temporary study folder and server log")
    options = parser.parse_args(argv)
    if not 1 <= options.burst <= 1 + (1 - BURST_SHARE) / BURST_SHARE:
        parser.error(f"--burst must be between 1 and {1 + (1 - BURST_SHARE) / BURST_SHARE:g}")

    base = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    try:
        return _run(options, base)
    finally:
        if options.keep:
            print(f"  study folder and server log: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


def _run(options, base: Path) -> int:
    directory = base / "study"
    replacements = {"min_seconds = 600": "min_seconds = 0", "max_per_prompt = 5": "max_per_prompt = 1000",
                    study_config.CONSENT_CONTACT_PLACEHOLDER: "the benchmark (nobody)"}
    if options.database:
        replacements['database = ""'] = f'database = "{options.database}"'
    write_study_files(directory, replacements=replacements)
    study = study_config.load(directory)
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    server = _start_server(options, directory, port, base / "server.log")
    try:
        writers = asyncio.run(_start_sessions(base_url, study, options.writers))
        shares = [writers[i :: options.clients] for i in range(options.clients)]
        jobs = [(base_url, share, options.rate, options.burst, options.duration, options.seed + i)
                for i, share in enumerate(shares)]
        server_cpu = _cpu_seconds(server.pid)
        load_before = os.getloadavg()[0]
        if options.clients == 1:
            outcomes = [_client_process(jobs[0])]
        else:
            with multiprocessing.get_context("fork").Pool(options.clients) as pool:
                outcomes = pool.map(_client_process, jobs)
        server_cpu = _cpu_seconds(server.pid) - server_cpu
    finally:
        _stop_server(server)
    results = [result for outcome in outcomes for result in outcome[0]]
    stored = _stored(study.database_url, [r.session_id for r in results])
    return _report(options, outcomes, stored, server_cpu, load_before)


def _report(options, outcomes, stored: set, server_cpu: float, load_before: float) -> int:
    """Print the figures; 0 when every acknowledged event, and only those, is stored."""
    results = [result for outcome in outcomes for result in outcome[0]]
    lags = sorted(lag * 1000 for outcome in outcomes for lag in outcome[1])
    elapsed = max(o[2][1] for o in outcomes) - min(o[2][0] for o in outcomes)
    client_cpu = sum(outcome[3] for outcome in outcomes)
    latencies = sorted(seconds * 1000 for result in results for seconds in result.latencies)
    acked = {(r.session_id, seq) for r in results for seq in r.acked}
    errors = [error for r in results for error in r.errors]
    requests = sum(r.requests for r in results)
    made = sum(r.made for r in results)

    backend = "PostgreSQL" if options.database.startswith("postgres") else "SQLite"
    server_text = (f"waitress, {options.threads} threads" if options.server == "waitress"
                   else f"gunicorn, {options.workers} workers x {options.gunicorn_threads} threads")
    p99 = _percentile(latencies, 0.99)
    print(f"{options.writers} writers x {options.rate:g} events/s (bursts x{options.burst:g}) "
          f"for {options.duration:g} s; {server_text}; {backend}; {options.clients} client process(es)")
    print(f"  events stored/s   {len(acked) / elapsed:8.1f}   ({len(acked)} in {elapsed:.1f} s)")
    print(f"  requests/s        {requests / elapsed:8.1f}   ({len(latencies) / max(requests, 1):.1%} answered 200,"
          f" {len(acked) / max(len(latencies), 1):.1f} events per batch)")
    print(f"  ack latency ms    p50 {_percentile(latencies, 0.5):.1f}  p90 {_percentile(latencies, 0.9):.1f}"
          f"  p99 {p99:.1f}  max {_percentile(latencies, 1.0):.1f}")
    print(f"  client loop lag   p50 {_percentile(lags, 0.5):.1f}  p99 {_percentile(lags, 0.99):.1f}"
          f"  max {_percentile(lags, 1.0):.1f}   (ms the client itself adds)")
    print(f"  errors            {len(errors)}" + (f"   first: {errors[0]}" if errors else ""))
    print(f"  CPU               server {server_cpu / elapsed:.0%} of a core, client {client_cpu / elapsed:.0%};"
          f" load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after ({os.cpu_count()} CPUs)")
    consistent = stored == acked
    print(f"  database          {len(stored)} stored, {len(acked)} acknowledged, {made} made: "
          + ("identical" if consistent else
             f"MISMATCH ({len(acked - stored)} acknowledged but missing, {len(stored - acked)} stored unacknowledged)"))
    print(f"  target p99 < {options.target_p99_ms:g} ms: {'met' if p99 < options.target_p99_ms else 'MISSED'}")
    return 0 if consistent and not errors else 1

if __name__ == "__main__":
    sys.exit(main())
