"""`study lm serve` streams chat replies as OpenAI does and stops generating for a client that
has gone (study.lm.streaming); driven with the official `openai` client."""

from __future__ import annotations

import os
import queue
import resource
import socket
import time

import openai
import pytest

from study.lm.backends import Cancelled, DeterministicBackend, finish
from study.lm.server import serve_in_thread
from study.lm.streaming import client_gone

MESSAGES = [{"role": "user", "content": "Help me open a story about a lighthouse."}]


class Watched(DeterministicBackend):
    """The deterministic model, slow, telling the test how each generation ended."""

    def __init__(self, delay: float) -> None:
        super().__init__(delay=delay)
        self.ended: queue.Queue[str] = queue.Queue()

    def generate(self, prompt: str, **kwargs):
        try:
            generations = super().generate(prompt, **kwargs)
        except Cancelled:
            self.ended.put("cancelled")
            raise
        self.ended.put("finished")
        return generations


class Trickling(DeterministicBackend):
    """The deterministic model writing a token every 0.2 s, as a slow CPU model does."""

    def generate(self, prompt: str, on_token=None, **kwargs):
        def slowly(index: int, piece: str) -> None:
            time.sleep(0.2)
            on_token(index, piece)

        return super().generate(prompt, on_token=slowly if on_token else None, **kwargs)


class StreamsBeforeCutting(DeterministicBackend):
    """The deterministic model handing on each token before it looks for stop sequences, as
    SmolLM2 does (the pieces join to the text before stop sequences are cut: study.lm.backends)."""

    def generate(self, prompt: str, *, stop=(), on_token=None, **kwargs):
        whole = super().generate(prompt, **kwargs)
        for index, generation in enumerate(whole):
            for token in generation.tokens:
                if on_token is not None:
                    on_token(index, token)
        return [finish(g.tokens, g.token_logprobs, stop, g.finish_reason == "stop") for g in whole]


@pytest.fixture(scope="module")
def client():
    url, stop = serve_in_thread(DeterministicBackend())
    yield openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=10)
    stop()


def test_a_streamed_reply_is_the_reply_in_pieces(client) -> None:
    whole = client.chat.completions.create(model="m", messages=MESSAGES, seed=3)
    chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, seed=3, stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.object == "chat.completion.chunk" and c.model == "deterministic" for c in chunks)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert len(pieces) > 3  # written as it comes, not in one block
    assert "".join(pieces) == whole.choices[0].message.content
    assert [c.choices[0].finish_reason for c in chunks][-1] == whole.choices[0].finish_reason
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])


def test_a_stream_never_sends_text_past_a_stop_sequence(client) -> None:
    whole = client.chat.completions.create(model="m", messages=MESSAGES, seed=3, stop=["."])
    chunks = client.chat.completions.create(model="m", messages=MESSAGES, seed=3, stop=["."], stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == whole.choices[0].message.content and "." not in text


def test_a_stream_from_a_model_that_streams_before_cutting_sends_nothing_past_a_stop_sequence() -> None:
    url, stop = serve_in_thread(StreamsBeforeCutting())
    try:
        reader = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=10)
        whole = reader.chat.completions.create(model="m", messages=MESSAGES, seed=3, stop=["."])
        chunks = list(reader.chat.completions.create(model="m", messages=MESSAGES, seed=3, stop=["."], stream=True))
    finally:
        stop()
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert "." not in text
    assert text == whole.choices[0].message.content
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_a_stream_with_several_choices_is_refused_with_the_fix(client) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="m", messages=MESSAGES, n=2, stream=True)
    assert refused.value.body["param"] == "n" and "n=1" in refused.value.body["message"]


def test_a_client_that_times_out_stops_the_generation() -> None:
    backend = Watched(delay=60)
    url, stop = serve_in_thread(backend)
    try:
        impatient = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=1)
        with pytest.raises(openai.APITimeoutError):
            impatient.chat.completions.create(model="m", messages=MESSAGES)
        # Without the check the model would go on for its full minute.
        assert backend.ended.get(timeout=20) == "cancelled"
    finally:
        stop()


def test_a_client_that_leaves_a_stream_stops_the_generation() -> None:
    backend = Watched(delay=60)
    url, stop = serve_in_thread(backend)
    try:
        patient = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=120)
        stream = patient.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        first = next(iter(stream))
        assert first.choices[0].delta.role == "assistant"
        stream.close()  # the reader leaves while the model is still writing
        assert backend.ended.get(timeout=20) == "cancelled"
    finally:
        stop()


def test_a_stream_longer_than_the_read_timeout_is_finished_while_pieces_keep_coming() -> None:
    url, stop = serve_in_thread(Trickling())
    try:
        reader = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=2)
        chunks = list(reader.chat.completions.create(model="m", messages=MESSAGES, seed=3, stream=True))
        whole = reader.with_options(timeout=60).chat.completions.create(model="m", messages=MESSAGES, seed=3)
    finally:
        stop()
    assert chunks[-1].choices[0].finish_reason == "stop"  # not cut at the 2 s read timeout
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == whole.choices[0].message.content


HIGH_DESCRIPTOR = 1500


def test_a_client_on_a_descriptor_past_1024_is_not_taken_for_gone() -> None:
    """A server holding over a thousand files and connections still streams: the check that the
    client left reads the socket itself, whatever its number (select() refused those past 1,024,
    and every stream was then cut as if its client had left)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft <= HIGH_DESCRIPTOR:
        if hard != resource.RLIM_INFINITY and hard <= HIGH_DESCRIPTOR:
            pytest.skip(f"this process may open at most {hard} files")
        resource.setrlimit(resource.RLIMIT_NOFILE, (HIGH_DESCRIPTOR + 1, hard))
    ours, theirs = socket.socketpair()
    os.dup2(ours.fileno(), HIGH_DESCRIPTOR)
    high = socket.socket(fileno=HIGH_DESCRIPTOR)
    try:
        gone = client_gone({"werkzeug.socket": high}, {}, streamed=True)
        assert gone() is False
        theirs.close()
        assert gone() is True
    finally:
        for each in (high, ours, theirs):
            each.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

