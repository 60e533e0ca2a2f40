"""One simulated writer for scripts/bench_ingest.py: the CoAuthor records its editor produces, its
keep-alive connection, and its outbox (as study/static/editor-outbox.js sends), plus the model
requests its paradigm's part of the editor makes now and then: Tab suggestions, ghost text
(MindCopilot's L1) or a chat arm's messages (`TabSuggestions`, `GhostText`, `ChatPanel`)."""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

import orjson

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
QUESTIONS = ("Can you suggest the next sentence?", "How could I make the opening more vivid?",
             "Is my last paragraph clear?", "Give me a better word for quiet.")


# -- one writer -------------------------------------------------------------------------------


class Editor:
    """The document and the CoAuthor records a writer's editor produces."""

    def __init__(self, prompt_text: str, rng: random.Random, extension: str | None = None) -> None:
        self.rng = rng
        self.extension = extension
        self.doc = prompt_text.rstrip("\n") + "\n"  # Quill ends a document with a newline
        self.cursor = len(self.doc) - 1
        self.seq = 0
        self.words = iter(())

    def record(self, name: str, at_ms: int, *, delta="", cursor_range="", doc="") -> dict:
        record = {
            "seq": self.seq, "eventName": name,
            "eventSource": "api" if name == "system-initialize" else "user",
            "eventTimestamp": at_ms, "textDelta": delta,
            "cursorRange": cursor_range, "currentDoc": doc, "currentCursor": self.cursor,
            "currentSuggestions": [], "currentSuggestionIndex": 0, "currentHoverIndex": "",
            **CONTROLS,
        }
        if self.extension:
            record[self.extension] = {}  # as editor-events.js; the event API adds the paradigm
        self.seq += 1
        return record

    def initialize(self, at_ms: int) -> dict:
        return self.record("system-initialize", at_ms, doc=self.doc)

    def next_event(self, at_ms: int) -> dict:
        roll = self.rng.random()
        if roll < 0.07 and self.cursor > 0:  # backspace
            self.cursor -= 1
            self.doc = self.doc[: self.cursor] + self.doc[self.cursor + 1 :]
            ops = ([{"retain": self.cursor}] if self.cursor else []) + [{"delete": 1}]
            return self.record("text-delete", at_ms, delta={"ops": ops})
        if roll < 0.12:  # arrow keys
            step = self.rng.choice((-1, 1))
            self.cursor = max(0, min(len(self.doc) - 1, self.cursor + step))
            name = "cursor-forward" if step > 0 else "cursor-backward"
            return self.record(name, at_ms, cursor_range={"index": self.cursor, "length": 0})
        character = next(self.words, None)
        if character is None:
            self.words = iter(" " + self.rng.choice(WORDS))
            character = next(self.words)
        ops = ([{"retain": self.cursor}] if self.cursor else []) + [{"insert": character}]
        self.doc = self.doc[: self.cursor] + character + self.doc[self.cursor :]
        self.cursor += 1
        return self.record("text-insert", at_ms, delta={"ops": ops})


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
        # One deadline for the whole exchange, as a browser's request has (a wait_for around
        # each read made a task and a timer of its own: a tenth of the client's CPU).
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT):
                if self.streams is None:
                    self.streams = await asyncio.open_connection(self.host, self.port)
                reader, writer = self.streams
                writer.write(
                    f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                head = await reader.readuntil(b"\r\n\r\n")
                headers = head.decode("latin-1").lower()
                length = re.search(r"\r\ncontent-length: *(\d+)", headers)
                if length is None:
                    raise ValueError(f"a response without Content-Length: {head[:200]!r}")
                content = await reader.readexactly(int(length.group(1)))
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
    sent_at: list[float] = field(default_factory=list)  # each answered batch's time.monotonic()
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    timeouts: int = 0
    # (seconds the writer waited, HTTP status, time.monotonic() it was sent) of each suggestion
    # request, in order
    suggestions: list[tuple[float, int, float]] = field(default_factory=list)


class Writer:
    """One writer: a typist's keystrokes on a schedule, and an outbox sending them.

    The keystrokes' moments are drawn ahead (`_schedule`), and a keystroke's record is made
    when the outbox or the model part next looks (`catch_up`), stamped with its own moment. So
    the client wakes when a browser's outbox would send, not at every keystroke: a wake-up per
    keystroke (5,000 a second at 1,000 writers) was half of the client's CPU, which it takes from
    the two cores the server is measured on. What the server receives, and when, is the same."""

    def __init__(self, client, session_id, prompt_text, rate, burst, seed, suggest_client=None, part=None) -> None:
        self.client = client
        self.suggest_client = suggest_client
        self.part = part or TabSuggestions()  # what the paradigm's part of the editor asks
        self.rng = random.Random(seed)
        self.editor = Editor(prompt_text, self.rng, self.part.extension)
        self.result = WriterResult(session_id)
        self.url = f"/api/sessions/{session_id}/events"
        self.rate = rate
        pause = BURST_SHARE * (burst - 1)
        self.phases = ((pause, 0.0), (1 - pause - BURST_SHARE, 1.0), (BURST_SHARE, burst))
        self.pending: list[dict] = []
        self.keys: Iterator[float] = iter(())  # the keystrokes' moments (time.monotonic())
        self.ahead: deque[float] = deque()  # drawn from `keys`, not typed yet

    def _schedule(self, started: float, until: float, timing: random.Random) -> Iterator[float]:
        # Writers start at different moments of the first second, as real ones would ...
        moment = started + timing.random()
        # ... and stop at different moments of the last second: a thousand writers finishing
        # at the same instant would send their last batches together, a burst no launch has.
        until -= timing.random()
        yield moment  # the editor's system-initialize
        while moment < until:
            phase_end = min(until, moment + timing.expovariate(1 / PHASE_SECONDS))
            share = timing.random()
            multiple = next(m for s, m in _cumulative(self.phases) if share < s)
            if multiple == 0:
                moment = phase_end
                continue
            while moment < phase_end:
                moment += timing.expovariate(self.rate * multiple)
                yield moment

    def _peek(self, count: int) -> float | None:
        """The moment of the `count`th keystroke still to come; None when typing ends before it."""
        while len(self.ahead) < count:
            moment = next(self.keys, None)
            if moment is None:
                return None
            self.ahead.append(moment)
        return self.ahead[count - 1]

    def catch_up(self) -> float:
        """Make the records of every keystroke whose moment has come; the moment it looked
        (time.monotonic()), which every keystroke still to come is after."""
        now, wall_ms = time.monotonic(), time.time() * 1000
        while (moment := self._peek(1)) is not None and moment <= now:
            self.ahead.popleft()
            at_ms = int(wall_ms - (now - moment) * 1000)
            first = self.result.made == 0
            self.pending.append(self.editor.initialize(at_ms) if first else self.editor.next_event(at_ms))
            self.result.made += 1
        return now

    @property
    def typing(self) -> bool:
        """Whether keystrokes are still to come."""
        return self._peek(1) is not None

    async def send_loop(self, started: float, until: float, flush_deadline: float) -> None:
        self.keys = self._schedule(started, until, random.Random(self.rng.random()))
        failures = 0
        while True:
            # The moment every figure below is reckoned from: a clock read again later could
            # find the writer's last keystroke due with its record not made yet, and send an
            # empty batch (editor-outbox.js never does).
            now = self.catch_up()
            if not self.typing and not self.pending:
                return
            if self.typing and len(self.pending) < SEND_AT_COUNT and not failures:
                # Due SEND_DELAY after the oldest waiting event was made, after an answer too
                # (editor-outbox.js dueIn), at once when the batch is full, and at once when the
                # writer stops typing: sleep until the first of the three.
                if self.pending:
                    wait = self.pending[0]["eventTimestamp"] / 1000 + SEND_DELAY - time.time()
                else:
                    wait = self._peek(1) + SEND_DELAY - now
                full_at = self._peek(SEND_AT_COUNT - len(self.pending))
                # Fewer keystrokes than a batch's worth are left: the last of them ends the typing.
                wait = min(wait, (full_at if full_at is not None else self.ahead[-1]) - now)
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
            if not self.typing and time.monotonic() > flush_deadline:
                self.result.errors.append(f"gave up with {len(self.pending)} unacknowledged events")
                return
            if await self.post(self.pending[:MAX_BATCH]):
                failures = 0
            else:
                failures += 1
                await asyncio.sleep(RETRY[min(failures, len(RETRY)) - 1])

    async def suggest_loop(self, begin: float, until: float, every: float) -> None:
        """Ask the model API now and then from `begin` on (Tab suggestions, ghost text or a chat
        message: `self.part`), one request at a time, on the writer's second connection (a
        browser opens another while the first is busy)."""
        if every <= 0 or self.suggest_client is None:
            return
        url = self.url.replace("/events", "/" + self.part.path)
        await asyncio.sleep(max(0.0, begin - time.monotonic()))
        while True:
            await asyncio.sleep(min(self.rng.expovariate(1 / every), max(0.0, until - time.monotonic())))
            if time.monotonic() >= until:
                return
            self.catch_up()  # the editor as the writer has typed it up to now
            body = orjson.dumps(self.part.body(self.editor, self.rng))
            seq, sent_at, started = self.editor.seq, time.monotonic(), time.perf_counter()
            try:
                status, _ = await self.suggest_client.post(url, body)
            except (OSError, EOFError, asyncio.TimeoutError, ValueError) as error:
                self.result.errors.append(f"suggestion: {type(error).__name__}: {error}")
                self.result.timeouts += isinstance(error, asyncio.TimeoutError)
                continue
            self.result.suggestions.append((time.perf_counter() - started, status, sent_at))
            self.catch_up()
            self.part.answered(status, moved=self.editor.seq != seq)

    async def post(self, batch: list[dict]) -> bool:
        body = orjson.dumps({"events": batch})
        sent_at, started = time.monotonic(), time.perf_counter()
        self.result.requests += 1
        try:
            status, content = await self.client.post(self.url, body)
        except (OSError, EOFError, asyncio.TimeoutError, ValueError) as error:
            self.result.errors.append(f"{type(error).__name__}: {error}")
            self.result.timeouts += isinstance(error, asyncio.TimeoutError)
            return False
        latency = time.perf_counter() - started
        if status != 200:
            self.result.errors.append(f"HTTP {status}: {content[:200]!r}")
            return False
        self.result.latencies.append(latency)
        self.result.sent_at.append(sent_at)
        acked = set(orjson.loads(content)["acked"])
        self.result.acked |= acked
        self.pending = [record for record in self.pending if record["seq"] not in acked]
        return True


# -- what each paradigm's part of the editor asks the model API ------------------------------


class TabSuggestions:
    """Tab suggestions (study/paradigms/tab/api.py): the document, as this benchmark has always
    sent it (the page's editor-suggestions.js sends the textarea's text, without the final
    newline, and `on_screen`, the suggestions shown)."""

    path = "suggestions"
    extension = None  # the key the paradigm adds to every record (its boot data's `extension`)

    def body(self, editor: Editor, rng: random.Random) -> dict:
        return {"doc": editor.doc}

    def answered(self, status: int, moved: bool) -> None:
        pass


class GhostText:
    """L1 ghost text, the body study/paradigms/proactive/static/editor-proactive-trigger.js `fetch`
    sends: the textarea's text, the idle threshold, no history (L1 is stateless) and what
    became of each earlier ghost text. (The page asks after an idle pause; this writer asks on
    the benchmark's schedule, as for Tab.) It never accepts one: a ghost text was stale when the
    writer typed or moved while it was asked for, else their next keystroke rejected it. Every
    record carries the extension `proactive`, as in a MindCopilot study."""

    path = "proactive"
    extension = "proactive"  # study.paradigms.proactive.coauthor_log.KEY

    def __init__(self, idle_ms: int) -> None:
        self.idle_ms = idle_ms
        self.outcomes: list[str] = []

    def body(self, editor: Editor, rng: random.Random) -> dict:
        return {"doc": editor.doc[:-1], "idle_ms": self.idle_ms, "history": [],
                "outcomes": list(self.outcomes), "kept_words": []}  # fmt: skip

    def answered(self, status: int, moved: bool) -> None:
        if status == 200:
            self.outcomes.append("stale" if moved else "rejected")


class ChatPanel:
    """A chat arm's message, as study/paradigms/chat/static/editor-chat.js sends it: a new
    client id ("m", the time, random characters) and the writer's question; the reply is not
    streamed. A message without a reply (the model failed or was busy) is tried again, under
    its client id, before any new one, as the page's Try again does."""

    path = "assistant/messages"
    extension = None

    def __init__(self) -> None:
        self.unanswered: dict | None = None

    def body(self, editor: Editor, rng: random.Random) -> dict:
        if self.unanswered is None:
            client_id = f"m{int(time.time() * 1000):x}{rng.getrandbits(40):010x}"
            self.unanswered = {"client_id": client_id, "content": rng.choice(QUESTIONS)}
        return self.unanswered

    def answered(self, status: int, moved: bool) -> None:
        if status == 200:
            self.unanswered = None


def _cumulative(phases):
    total = 0.0
    for share, multiple in phases:
        total += share
        yield total, multiple
    yield float("inf"), phases[-1][1]
