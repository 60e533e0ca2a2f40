"""`study lm`: run a local language model for studies that should not depend on a paid API."""

from __future__ import annotations

import time

import click

from study.lm import smollm2
from study.lm.backends import BackendUnavailable
from study.lm.choose import load_backend


@click.group("lm")
def lm() -> None:
    """Run a local, OpenAI-compatible model endpoint for suggestions."""


@lm.command("serve")
@click.option(
    "--backend",
    type=click.Choice(["auto", "smollm2", "deterministic", "judge"]),
    default="auto",
    show_default=True,
    help="smollm2: SmolLM2-135M-Instruct on the CPU (needs the `lm` extra). "
    "deterministic: canned sentences, no model, for tests and demos. "
    "judge: the deterministic HAR/KED/ITR judge (study.lm.judge_backend). "
    "auto: smollm2 when installed, else deterministic.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8001, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on."
)
@click.option(
    "--delay",
    default=0.0,
    show_default=True,
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help="Answer every request this much later, to try out suggestion timeouts.",
)
@click.option(
    "--no-logprobs", "no_logprobs", is_flag=True,
    help="Answer without log-probabilities, as most hosted chat endpoints do (suggestions then "
    "have no probability: exports write null).",
)  # fmt: skip
def serve(backend: str, host: str, port: int, delay: float, no_logprobs: bool) -> None:
    """Serve /v1/completions, /v1/chat/completions and /v1/models.

    Point a study at it with `endpoint = "http://HOST:PORT/v1"` under [suggestions] in
    study.toml; the model name in [[conditions]] can be anything.
    """
    import waitress

    from study.lm.server import create_app
    from study.serve import listenable

    # Before the model loads (20 s for SmolLM2): waitress's own refusal is a traceback, and it
    # came only once the wait was over.
    listenable(host, port)
    if backend == "auto":
        backend = "smollm2" if smollm2.available() else "deterministic"
        reason = "the lm extra is installed" if backend == "smollm2" else (
            "the lm extra is not installed; `pip install -e '.[lm]'` for a real model"
        )
        click.echo(f"backend: {backend} ({reason})")
    if backend == "smollm2":
        click.echo("loading SmolLM2-135M-Instruct (about 20 s)...")
    started = time.monotonic()
    try:
        model = load_backend(backend, delay=delay)
    except BackendUnavailable as exc:
        raise click.ClickException(str(exc)) from None
    if backend == "smollm2":
        click.echo(f"loaded in {time.monotonic() - started:.0f} s")
    click.echo(f"serving model '{model.model_id}' at http://{host}:{port}/v1 (Ctrl-C to stop)")
    # waitress rather than Flask's development server: it is a real multi-threaded server,
    # and the backends make requests take turns where they must.
    # channel_request_lookahead lets waitress notice a client that disconnected mid-request,
    # which the endpoint asks so it stops generating for it (study.lm.streaming).
    waitress.serve(
        create_app(model, logprobs=not no_logprobs), host=host, port=port, threads=4,
        channel_request_lookahead=1, _quiet=True,
    )
