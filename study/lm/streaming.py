"""The endpoint's streamed chat replies and its cancellation (study.lm.server).

A streamed reply is OpenAI's: `text/event-stream` lines `data: {chat.completion.chunk}`, the
first with the role, then one per piece of content, the last with the finish_reason, then
`data: [DONE]`. An error after the first byte cannot change the status any more, so it is
sent as one `data: {"error": {...}}` line, as OpenAI does, and the stream ends without [DONE].

Generation stops as soon as nobody will read it (`client_gone`): the client closed the
connection, or the time it said it would wait for an answer that is not streamed (the openai
SDK sends its read timeout as `X-Stainless-Read-Timeout`) has passed. The backends serve one
request at a time, so without this a reply abandoned by a timed-out client would make the next
request wait for it.
"""

from __future__ import annotations

import json
import queue
import select
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator

from study.lm.backends import Backend, Cancelled, Generation

TIMEOUT_HEADER = "X-Stainless-Read-Timeout"
# The client's timer starts before the request reaches this server, but a client thread kept off
# the CPU (the model uses every core) can start it late: the server waits a little longer, so the
# client has normally given up first and is not sent a 499 while it is still waiting.
DEADLINE_GRACE_SECONDS = 1.0


def client_gone(environ: dict, headers, *, streamed: bool = False) -> Callable[[], bool]:
    """A check that is True once the request's client cannot read the answer any more.

    The read timeout bounds a whole answer only when nothing is read before it ends; a client
    reading a stream waits that long between pieces, so a stream ends on a disconnect only."""
    deadline = None
    try:
        waited = float(headers.get(TIMEOUT_HEADER, "")) if not streamed else 0.0
        if waited > 0:
            deadline = time.monotonic() + waited + DEADLINE_GRACE_SECONDS
    except ValueError:
        pass
    waitress_check = environ.get("waitress.client_disconnected")  # with channel_request_lookahead
    connection = environ.get("werkzeug.socket")  # Werkzeug's own server (tests, `study demo`)

    def gone() -> bool:
        if deadline is not None and time.monotonic() > deadline:
            return True
        if waitress_check is not None:
            return bool(waitress_check())
        if connection is not None:
            return _closed(connection)
        return False

    return gone


def _closed(connection: socket.socket) -> bool:
    # A closed peer makes the socket readable with nothing to read; a pipelined next request
    # makes it readable with bytes, and is left where it is (MSG_PEEK). poll(), not select():
    # select() refuses a descriptor numbered 1,024 or more, and a server holding that many
    # files and connections would have taken every stream's client for gone.
    try:
        poller = select.poll()
        poller.register(connection, select.POLLIN)
        if not poller.poll(0):
            return False
        return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except (OSError, ValueError):
        return True


def chat_stream(
    backend: Backend, prompt: str, decoding: dict, model: str, gone: Callable[[], bool],
    finished: Callable[[Generation], Generation],
) -> Iterator[str]:
    """The SSE lines of one streamed chat reply. The model runs in a thread that hands over
    pieces; when the response is closed early (the client left) that thread is told to stop.

    `finished` turns the backend's Generation into the reply's (the leading space goes); the
    pieces sent are always a prefix of that final text, so text held back because it may
    start a stop sequence is sent with the last chunk instead of being taken back."""
    pieces: queue.Queue = queue.Queue()
    stopped = threading.Event()
    hold = max((len(s) for s in decoding["stop"]), default=1) - 1

    def run() -> None:
        try:
            generation = backend.generate(
                prompt, **decoding, on_token=lambda _index, piece: pieces.put(("piece", piece)),
                cancelled=lambda: stopped.is_set() or gone(),
            )[0]
            pieces.put(("done", finished(generation)))
        except Cancelled:
            pieces.put(("cancelled", None))
        except Exception as exc:  # noqa: BLE001 - reported in the stream, as OpenAI does
            pieces.put(("error", exc))

    chunk_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

    def chunk(delta: dict, finish_reason: str | None = None) -> str:
        body = {
            "id": chunk_id, "object": "chat.completion.chunk", "created": created, "model": model,
            "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }  # fmt: skip
        return f"data: {json.dumps(body)}\n\n"

    worker = threading.Thread(target=run, name="study-lm-stream", daemon=True)
    worker.start()
    try:
        yield chunk({"role": "assistant", "content": ""})
        raw, sent = "", ""
        while True:
            kind, value = pieces.get()
            if kind == "piece":
                raw += value
                # The pieces are the text before stop sequences are cut (study.lm.backends): a
                # whole stop sequence ends what may be sent, where it starts.
                cut = min((raw.find(s) for s in decoding["stop"] if s and s in raw), default=None)
                if cut is not None:
                    safe = raw[:cut].lstrip()
                else:
                    visible = raw.lstrip()
                    safe = visible[: max(0, len(visible) - hold)]
                if len(safe) > len(sent):
                    yield chunk({"content": safe[len(sent) :]})
                    sent = safe
            elif kind == "done":
                rest = value.text[len(sent) :] if value.text.startswith(sent) else ""
                yield chunk({"content": rest} if rest else {}, value.finish_reason)
                yield "data: [DONE]\n\n"
                return
            elif kind == "cancelled":
                return  # the client is gone: nobody reads what would follow
            else:
                error = {"message": f"the model failed: {type(value).__name__}: {value}",
                         "type": "server_error", "param": None, "code": None}  # fmt: skip
                yield f"data: {json.dumps({'error': error})}\n\n"
                return
    finally:
        stopped.set()  # the client left mid-stream (the server closed us): stop the model
