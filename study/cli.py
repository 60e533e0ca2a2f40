"""The `study` command: one subcommand per task a researcher or curator does."""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path

import click

from study import config as study_config
from study import config_texts
from study import paradigms as registry
from study.paths import templates_dir
from study.status import database_shown


def _load(directory: str) -> study_config.Study:
    try:
        return study_config.load(directory)
    except study_config.ConfigError as error:
        raise click.ClickException(str(error)) from None


class Registered(click.Choice):
    """A choice among what the registered paradigms declare (study.paradigms), read when the
    command runs: a paradigm registered after this module was imported is offered too."""

    def __init__(self, fixed: tuple[str, ...], declared) -> None:
        self.fixed, self.declared = fixed, declared
        super().__init__(fixed)

    @property
    def choices(self) -> list[str]:
        return [*self.fixed, *(c for c in self.declared() if c not in self.fixed)]

    @choices.setter
    def choices(self, _value) -> None:
        pass  # click.Choice sets them once; here they are read from the registry each time


# Each command group is imported when it runs, or when `study --help` lists them all: imported
# up front (the report's matplotlib, MTurk's boto3, judging's pandas) they took 2.4 s of every
# command's start on a slow host, `study serve` and its restart after a crash included.
# name: (module, the group or command, commands of other modules joined to it)
GROUPS = {
    "backup": ("study.backup", "backup", ()),
    "copy-database": ("study.copy_database", "copy_database", ()),
    "curate": ("study.curation.cli", "curate", ()),
    # A judging round's judges are recruited on MTurk: its post and review join `study judging`.
    "judging": ("study.judging.cli", "judging", ("study.mturk.cli.judging:post", "study.mturk.cli.judging:review")),
    "keys": ("study.release.cli", "keys", ()),
    "lm": ("study.lm.cli", "lm", ()),
    "mturk": ("study.mturk.cli", "mturk", ()),
    "preregister": ("study.plan.cli", "preregister", ()),
    "prolific": ("study.prolific.cli", "prolific", ()),
    "qualify": ("study.review.cli", "qualify", ()),
    "release": ("study.release.cli", "release", ()),
    "report": ("study.report.cli", "report", ()),
    "review": ("study.review.cli", "review", ()),
    "reviewers": ("study.review.cli", "reviewers", ()),
    "simulate": ("study.simulate.cli", "simulate", ()),
    "status": ("study.status", "status", ()),
    "withdraw": ("study.release.cli", "withdraw", ()),
}


def _imported(path: str) -> click.Command:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


class Commands(click.Group):
    """`study`: its own commands, and the groups of GROUPS, imported when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *GROUPS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands:
            # A name that is no command: every group is imported, since click suggests the
            # nearest name among the commands it has ("Did you mean 'curate'?").
            for wanted in [name] if name in GROUPS else [n for n in GROUPS if n not in self.commands]:
                module, attribute, joined = GROUPS[wanted]
                group = _imported(f"{module}:{attribute}")
                for path in joined:
                    group.add_command(_imported(path))
                self.add_command(group, wanted)
        return self.commands.get(name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except Exception as error:
            # Any command's first use of a database that cannot be opened (study.store.engine
            # names it): in words, not the driver's traceback.
            database = getattr(error, "unopened_database", None)
            if database is None:
                raise
            reason = " ".join(str(getattr(error, "orig", error)).split())
            reason += "" if reason.endswith((".", "?")) else "."
            fix = getattr(error, "unopened_fix", None) or (
                "Fix: start its server, or correct [study] database in study.toml (empty: study.db "
                "beside it); a damaged study.db: restore it from a backup."
            )
            raise click.ClickException(f"cannot open the study's database {database}: {reason} {fix}") from None


@click.group(cls=Commands)
@click.version_option(package_name="study")
def main() -> None:
    """Run crowdsourced human-AI writing studies and publish their datasets."""


@main.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--paradigm", type=Registered((), registry.study_templates), default="writing",
              show_default=True, help="; ".join(f"{choice}: {template.help}" for choice, template
                                                in registry.study_templates().items()) + ".")
@click.option("--design", type=click.Choice(["jakesch", "dhillon", "realhumaneval"]), default=None,
              help="A writing study with these arms (study.designs): jakesch: control vs two "
              "opinionated assistants; dhillon: within subjects, no AI / next sentence / next "
              "paragraph; realhumaneval: autocomplete vs chat vs no model.")
def init(directory: str, paradigm: str, design: str | None) -> None:
    """Create DIRECTORY/study.toml: a ready CoAuthor study (20 prompts, 4 conditions), or with
    --paradigm chat a CollabLLM chat study (3 document types, 3 anonymous assistants), or with
    --paradigm proactive (L1, L2, L3) a MindCopilot study, one condition per paradigm and genre,
    or with --design one of three published designs' arms (try it at once: study demo --dir
    DIRECTORY)."""
    target = Path(directory)
    if (target / study_config.CONFIG_NAME).exists():
        raise click.ClickException(
            f"{target / study_config.CONFIG_NAME} already exists; choose another folder "
            "or delete it first."
        )
    _design_alone(paradigm, design)
    write_study_files(target, paradigm=paradigm, design=design)
    click.echo(f"Created {target / study_config.CONFIG_NAME}. Try it at once: study demo --dir {target}")
    # `study serve` refuses the placeholder (study.config_texts.unfinished_consent): say so here, where
    # the researcher reads what to do next.
    click.echo(f"Before participants: put the protocol director's name and how to reach them in "
               f"{target / 'consent.html'} (in place of its [REPLACE ...] line), point [suggestions] "
               f"in study.toml at your model, then serve it with: study serve {target}")


def _design_alone(paradigm: str, design: str | None) -> None:
    """--design writes the design's arms in place of study.toml's conditions: a paradigm's own
    path (a chat study) has no writing arms, and a paradigm's conditions (MindCopilot's L1-L3)
    would be replaced, so either asked for beside it is refused rather than dropped."""
    template = registry.study_templates()[paradigm]
    if design and (not template.designs or template.levels):
        raise click.ClickException(f"--design makes a writing study (its arms may include chat); leave out --paradigm {paradigm}.")


def write_study_files(
    target: Path, *, replacements: dict[str, str] | None = None, paradigm: str = "writing",
    paradigms: tuple[str, ...] | None = None, design: str | None = None,
) -> None:
    """The files of a new study: templates/init/, with the files of the `paradigm` choice's
    template (study.paradigms.base.StudyTemplate) in place of theirs, e.g. a chat study's
    study.toml and instructions (README, "Chat study"). With condition paradigms (the
    template's `levels`, or `paradigms`: MindCopilot's L1-L3), study.toml's conditions are one
    per paradigm and genre, so every command run on the folder later (status, export, report,
    release) sees them."""
    template = registry.study_templates()[paradigm]
    levels = paradigms or template.levels
    from study.store.permissions import private_folder

    # 0700: the folder receives the database (worker ids, every keystroke) and the exports.
    private_folder(target)
    sources = {p.name: p for p in (templates_dir() / "init").iterdir()}
    if template.overlay:
        # An absolute path (a paradigm's own folder) stays itself under `/`.
        sources.update({p.name: p for p in (templates_dir() / template.overlay).iterdir()})
    for source in sorted(sources.values(), key=lambda p: p.name):
        destination = target / source.name
        if destination.exists():
            continue
        text = source.read_text(encoding="utf-8")
        if source.name == study_config.CONFIG_NAME:  # every study gets its own id
            text = text.replace('id = ""', f'id = "{study_config.new_study_id()}"', 1)
        for old, new in (replacements or {}).items():
            text = text.replace(old, new)
        if levels and source.name == study_config.CONFIG_NAME:
            from study.designs import paradigm_toml

            text = paradigm_toml(text, levels)
        if design and source.name == study_config.CONFIG_NAME:
            from study.designs import DESIGNS, design_toml

            text = design_toml(text, DESIGNS[design])
        destination.write_text(text, encoding="utf-8")


def _listenable(host: str, port: int) -> None:
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


@main.command()
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
    from study.server import create_app, serving, stages
    from study.server.page_security import http_address
    from study.server.activity import ActivityConfigError
    from study.server.limit_store import LimitStoreUnavailable
    from study.server.limits import from_study as limits_from_study
    from study.server.proxy import ProxyConfigError
    from study.store.engine import make_engine

    study = _load(directory)
    unfinished = config_texts.unfinished_consent(study)
    if unfinished:
        raise click.ClickException(f"{directory}: not serving participants yet: {unfinished}")
    workers = workers or serving.default_workers()
    refused = serving.workers_refused(workers)
    if refused:
        raise click.ClickException(refused)
    _listenable(host, port)
    _ip_address(host)
    # Every thread a worker runs may hold a database connection: its --threads and one for each
    # model call it may hold.
    model_calls = serving.model_call_threads(limits_from_study(study))
    try:
        app = create_app(study, engine=make_engine(study.database_url, threads=threads + model_calls))
    except (ProxyConfigError, LimitStoreUnavailable, ActivityConfigError) as error:
        raise click.ClickException(str(error)) from None
    lost = stages.lost_names(study, app.extensions["study.engine"])
    if lost:
        raise click.ClickException(f"{directory}: not serving participants: {lost}")
    click.echo(f"Serving '{study.name}' on {http_address(host, port)}/  (database: {database_shown(study)})")
    click.echo(f"{workers} worker processes x {threads} threads (and {model_calls} for model calls),"
               f" up to {writers} open connections each")
    click.echo(f"Participants start at {http_address(host, port)}/task?access_code=YOUR-CODE")
    short = serving.files_short(writers, threads + model_calls)
    if short:
        click.echo(short, err=True)
    serving.run(app, host=host, port=port, workers=workers, threads=threads, writers=writers)


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
@main.command()
@click.option("--dir", "directory", default="demo-study", show_default=True,
              type=click.Path(file_okay=False), help="Where the demo study lives.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
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
@click.option("--design", type=click.Choice(["jakesch", "dhillon", "realhumaneval"]), default=None,
              help="A published design's arms instead (study init --design; README, Paradigms as arms).")
def demo(directory: str, host: str, port: int, backend: str, min_seconds: int, paradigm: str,
         design: str | None) -> None:
    """Start a ready local study with a local model: no API key, no network."""
    from dataclasses import replace

    from study.lm import backends, smollm2
    from study.lm.server import serve_in_thread
    from study.server import create_app
    from study.server.page_security import http_address

    _listenable(host, port)  # before the demo's model and folder are made
    _design_alone(paradigm, design)
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
            # A local demonstration has no protocol director; say so instead of a placeholder.
            config_texts.CONSENT_CONTACT_PLACEHOLDER: "nobody: this is a local demonstration "
            "of the study software, and nothing you write leaves this computer",
            **registry.study_templates()[paradigm].demo,
        },
        paradigm=paradigm,
        design=design,
    )
    study = _load(directory)
    # The demo always talks to its own local model, whatever the folder's study.toml says.
    study = replace(study, suggestions=replace(study.suggestions, endpoint=base_url))
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


@main.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", type=Registered(("coauthor",), registry.export_formats),
              default="coauthor", show_default=True,
              help="coauthor: the 2021 release format; chat: conversations.jsonl; proactive: "
              "MindCopilot L1-L3 sessions with the extension (schemas/coauthor-proactive.schema.json).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output folder.")
@click.option("--all", "include_unfinished", is_flag=True,
              help="Also export sessions whose writer has not finished writing.")
def export(directory: str, fmt: str, out: str, include_unfinished: bool) -> None:
    """Export sessions as OUT/<session_id>.jsonl and OUT/metadata.csv (--format chat: a chat
    study's OUT/conversations.jsonl), with OUT/survey.csv and OUT/surveys.json."""
    from study.export.coauthor import ExportError, export_study

    if fmt != "coauthor":  # a paradigm's own format (study.paradigms.base.Paradigm.exports)
        exporter = registry.export_formats()[fmt].exporter(fmt)
        try:
            click.echo(exporter(_load(directory), Path(out), include_unfinished=include_unfinished))
        except ValueError as error:
            raise click.ClickException(str(error)) from None
        return

    study = _load(directory)
    path = registry.of_session(study, None)
    if path is not None and path.exports:
        # A study whose own path keeps no CoAuthor log (a chat study's conversations).
        raise click.ClickException(f"{directory} is a {path.name} study; export it with --format {next(iter(path.exports))}")
    try:
        summary = export_study(study, Path(out), include_unfinished=include_unfinished)
    except (study_config.ConfigError, ExportError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(
        f"Exported {summary.sessions} sessions ({summary.events} events) to {out}"
        + (f"; skipped {summary.skipped} without events" if summary.skipped else "")
    )
    if "judging" in study.raw:  # a judging round's ratings, joined to these sessions
        from study.judging.cli import collect
        from study.judging.export import RATINGS_CSV, write
        from study.judging.settings import from_study

        found = collect(study, from_study(study))
        if found.ratings:
            click.echo(f"Exported {write(found, Path(out))} judging ratings to {Path(out) / RATINGS_CSV}")

    # A qualification round's reviews (the reviewers' workspace), for the team's own analysis.
    from study.review.export import export_beside as export_reviews

    reviewed = export_reviews(study, Path(out))
    if reviewed:
        click.echo(reviewed)

    # Arms of several paradigms: a paradigm's arms may keep their own format too (e.g. ghost
    # text's extended logs, study.paradigms.proactive.coauthor_log).
    for module in registry.log_hooks():
        line = module.export_beside(study, Path(out), include_unfinished=include_unfinished) if hasattr(module, "export_beside") else None
        if line:
            click.echo(line)


def _register_paradigm_commands() -> None:
    for paradigm in registry.registered():  # a paradigm's own commands (e.g. `study chat`)
        if paradigm.commands:
            paradigm.command_module().register(main)


_register_paradigm_commands()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
