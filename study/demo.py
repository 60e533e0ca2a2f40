"""`study demo`: a ready local study with a local model (SmolLM2, or a deterministic one when it
is not installed), served at once: no API key, no network.
"""

from __future__ import annotations

import logging
from pathlib import Path

import click

from study import config_texts
from study import paradigms as registry
from study.cli_options import Registered, load_study
from study.designs import DESIGNS
from study.new_study import design_alone, write_study_files
from study.serve import listenable
from study.status import database_shown

# How long the demo's local model may take to answer ([suggestions] timeout_seconds).
DEMO_TIMEOUT_SECONDS = 60
# Where a demo of a study folder that is not a demo's keeps its sessions (beside its study.db).
DEMO_DATABASE = "demo.db"


def _serve(app, host: str, port: int, threads: int, study) -> None:
    import waitress

    from study.server.page_security import http_address

    click.echo(f"Serving '{study.name}' on {http_address(host, port)}/  (database: {database_shown(study)})")
    click.echo(f"Participants start at {http_address(host, port)}/task?access_code=YOUR-CODE")
    from study.server.proxy import waitress_options

    waitress.serve(
        app, host=host, port=port, threads=threads, ident="study", _quiet=True,
        **waitress_options(app.config["STUDY_TRUSTED_PROXIES"]),
        # Each writer's browser keeps a connection open while writing. Past waitress's default
        # limit of 100, further connections wait until an open one closes, so the 101st
        # writer's events would stall however idle the server is.
        connection_limit=1000,
        # select() cannot watch file descriptors numbered above 1024; poll() can.
        asyncore_use_poll=True,
    )


# The chat demo on the embedded SmolLM2-135M, on a small CPU: a reply of at most 64 tokens that
# reads at most 2,000 characters (the system prompt, the document and the latest turns) takes
# about as long at the 8th exchange as at the 1st (scripts/bench_chat_demo.py prints the times).
@click.command()
@click.option("--dir", "directory", default="demo-study", show_default=True,
              type=click.Path(file_okay=False), help="Where the demo study lives.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--backend", default="auto", show_default=True,
              type=click.Choice(["auto", "smollm2", "deterministic"]),
              help="The local model behind the suggestions.")
@click.option("--min-seconds", default=60, show_default=True, type=int,
              help="Minimum writing time in the demo (the paper used 600).")
@click.option("--paradigm", default="writing", show_default=True,
              type=Registered((), registry.study_templates),
              help="writing: Tab suggestions (CoAuthor). chat: CollabLLM's chat document-creation "
              "study. proactive: MindCopilot's L1, L2 and L3 in rotation (ghost text after a "
              "pause); L1/L2/L3: that paradigm only.")
@click.option("--design", type=click.Choice(list(DESIGNS)), default=None,
              help="A published design's arms instead (study init --design; README, Paradigms as arms).")
def demo(directory: str, host: str, port: int, backend: str, min_seconds: int, paradigm: str,
         design: str | None) -> None:
    """Start a ready local study with a local model: no API key, no network."""
    from dataclasses import replace

    from study.lm import backends, smollm2
    from study.lm.server import serve_in_thread
    from study.server import create_app
    from study.server.page_security import http_address

    listenable(host, port)  # before the demo's model and folder are made
    design_alone(paradigm, design)
    levels = registry.study_templates()[paradigm].levels
    if design and directory == "demo-study":
        directory = f"demo-{design}-study"  # its own study.toml and database, as each paradigm's
    if paradigm != "writing" and directory == "demo-study":
        # Each paradigm's demo keeps its own study.toml and database: the writing demo's
        # sessions would otherwise sit beside conditions the other study does not have.
        directory = f"demo-{paradigm.lower()}-study"
    if backend == "auto":
        backend = "smollm2" if smollm2.available() else "deterministic"
    if backend == "smollm2":
        if not smollm2.available():
            raise click.ClickException(f"the smollm2 backend is not installed: {smollm2.LM_EXTRA_HINT}")
        # SmolLM2 takes about 20 s to load on a small CPU: serve at once, load in the background.
        model = backends.BackgroundLoaded(smollm2.SmolLM2Backend, smollm2.SmolLM2Backend.model_id, click.echo)
    else:
        model = backends.DeterministicBackend()
    # The model endpoint's per-request lines would drown the instructions printed below.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    base_url, _stop = serve_in_thread(model)
    write_study_files(
        Path(directory),
        replacements={
            "min_seconds = 600": f"min_seconds = {min_seconds}",
            config_texts.CONSENT_CONTACT_PLACEHOLDER: config_texts.DEMO_CONTACT,
            **registry.study_templates()[paradigm].demo,
        },
        paradigm=paradigm,
        design=design,
    )
    study = load_study(directory)
    if config_texts.DEMO_CONTACT not in study.consent_template:  # not a folder a demo made
        # A study of the researcher's own (`study init DIR`, whose advice is to try it here):
        # the demo's sessions would sit in its database among the participants' (counted by
        # the balanced rule, exported, and "started" before any preregistration record).
        demo_db = Path(directory).resolve() / DEMO_DATABASE
        study = replace(study, database_url=f"sqlite:///{demo_db}", consent_template=study.consent_template
                        .replace(config_texts.CONSENT_CONTACT_PLACEHOLDER, config_texts.DEMO_CONTACT))  # fmt: skip
        click.echo(f"The demo stores its sessions in {Path(directory) / DEMO_DATABASE}, not in the study's "
                   "own database: `study status`, `export` and `report` of the folder do not see them.")
    # The demo always talks to its own local model, whatever the folder's study.toml says, and
    # gives it the time a CPU needs: five 120-token suggestions (dhillon's next-paragraph arm)
    # took 45 s from SmolLM2 on a busy 2-core machine, past study.toml's 15 s, so every Tab of
    # that arm failed.
    timeout = max(study.suggestions.timeout_seconds, DEMO_TIMEOUT_SECONDS)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=base_url, timeout_seconds=timeout))
    if click.get_current_context().get_parameter_source("min_seconds") is not click.core.ParameterSource.DEFAULT:
        # A folder made before (an earlier demo, or `study init`: its ten minutes) keeps its
        # study.toml; a minimum time given on this command line is the one this demo enforces.
        study = replace(study, min_seconds=min_seconds)
    if levels:
        missing = set(levels) - {c.paradigm for c in study.conditions}
        if missing:
            raise click.ClickException(
                f"{directory} holds a study without {', '.join(sorted(missing))} conditions "
                f"(made by another `study demo --paradigm`); give this demo its own folder: --dir NEW_FOLDER"
            )
        click.echo(f"Paradigms: {', '.join(levels)} (README, Proactive co-writing): pause to see a suggestion, Tab accepts.")
    click.echo(f"Local model: {model.model_id} ({backend}) at {base_url}")
    if backend == "smollm2":
        click.echo("The model is loading in the background (about 20 s); this console says when it is ready.")
    click.echo(f"Open {http_address(host, port)}/task?access_code=demo in a browser to take part.")
    _serve(create_app(study), host, port, 16, study)
