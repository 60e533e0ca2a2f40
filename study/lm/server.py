"""`study lm serve`: a local, OpenAI-compatible model endpoint.

It answers the three routes the suggestion engine (and any OpenAI client) needs, in OpenAI's
wire format, so a study can point `suggestions.endpoint` at it, or at OpenAI, or at vLLM,
without other changes:

  POST /v1/completions        the prompt is continued, as with GPT-3 davinci in CoAuthor
  POST /v1/chat/completions   the conversation is formatted by the backend's chat template;
                              with "stream": true the reply comes as OpenAI streams it
                              (server-sent events, study.lm.streaming)
  GET  /v1/models             the one model this server runs

Every answer's `model` names the model that answered (`smollm2-135m-instruct`, `deterministic`),
whatever name the request asked for, as OpenAI answers "gpt-4o" with "gpt-4o-2024-08-06": a study
configured for another model then records what really wrote its texts (study.store.provenance).

Errors use OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, with 400 for bad
parameters and 404 for unknown routes, so clients report them as they would OpenAI's.
A request whose client has gone (it disconnected, or its read timeout has passed) stops
generating at once, so the next request does not wait behind it (study.lm.streaming).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException
from werkzeug.serving import make_server

from study.lm.backends import Backend, BackendLoading, BackendUnavailable, Cancelled, Generation
from study.lm.streaming import chat_stream, client_gone

MAX_N = 16
MAX_TOKENS = 4096
MAX_STOP = 4  # OpenAI's own limit on stop sequences
# A batch of prompts costs one generation per prompt and choice, on a CPU model that serves a
# study: more than this in one request would starve every writer waiting for suggestions.
MAX_PROMPTS = 16
MAX_CHOICES = 64  # prompts x n
MAX_MESSAGES = 256


class BadParameter(ValueError):
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def create_app(backend: Backend, *, logprobs: bool = True) -> Flask:
    """The endpoint's app. `logprobs=False` answers `"logprobs": null` whatever is asked, as
    most hosted chat endpoints do: a study's suggestions then have no probability (README,
    "Exporting data", unknown values)."""
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = 8 * 1024 * 1024  # a document is far smaller; refuse floods
    app.extensions["study.lm.backend"] = backend
    created = int(time.time())

    @app.get("/v1/models")
    def models():
        return jsonify(object="list", data=[_model_card(backend.model_id, created)])

    @app.get("/v1/models/<path:model>")
    def model(model: str):
        # Whatever name is asked for, the one model that would answer it.
        return jsonify(_model_card(backend.model_id, created))

    @app.post("/v1/completions")
    def completions():
        body = _body()
        prompts = _prompts(body.get("prompt", "<|endoftext|>"))
        decoding = _decoding(body, default_max_tokens=16)
        asked = _int(body, "logprobs", 0, 5, None)
        for name in ("echo", "stream"):
            if body.get(name):
                raise BadParameter(f"{name} is not supported by this server", name)
        if body.get("best_of") not in (None, 1, decoding["n"]):
            raise BadParameter("best_of is not supported by this server", "best_of")
        if len(prompts) * decoding["n"] > MAX_CHOICES:
            raise BadParameter(
                f"{len(prompts)} prompts x n={decoding['n']} asks for "
                f"{len(prompts) * decoding['n']} completions; this server makes at most "
                f"{MAX_CHOICES} per request. Send fewer prompts or a smaller n.",
                "n",
            )
        choices, completion_tokens, prompt_tokens = [], 0, 0
        gone = client_gone(request.environ, request.headers)
        for prompt in prompts:
            prompt_tokens += backend.count_tokens(prompt)
            for generation in backend.generate(prompt, **decoding, cancelled=gone):
                choices.append({
                    "index": len(choices),
                    "text": generation.text,
                    "logprobs": _completion_logprobs(generation, len(prompt))
                    if asked is not None and logprobs else None,
                    "finish_reason": generation.finish_reason,
                })
                completion_tokens += len(generation.token_logprobs)
        return jsonify(
            id=f"cmpl-{uuid.uuid4().hex}", object="text_completion", created=int(time.time()),
            model=backend.model_id, choices=choices, system_fingerprint=None,
            usage=_usage(prompt_tokens, completion_tokens),
        )

    @app.post("/v1/chat/completions")
    def chat_completions():
        body = _body()
        messages = _messages(body.get("messages"))
        # A null is "not given", as at OpenAI: a client sending every field keeps its max_tokens.
        max_tokens = body.get("max_completion_tokens")
        if max_tokens is None:
            max_tokens = body.get("max_tokens")
        decoding = _decoding({**body, "max_tokens": max_tokens}, default_max_tokens=256)
        want_logprobs = _bool(body, "logprobs") and logprobs
        top = _int(body, "top_logprobs", 0, 20, 0)
        prompt = backend.format_chat(messages)  # raises BackendLoading (503) before any byte
        streamed = _bool(body, "stream")
        gone = client_gone(request.environ, request.headers, streamed=streamed)
        if streamed:
            if decoding["n"] != 1:
                raise BadParameter("a streamed reply has one choice here: send n=1", "n")
            # Each chunk names the model that answers, as a reply not streamed does: the chat
            # page streams, and its study records the model a chunk names (study.store.provenance).
            lines = chat_stream(backend, prompt, decoding, backend.model_id, gone, _lstrip)
            return Response(lines, mimetype="text/event-stream", headers={"Cache-Control": "no-cache"})
        choices, completion_tokens = [], 0
        for index, generation in enumerate(backend.generate(prompt, **decoding, cancelled=gone)):
            # A chat reply is a new message: it does not start with the space a plain
            # continuation of "Assistant:" would.
            generation = _lstrip(generation)
            choices.append({
                "index": index,
                "message": {"role": "assistant", "content": generation.text, "refusal": None},
                "logprobs": _chat_logprobs(generation, top) if want_logprobs else None,
                "finish_reason": generation.finish_reason,
            })
            completion_tokens += len(generation.token_logprobs)
        return jsonify(
            id=f"chatcmpl-{uuid.uuid4().hex}", object="chat.completion", created=int(time.time()),
            model=backend.model_id, choices=choices, system_fingerprint=None,
            usage=_usage(backend.count_tokens(prompt), completion_tokens),
        )

    @app.errorhandler(BackendLoading)
    def loading(exc: BackendLoading):
        response, status = _error(str(exc), "server_error", 503, code="model_loading")
        response.headers["Retry-After"] = "5"  # clients ask again then (study.model_client.retry_after)
        return response, status

    @app.errorhandler(BackendUnavailable)
    def unavailable(exc: BackendUnavailable):
        # 500, not 503: clients ask again after a 503 (study.model_client.retry_after), and a
        # model that failed to load never comes; the ghost-text editor would say "getting
        # ready" for ever.
        return _error(str(exc), "server_error", 500, code="model_unavailable")

    @app.errorhandler(Cancelled)
    def cancelled(exc: Cancelled):
        # Nobody reads this answer; 499 is the status proxies log for a client that left.
        return _error(str(exc), "server_error", 499, code="client_gone")

    @app.errorhandler(BadParameter)
    def bad_parameter(exc: BadParameter):
        return _error(str(exc), "invalid_request_error", 400, param=exc.param)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        if exc.code in (404, 405):
            message = f"Invalid URL ({request.method} {request.path})"
            return _error(message, "invalid_request_error", exc.code)
        return _error(exc.description or exc.name, "invalid_request_error", exc.code or 400)

    @app.errorhandler(Exception)
    def server_error(exc: Exception):
        app.logger.exception("the model failed")
        return _error(f"the model failed: {type(exc).__name__}: {exc}", "server_error", 500)

    return app


def _error(message: str, kind: str, status: int, param: str | None = None, code=None):
    return jsonify(error={"message": message, "type": kind, "param": param, "code": code}), status


def _model_card(model_id: str, created: int) -> dict:
    return {"id": model_id, "object": "model", "created": created, "owned_by": "study"}


def _usage(prompt_tokens: int, completion_tokens: int) -> dict:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


# --- request parsing ---------------------------------------------------------------------------


def _body() -> dict:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise BadParameter("the request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise BadParameter("you must provide a model parameter", "model")
    return body


def _prompts(prompt: object) -> list[str]:
    # OpenAI also accepts a list of prompts (a batch) and token arrays; we take strings.
    if isinstance(prompt, str):
        return [prompt]
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        if len(prompt) > MAX_PROMPTS:
            raise BadParameter(
                f"prompt is a list of {len(prompt)} prompts; this server takes at most "
                f"{MAX_PROMPTS} per request. Split the batch over several requests.",
                "prompt",
            )
        return prompt
    raise BadParameter("prompt must be a string or a list of strings", "prompt")


def _messages(messages: object) -> list[dict]:
    if not isinstance(messages, list) or not messages:
        raise BadParameter("messages must be a non-empty list", "messages")
    if len(messages) > MAX_MESSAGES:
        raise BadParameter(
            f"messages holds {len(messages)} messages; this server takes at most {MAX_MESSAGES}",
            "messages",
        )
    result = []
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("system", "developer", "user", "assistant"):
            raise BadParameter(f"messages[{i}].role must be system, user or assistant", "messages")
        content = message.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            texts = [p.get("text", "") for p in content if isinstance(p, dict)]
            if not all(isinstance(text, str) for text in texts):
                raise BadParameter(f"messages[{i}].content: each part's text must be a string", "messages")
            content = "".join(texts)
        if not isinstance(content, str):
            raise BadParameter(f"messages[{i}].content must be a string", "messages")
        result.append({"role": "system" if role == "developer" else role, "content": content})
    return result


def _decoding(body: dict, default_max_tokens: int) -> dict:
    """The backend's keyword arguments, checked against OpenAI's ranges."""
    stop = body.get("stop")
    if stop is None:
        stop = []
    elif isinstance(stop, str):
        stop = [stop]
    elif not (isinstance(stop, list) and all(isinstance(s, str) for s in stop)):
        raise BadParameter("stop must be a string or a list of strings", "stop")
    if len(stop) > MAX_STOP:
        raise BadParameter(f"stop may hold at most {MAX_STOP} sequences", "stop")
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise BadParameter("seed must be an integer", "seed")
    return {
        "n": _int(body, "n", 1, MAX_N, 1),
        "max_tokens": _int(body, "max_tokens", 1, MAX_TOKENS, default_max_tokens),
        "temperature": _number(body, "temperature", 0.0, 2.0, 1.0),
        "top_p": _number(body, "top_p", 0.0, 1.0, 1.0),
        "presence_penalty": _number(body, "presence_penalty", -2.0, 2.0, 0.0),
        "frequency_penalty": _number(body, "frequency_penalty", -2.0, 2.0, 0.0),
        "stop": stop,
        "seed": seed,
    }


def _int(body: dict, name: str, low: int, high: int, default):
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadParameter(f"{name} must be an integer from {low} to {high}, got {value!r}", name)
    return value


def _number(body: dict, name: str, low: float, high: float, default: float) -> float:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise BadParameter(f"{name} must be a number from {low:g} to {high:g}, got {value!r}", name)
    return float(value)


def _bool(body: dict, name: str) -> bool:
    value = body.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadParameter(f"{name} must be true or false, got {value!r}", name)
    return value


# --- response shapes ---------------------------------------------------------------------------


def _completion_logprobs(generation: Generation, prompt_chars: int) -> dict:
    # text_offset counts from the start of the prompt, as OpenAI's legacy completions do.
    # top_logprobs lists only the sampled token: backends do not report alternatives.
    offsets, position = [], prompt_chars
    for token in generation.tokens:
        offsets.append(position)
        position += len(token)
    return {
        "tokens": list(generation.tokens),
        "token_logprobs": list(generation.token_logprobs),
        "top_logprobs": [{t: lp} for t, lp in zip(generation.tokens, generation.token_logprobs)],
        "text_offset": offsets,
    }


def _chat_logprobs(generation: Generation, top: int) -> dict:
    content = []
    for token, logprob in zip(generation.tokens, generation.token_logprobs):
        entry = {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}
        entry["top_logprobs"] = [dict(entry)] if top else []
        content.append(entry)
    return {"content": content, "refusal": None}


def _lstrip(generation: Generation) -> Generation:
    tokens = list(generation.tokens)
    while tokens and not tokens[0].strip():  # whole tokens of whitespace go, with their logprob
        tokens.pop(0)
    dropped = len(generation.tokens) - len(tokens)
    if tokens:
        tokens[0] = tokens[0].lstrip()
    return Generation(
        "".join(tokens), generation.token_logprobs[dropped:], generation.finish_reason, tokens
    )


# --- running -----------------------------------------------------------------------------------


def serve_in_thread(
    backend: Backend, host: str = "127.0.0.1", port: int = 0, *, logprobs: bool = True
) -> tuple[str, Callable[[], None]]:
    """Start the endpoint in a daemon thread; returns its base URL (".../v1") and a stop function.

    For tests and `study demo`; `study lm serve` uses waitress instead.
    """
    server = make_server(host, port, create_app(backend, logprobs=logprobs), threaded=True)
    # A short poll interval so that stop() returns at once rather than after 0.5 s.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="study-lm", daemon=True
    )
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return f"http://{host}:{server.port}/v1", stop
