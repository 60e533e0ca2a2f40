"""A model endpoint for scripts/bench_ingest.py: OpenAI's completions and chat completions wire
format, answered after a fixed delay and nothing else.

    python scripts/bench_endpoint.py PORT DELAY_SECONDS

asyncio, one process: on a 2-core machine it takes almost no CPU from the server being measured
(`study lm serve` generates text, and its threads would), so every call takes DELAY and the
server's own overhead is what remains of a writer's wait.
"""

from __future__ import annotations

import argparse
import asyncio
import json

# Each of a request's outputs differs from the others, and runs past its first sentence into the
# next, cut where `max_tokens` would cut it: as a model's five outputs at CoAuthor's settings
# mostly are, so the server splits and keeps every one (study.suggest.postprocess).
WORDS = [" the", " night", " was", " {}", " and", " she", " walked", " home", ".", " The", " harbour"]
ADJECTIVES = ("quiet", "cold", "dark", "long", "still", "warm", "clear", "late")


def tokens(index: int) -> list[str]:
    return [word.format(ADJECTIVES[index % len(ADJECTIVES)]) for word in WORDS]


def answer(path: str, request: dict) -> dict:
    n = int(request.get("n") or 1)
    if path.endswith("/chat/completions"):
        choices = []
        for i in range(n):
            words = tokens(i)
            content = [{"token": w, "logprob": -0.5, "bytes": None, "top_logprobs": []} for w in words]
            choices.append({"index": i, "message": {"role": "assistant", "content": "".join(words).strip()},
                            "logprobs": {"content": content}, "finish_reason": "length"})
        kind = "chat.completion"
    else:
        choices = []
        for i in range(n):
            words = tokens(i)
            logprobs = {"tokens": words, "token_logprobs": [-0.5] * len(words), "top_logprobs": None,
                        "text_offset": []}
            choices.append({"index": i, "text": "".join(words), "finish_reason": "length", "logprobs": logprobs})
        kind = "text_completion"
    return {"id": "bench", "object": kind, "created": 0, "model": request.get("model", "bench"),
            "choices": choices, "usage": {"prompt_tokens": 1, "completion_tokens": 9, "total_tokens": 10}}


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    try:
        while True:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            method, path = head[0].split(" ")[:2]
            length = next((int(line.split(":", 1)[1]) for line in head
                           if line.lower().startswith("content-length:")), 0)
            body = json.loads(await reader.readexactly(length)) if length else {}
            if method == "GET":
                reply = {"object": "list", "data": [{"id": "bench", "object": "model"}]}
            else:
                await asyncio.sleep(delay)
                reply = answer(path, body)
            data = json.dumps(reply).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(data)).encode() + b"\r\n\r\n" + data)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


async def main(port: int, delay: float) -> None:
    server = await asyncio.start_server(lambda r, w: serve(r, w, delay), "127.0.0.1", port, backlog=4096)
    await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("port", type=int)
    parser.add_argument("delay_seconds", type=float)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.port, arguments.delay_seconds))
