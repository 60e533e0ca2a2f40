"""`study simulate`: N simulated writers through a study's real server.

The server is the study's own (`create_app`, served over HTTP on a free local port) unless
`url` points at one already running for the same study folder. The writers' model is an
OpenAI-compatible endpoint (`llm_url`); without one, a local endpoint with the deterministic
backend of `study lm serve` is started, which exercises the whole path but writes canned
sentences. Each session is marked in the study database (`simulated_sessions`) as soon as it
exists, so nothing downstream can take it for a participant's. Within subjects each writer
writes one session per arm of their list, following the completion page's link to the next.
"""

from __future__ import annotations

import logging
import os
import random
import secrets
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from urllib.parse import urlsplit, urlunsplit

import httpx

from study import config as study_config
from study.config_types import GENRE_NOUNS
from study import paradigms
from study.simulate import participant as writing_path
from study.simulate.coverage import PromptDraws, closed_to_pilots, default_writers, left_out, rows_left_out, scope
from study.simulate.participant import SessionResult, SimulationError
from study.simulate.personas import BUILT_IN, DEFAULT_INTENT, Persona
from study.simulate.writer import Decisions
from study.store import create_tables, make_engine, reading, writing
from study.store import simulated as simulated_store
from study.store.engine import digest, shown_url

API_KEY_ENV = "STUDY_SIMULATOR_API_KEY"
WRITERS_MODEL_TIMEOUT = 60.0  # seconds for one answer of the writers' model


@dataclass
class Options:
    writers: int | None = None  # None: study.simulate.coverage.default_writers
    url: str | None = None  # a running server for this study; None: start one
    llm_url: str | None = None  # the writers' model endpoint; None: local deterministic
    llm_model: str = "deterministic"
    personas: Sequence[Persona] = BUILT_IN
    intent: str = DEFAULT_INTENT
    seed: int = 0
    suggestions_endpoint: str | None = None  # override study.toml's, for a server we start
    parallel: int = 4
    # Write into a database people have sessions in (e.g. simulated chat users beside a study's
    # people, for the report's comparison); refused without it (_serving_people).
    beside_people: bool = False


@dataclass
class RunSummary:
    sessions: list[SessionResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    decisions: Decisions = field(default_factory=Decisions)
    model: str = ""
    # The round the writers entered (None: the study has no rounds), and how many prompts the
    # study has in all: the coverage below is of that round's prompts and conditions.
    round: str | None = None
    study_prompts: int = 0
    # What the study's database still has no session of after the run (study.toml order).
    prompts_left_out: list[str] = field(default_factory=list)
    conditions_left_out: list[str] = field(default_factory=list)
    # Within subjects, the Latin-square rows no participant has written every arm of, per genre.
    rows_left_out: list[str] = field(default_factory=list)
    # Arms closed to new participants (assign = false), which no simulated writer is given.
    conditions_closed: list[str] = field(default_factory=list)


def simulate(directory: str, options: Options, echo: Callable[[str], None] = print) -> RunSummary:
    study = study_config.load(directory)
    # A paradigm whose sessions need their own participant (proactive ghost text, the chat
    # study's path) declares one; the others (Tab suggestions, no assistant, a chat arm, whose
    # panel the writing path's participant asks) take the writing path's.
    driver = paradigms.simulation(study) or writing_path
    make_writer = getattr(driver, "writer", writing_path.writer)
    describe = getattr(driver, "describe", _describe)
    # The servers started here would print a line per request, drowning the writers' progress.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    covered = scope(study)
    refusal = closed_to_pilots(study, covered) or _writers_model_refusal(options)
    if refusal:
        raise SimulationError(refusal)  # before any server, model or writer is started
    engine = make_engine(study.database_url)
    create_tables(engine)
    stops: list[Callable[[], None]] = []
    try:
        with reading(engine) as connection:
            refusal = None if options.beside_people else _serving_people(study, simulated_store.people_sessions(connection))
        if refusal:
            raise SimulationError(refusal)
        base_url = _server(study, options, stops)
        llm_url, model = _model(options, stops)
        summary = RunSummary(model=model, round=covered.round.name if covered.round else None,
                             study_prompts=len(study.prompts), conditions_closed=[c.name for c in covered.closed])  # fmt: skip
        client = _openai_client(llm_url)
        run_id = secrets.token_hex(3)
        lock = threading.Lock()
        draws = PromptDraws(study)
        writers = options.writers or default_writers(study, covered)
        if covered.round is not None:
            echo(f"Writers enter round '{covered.round.name}' (as a task link without ?round= "
                 f"does), which offers {len(covered.prompts)} of the study's {len(study.prompts)} prompt(s).")  # fmt: skip

        def one(number: int) -> None:
            persona = options.personas[number % len(options.personas)]
            rng = random.Random(f"{options.seed}-{number}")
            genres = {p.genre for p in covered.prompts}
            noun = getattr(driver, "NOUN", None) or " or ".join(sorted(GENRE_NOUNS.get(g, "text") for g in genres))
            writer = make_writer(persona, options.intent, noun, client=client, model=model,
                                 seed=rng.randrange(2**32), study=study)  # fmt: skip

            def mark(session_id: str) -> None:
                with writing(engine) as connection:
                    intent = getattr(driver, "INTENT", None) or writer.intent_template
                    simulated_store.mark(connection, session_id, persona=persona.description,
                                         intent=intent, model=f"{model} at {_safe(llm_url)}")  # fmt: skip

            def record(session_id: str, **values) -> None:
                with writing(engine) as connection:
                    simulated_store.record_conversation(connection, session_id, **values)

            def choose_prompt(codes: list[str]) -> str:
                code = draws.pick(codes, rng)
                writer.noun = GENRE_NOUNS.get(study.prompt(code).genre, "text")
                return code

            results, stopped = [], None
            with httpx.Client(base_url=base_url, timeout=60, follow_redirects=False) as http:
                participant = driver.participant(http, writer, f"sim-{run_id}-{number}", study=study, mark=mark,
                                                 choose_prompt=choose_prompt, record=record)  # fmt: skip
                try:
                    results.append(participant.run())
                    echo(describe(number, persona, results[-1], participant, writer))
                    # Within subjects the completion page links the arm the writer still owes
                    # (study.server.within), or another session once a genre's arms are all
                    # written and another genre's are owed: a writer takes every part, in their
                    # row's order, so the pilot exercises the design and its data pair each
                    # writer's arms. Between subjects a writer writes one session, as before. The
                    # bound stops a server that kept offering parts.
                    while (study.assignment == "within" and _offers_more(participant)
                           and len(results) < len(study.conditions)):  # fmt: skip
                        results.append(participant.run(another=True))
                        echo(describe(number, persona, results[-1], participant, writer))
                except (SimulationError, httpx.HTTPError) as error:
                    stopped = f"writer {number}: {error}"
                    echo(f"writer {number}: stopped: {error}")
            with lock:
                summary.sessions.extend(results)
                summary.errors.extend([stopped] if stopped else [])
                summary.decisions.by_model += writer.decisions.by_model
                summary.decisions.by_fallback += writer.decisions.by_fallback
                summary.decisions.failures += writer.decisions.failures

        with ThreadPoolExecutor(max_workers=max(1, min(options.parallel, writers))) as pool:
            try:
                list(pool.map(one, range(writers)))
            except KeyboardInterrupt:
                # Ctrl-C: map's writers not yet started are cancelled, and leaving this block
                # waits for those at work, who finish their sessions (each waits out the study's
                # minimum writing time), so none is left half-written. That wait was silent: a
                # researcher saw Ctrl-C do nothing for minutes and pressed it again, stopping the
                # server under the writers. Say what is happening and what a second Ctrl-C does.
                echo(f"Interrupted: no more writers start; those at work finish their sessions "
                     f"first (up to [session] min_seconds = {study.min_seconds} and their writing). "
                     "Press Ctrl-C again to stop them now: their sessions stay unfinished, marked "
                     "simulated, and out of `study export` and the pilot's coverage.")  # fmt: skip
                raise
        with reading(engine) as connection:
            summary.prompts_left_out, summary.conditions_left_out = left_out(study, covered, connection)
            summary.rows_left_out = rows_left_out(study, covered, connection)
        return summary
    finally:
        for stop in reversed(stops):
            stop()
        engine.dispose()


def _serving_people(study, people: int) -> str | None:
    """Why a pilot may not write into this study's database, with what to do; None if no person
    has a session there. A simulated writer takes the next prompt, arm and (within subjects)
    Latin-square row the balancing would have given a person, and its sessions sit among theirs
    in every count and table until someone removes them."""
    if not people:
        return None
    return (
        f"{study.directory / 'study.toml'}: its database ({shown_url(study.database_url)}) holds "
        f"{people} session(s) of people (not written by study simulate): simulated writers would "
        f"take the prompts and arms{' (and Latin-square rows)' if study.assignment == 'within' else ''} "
        "the balancing would give the next people, and their sessions would be in this study's data. Fix: pilot a copy of this folder without its "
        "study.db (and, with a [study] database URL, naming a database of its own); or, to put "
        "simulated sessions beside people's on purpose (as the report's comparison of simulated "
        "and human chats does), add --beside-people. See README, Simulated writers."
    )


def _offers_more(participant) -> bool:
    """Whether the completion page the participant last saw offered them another session."""
    return getattr(participant, "next_part", False) or getattr(participant, "another_session", False)


def _describe(number: int, persona: Persona, result: SessionResult, participant, writer) -> str:
    """The run's line for a writer on the writing path."""
    return (f"writer {number} ({persona.description[:40]}...): session {result.session_id}, "
            f"prompt {result.prompt_code}, {result.events} events, {result.queries} queries"
            + (f" ({result.failed_queries} failed)" if result.failed_queries else "")
            + f", {result.accepted} accepted")  # fmt: skip


def _server(study, options: Options, stops: list) -> str:
    if options.url:
        if options.suggestions_endpoint:
            raise SimulationError("--suggestions-endpoint applies only to a server that "
                                  "study simulate starts; drop --url or the endpoint")  # fmt: skip
        url = options.url.rstrip("/")
        try:
            health = httpx.get(f"{url}/healthz", timeout=10).json()
        except (httpx.HTTPError, ValueError) as error:
            raise SimulationError(f"{url}/healthz: no study server answers there ({error})") from None
        if health.get("study") != study.name or (health.get("id") or "") != study.id:
            raise SimulationError(
                f"{url} serves study '{health.get('study')}' ({health.get('id') or 'no id'}), not "
                f"'{study.name}' ({study.id or 'no id'}) from this folder; "
                "the simulator marks sessions in this folder's database, so they must match."
            )
        if health.get("database") != digest(study.database_url):
            # The same name and id, another database: a server of a copy of this folder (a copy
            # keeps the id), or `study demo --dir` (its demo.db). Its sessions would be stored
            # there unmarked, to be taken for people's, and the marks left here naming none.
            if health.get("database") is None:
                said, fix = "does not say which database it stores sessions in", (
                    "start it again if it was started before `study` was upgraded; ")
            else:
                said, fix = "stores its sessions in another database than this folder's", ""
            raise SimulationError(
                f"{url} serves study '{study.name}' but {said} ({shown_url(study.database_url)}, "
                "where the simulator marks its sessions), so no writer entered: a server of a copy "
                "of this folder, or `study demo --dir` (it keeps its sessions in demo.db), would "
                f"store them there unmarked. Fix: {fix}drop --url (study simulate then starts this "
                "folder's own server), or give the URL of `study serve` for this folder."
            )
        return url
    from werkzeug.serving import make_server

    from study.server import create_app

    if options.suggestions_endpoint:
        study = replace(study, suggestions=replace(study.suggestions,
                                                   endpoint=options.suggestions_endpoint))  # fmt: skip
    server = make_server("127.0.0.1", 0, create_app(study), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)

    stops.append(stop)
    return f"http://127.0.0.1:{server.port}"


def _model(options: Options, stops: list) -> tuple[str, str]:
    if options.llm_url:  # checked, and asked once, before any writer entered (_writers_model_refusal)
        return options.llm_url, options.llm_model
    from study.lm.backends import DeterministicBackend
    from study.lm.server import serve_in_thread

    base_url, stop = serve_in_thread(DeterministicBackend())
    stops.append(stop)
    return base_url, DeterministicBackend.model_id


def _writers_model_refusal(options: Options) -> str | None:
    """Why the writers' model at --llm-url cannot play the writers, with what to do; None if it
    answered one call (or is the local model this run starts). Asked before any writer enters:
    a run whose every call failed went on by the personas' habits alone and ended "finished"
    (exit 0), its sessions in the database, though the model the researcher named had played
    none of them. Only failures no later call can pass are refused (no endpoint there, the key,
    an unknown model or path, no answer in time); anything else is left to the run, which
    counts and prints its failures."""
    if not options.llm_url:
        return None
    _check_url(options.llm_url)
    import openai

    from study import model_client

    client = _openai_client(options.llm_url)
    try:
        client.with_options(max_retries=0).chat.completions.create(
            model=options.llm_model, messages=[{"role": "user", "content": "Say OK."}], max_tokens=1,
        )  # fmt: skip
        return None
    except (openai.APIConnectionError, openai.AuthenticationError, openai.PermissionDeniedError,
            openai.NotFoundError) as error:  # fmt: skip
        said = model_client.redact(model_client.describe(error, _SIMULATOR_KEY, options.llm_url), client.api_key)
        fix = _fix_for(error, options.llm_model)
    except (openai.APIStatusError, model_client.MalformedResponse, openai.APIResponseValidationError):
        return None
    return f"The writers' model did not answer a first call ({said}). No writer entered the study. Fix: {fix}."


def _fix_for(error: Exception, model: str) -> str:
    import openai

    if isinstance(error, openai.APITimeoutError):
        return ("use a faster model or endpoint (every writer asks it a hundred times or so), or "
                "run without --llm-url: a local deterministic model then plays the writers")  # fmt: skip
    if isinstance(error, openai.AuthenticationError):
        return f"set ${API_KEY_ENV} to a key this endpoint accepts"
    if isinstance(error, openai.PermissionDeniedError):
        return f"set ${API_KEY_ENV} to a key allowed to use model '{model}'"
    if isinstance(error, openai.NotFoundError):
        return (f"--llm-model must name a model the endpoint serves (got '{model}'), and --llm-url "
                "be its base URL, usually ending in /v1")  # fmt: skip
    return ("start the endpoint, or correct --llm-url; without --llm-url a local deterministic "
            "model plays the writers")  # fmt: skip


# model_client.describe's settings, for the writers' model: its key variable and time limit.
_SIMULATOR_KEY = SimpleNamespace(api_key_env=API_KEY_ENV, timeout_seconds=WRITERS_MODEL_TIMEOUT,
                                 api_key=lambda: os.environ.get(API_KEY_ENV) or "none")  # fmt: skip


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        # Refused before any writer enters: a session made before the first model call
        # failed would stay in the database unmarked, to be taken for a person's.
        raise SimulationError(f"--llm-url {url}: not an http(s) URL. Fix: give the "
                              f"endpoint's base URL, e.g. http://{url.split('://')[-1]}")  # fmt: skip


def _safe(url: str) -> str:
    """The URL without any user:password part, for the database."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")))


def _openai_client(base_url: str):
    # The key is read from the environment only: never a command-line argument (shell history,
    # process lists) and never printed. Imported here: `openai` is slow to import for commands
    # that never call a model.
    from study import model_client

    return model_client.client(base_url, os.environ.get(API_KEY_ENV) or "none", WRITERS_MODEL_TIMEOUT, max_retries=1)


