"""`study serve`: the study served to participants on every core (study.server.serving), once
its folder, its consent page and its address are fit for them.
"""

from __future__ import annotations

import click

from study import config_texts
from study.cli_options import load_study
from study.plan import launch as plan_launch
from study.status import database_shown


def listenable(host: str, port: int) -> None:
    """Refuse, in words, an address another program already listens on: the servers' own error
    is a traceback (granian's ends in a Rust backtrace). Port 5000 is often taken, e.g. by
    macOS's AirPlay Receiver, or by a `study serve` or `study demo` still running."""
    import socket

    from study.server.page_security import http_address

    try:
        family, kind, _protocol, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind) as probe:
            # As the servers bind: a port left in TIME_WAIT by a server just stopped is free.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        raise click.ClickException(
            f"cannot listen on {http_address(host, port)}: {error.strerror or error}. Fix: choose "
            "another --port (or --host), or stop the program listening there."
        ) from None


def announcer(host: str, lines):
    """An emulator's `announce(port)`: echoes `lines(url)` once it listens, the URL with the
    port it took (`--port 0`: any free one)."""

    def announce(listening: int) -> None:
        for line in lines(f"http://{host}:{listening}"):
            click.echo(line)

    return announce


def _ip_address(host: str) -> None:
    """Refuse, with the address to give, a --host that names a machine: granian (`study serve`)
    listens on an IP address only, and a name ended in its traceback after "Serving ..."."""
    import ipaddress
    import socket

    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    found = {info[4][0] for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    address = sorted(found, key=lambda each: ":" in each)[0]  # IPv4 first, as browsers try it
    raise click.ClickException(
        f"--host {host}: study serve listens on an IP address, not a name. Fix: --host {address} "
        f"(what {host} names here), or --host 0.0.0.0 to listen on every address of this machine."
    )


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="IP address to listen on.")
# Not 0: the kernel would pick the port, and the address printed for participants would be wrong.
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=None, type=click.IntRange(min=1),
              help="Worker processes (default: one per core).")
@click.option("--threads", default=16, show_default=True, type=click.IntRange(min=1),
              help="Request threads per worker process, beside one per model call it may hold "
                   "([suggestions] concurrent_requests).")
@click.option("--writers", default=1000, show_default=True, type=click.IntRange(min=1),
              help="Open connections (writers' browsers) each worker process holds.")
def serve(directory: str, host: str, port: int, workers: int | None, threads: int, writers: int) -> None:
    """Serve the study in DIRECTORY (storing everything in its database), on every core."""
    from study.config import ConfigError
    from study.server import create_app, serving, stages
    from study.server.page_security import http_address
    from study.server.activity import ActivityConfigError
    from study.server.database_trouble import unwritable_at_start
    from study.server.limit_store import LimitStoreUnavailable
    from study.server.limits import from_study as limits_from_study
    from study.server.proxy import ProxyConfigError
    from study.store.engine import connections_short, make_engine

    study = load_study(directory)
    unfinished = config_texts.unfinished_consent(study) or config_texts.demo_consent(study)
    if unfinished:
        raise click.ClickException(f"{directory}: not serving participants yet: {unfinished}")
    workers = workers or serving.default_workers()
    refused = serving.workers_refused(workers)
    if refused:
        raise click.ClickException(refused)
    listenable(host, port)
    _ip_address(host)
    # Every thread a worker runs may hold a database connection: its --threads and one for each
    # model call it may hold.
    model_calls = serving.model_call_threads(limits_from_study(study))
    if (unwritable := unwritable_at_start(study.database_url)) is not None:
        raise click.ClickException(unwritable)
    try:
        app = create_app(study, engine=make_engine(study.database_url, threads=threads + model_calls))
    except (ProxyConfigError, LimitStoreUnavailable, ActivityConfigError, ConfigError) as error:
        raise click.ClickException(str(error)) from None
    lost = stages.lost_names(study, app.extensions["study.engine"])
    if lost:
        raise click.ClickException(f"{directory}: not serving participants: {lost}")
    # A warning only: a study already running must start again after a crash or a restart.
    if (note := plan_launch.note(study, app.extensions["study.engine"], directory, "serving participants")) is not None:
        click.echo(note, err=True)
    if (unusable := _model_unusable(study)) is not None:
        click.echo(unusable, err=True)
    click.echo(f"Serving '{study.name}' on {http_address(host, port)}/  (database: {database_shown(study)})")
    click.echo(f"{workers} worker processes x {threads} threads (and {model_calls} for model calls),"
               f" up to {writers} open connections each")
    if (shared := limits_shared(app)) is not None:
        click.echo(shared)
    for line in entry_lines(study, http_address(host, port)):
        click.echo(line)
    for short in (serving.files_short(writers, threads + model_calls),
                  connections_short(app.extensions["study.engine"], workers, threads + model_calls)):
        if short:
            click.echo(short, err=True)
    serving.run(app, host=host, port=port, workers=workers, threads=threads, writers=writers)


def _model_unusable(study) -> str | None:
    """A warning when no assistant of the study can answer, before a participant finds out;
    only a warning: an endpoint may start after the study does, and a study that crashed must
    start again."""
    from study import control_arm, model_client

    if all(control_arm.is_control(condition) for condition in study.conditions):
        return None
    found = model_client.unusable(study.suggestions)
    if found is None:
        return None
    problem, fix = found
    return (f"Warning: {study.directory / 'study.toml'}: {problem}: every suggestion and assistant "
            f"reply will fail (writers read \"not available right now\"). Fix: {fix}.")


def limits_shared(app) -> str | None:
    """The start line naming the Redis that STUDY_REDIS_URL points at (password hidden), or None
    without it: an operator checking a launch of several hosts sees that they count new sessions
    per address in one place (study.server.limit_store), not each in its own."""
    from study.server.limit_store import REDIS_URL_VARIABLE, RedisStore

    store = app.extensions["study.limit_store"]
    if not isinstance(store, RedisStore):
        return None
    return (f"New sessions per address are counted in Redis at {store.address} ({REDIS_URL_VARIABLE}), "
            f"one count for every server and host counting there")


def entry_lines(study, address: str) -> list[str]:
    """Where participants start, as `study serve` says it: with an access code, and through
    each recruitment provider study.toml sets up ([mturk], [prolific]), whose link carries the
    provider's own parameters rather than a code (study.server.participant.task); with a
    [judging] section, where judges start too."""
    from study import providers

    codes = study.raw.get("session", {}).get("access_codes_file")
    lines = [f"Participants start at {address}/task?access_code=YOUR-CODE"
             + (f" (one of {codes}'s codes)" if codes else " (any code you hand out)")]  # fmt: skip
    for provider in providers.registered():
        if provider.name in study.raw:
            lines.append(f"{provider.title} participants need no code: they come through the link "
                         f"`study {provider.name}` gives {provider.title} ({address}/task with "
                         f"{provider.title}'s parameters; README, {provider.title})")  # fmt: skip
    if "judging" in study.raw:
        # The judges' own entry (study.judging.web), which the writers' lines above do not name.
        lines.append(f"Judges (once `study judging build` has made the round) start at {address}/judge?access_code=YOUR-CODE"
                     + (f" (one of {codes}'s codes)" if codes else " (any code you hand out)")
                     + "; MTurk judges through the HITs `study judging post` posts")  # fmt: skip
    return lines

