"""`study keys`, `study release` and `study withdraw`: publish anonymized, versioned datasets.

Registered in the main CLI with `main.add_command(keys)`, `main.add_command(release)` and
`main.add_command(withdraw)`; also runnable alone as `python -m study.release.cli`.
"""

from __future__ import annotations

import json
import shlex
import sys
from datetime import date

import click

from study.release.keys import KeyFileError

KEY_OPTION = click.option(
    "--key", "key_path", required=True, type=click.Path(dir_okay=False),
    help="The key file made by `study keys init`.",
)  # fmt: skip


@click.group()
def keys() -> None:
    """The secret key of a dataset's pseudonyms, and what is kept beside it."""


@keys.command("init")
@click.argument("keyfile", type=click.Path(dir_okay=False))
def keys_init(keyfile: str) -> None:
    """Create KEYFILE: fresh secret key material, mode 600. Never overwrites.

    Keep it with the research team, never in a release or a repository: it turns worker ids
    into pseudonyms, and encrypts KEYFILE.reid (pseudonym -> worker id) and
    KEYFILE.withdrawals. Back it up: a new key means new pseudonyms. Missing folders on the
    way are created, readable only by you (mode 700).
    """
    from study.release.keys import init_keyfile

    try:
        key = init_keyfile(keyfile)
    except KeyFileError as error:
        raise click.ClickException(str(error)) from None
    click.echo(
        f"Created {key.path} (mode 600, fingerprint {key.fingerprint}). "
        "Keep it secret and backed up."
    )


@keys.command("lookup")
@click.argument("pseudonym")
@KEY_OPTION
@click.option("--namespace", default=None, help="Only this namespace (default: all).")
def keys_lookup(pseudonym: str, key_path: str, namespace: str | None) -> None:
    """Print the worker id behind PSEUDONYM (for payments, bonuses and withdrawals), or the
    study's session id behind a released session id."""
    from study.release.keys import load_key
    from study.release.pseudonyms import ReidentificationTable, is_pseudonym

    alias = pseudonym.strip()
    try:
        table = ReidentificationTable(load_key(key_path))
    except KeyFileError as error:
        raise click.ClickException(str(error)) from None
    if is_pseudonym(alias):
        found = table.lookup(alias, namespace)
    else:
        found = [(name, f"session {sid}") for name, sid in table.lookup_session(alias, namespace)]
    if not found:
        raise click.ClickException(
            f"{pseudonym}: no release built with {key_path} issued this pseudonym or session id."
        )
    for name, worker in found:
        click.echo(f"{name}\t{worker}")


@click.group()
def release() -> None:
    """Build, verify and compare anonymized, versioned dataset releases."""


@release.command("build")
@click.argument("source", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--version", "version", required=True, help="The release's version, MAJOR.MINOR.PATCH."
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="The releases folder.")
@KEY_OPTION
@click.option(
    "--name", default=None, help="Release name (default: the study's name, or the folder's)."
)
@click.option("--namespace", default=None, help="Pseudonym namespace (default: the release name).")
@click.option(
    "--license",
    "license_",
    default="other",
    show_default=True,
    help="License identifier for the card and datapackage.json, e.g. cc-by-4.0 (without it the "
    "build warns: \"other\" grants no reuse).",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False),
    default=None,
    help="Where to write the redaction report (default: KEYFILE.redactions/<name>-X.Y.Z.csv).",
)
@click.option(
    "--processes",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: all cores).",
)
@click.option(
    "--progress/--no-progress", default=None, help="Show a progress bar (default: on a terminal)."
)
@click.option(
    "--exclude",
    "exclude",
    multiple=True,
    metavar="SESSION",
    help="Leave this session out (repeatable), e.g. one whose log cannot be replayed.",
)
@click.option(
    "--creator", "creator", multiple=True, metavar="NAME",
    help='Who created the dataset (repeatable), e.g. "Ada Lovelace (Example University)": the '
    "card and datapackage.json name them. Default: [release] creators in study.toml.",
)  # fmt: skip
@click.option(
    "--funding", default=None, metavar="TEXT",
    help='Who funded the work, e.g. "NSF grant IIS-2112633". Default: [release] funding in study.toml.',
)  # fmt: skip
def release_build(
    source, version, out, key_path, name, namespace, license_, report, processes, progress,
    exclude, creator, funding,
) -> None:  # fmt: skip
    """Build OUT/<name>-VERSION/ and its .tar.gz from SOURCE.

    SOURCE is a study folder (study.toml and its database) or a folder of CoAuthor sessions
    with a metadata.csv holding worker_id. Worker ids become keyed pseudonyms, personal data
    in the text is masked, withdrawn writers are left out, and the finished folder must pass
    `study release verify` or nothing is released. Never overwrites a version.
    """
    from study.release.build import build_release
    from study.release.preflight import BuildError
    from study.release.source import SourceError

    try:
        result = build_release(
            source, version=version, out=out, key_path=key_path, name=name, namespace=namespace,
            license=license_, report_path=report, processes=processes, progress=progress,
            exclude=exclude, creator=creator, funding=funding,
        )  # fmt: skip
    except (BuildError, SourceError, KeyFileError) as error:
        raise click.ClickException(str(error)) from None
    facts = result.facts
    built = (
        f"{facts.sessions} sessions by {facts.writers} writers, {facts.events:,} events"
        if facts.sessions or not facts.conversations else  # a chat study's are conversations
        f"{facts.conversations} conversations by {facts.writers} writers, {facts.messages:,} messages"
    )  # fmt: skip
    if facts.sessions and facts.conversations:  # a chat arm's, beside its logs
        built += f"; {facts.conversations} conversations, {facts.messages:,} messages"
    click.echo(f"Built {result.directory} ({built})")
    click.echo(f"Archive {result.archive}")
    if facts.withdrawn_excluded:
        click.echo(f"Left out {facts.withdrawn_excluded} session(s) of withdrawn writers.")
    if result.left_out:
        click.echo(
            f"Left out {len(result.left_out)} session(s) you excluded: {', '.join(result.left_out)}."
        )
    if result.unconfirmed:
        click.echo(
            f"Left out {len(result.unconfirmed)} finished session(s) that no synced MTurk "
            "assignment, Prolific submission or listed access code confirms (run `study mturk "
            "sync` or `study prolific sync` first)."
        )
    if result.unmatched_withdrawals:
        count = len(result.unmatched_withdrawals)
        click.echo(
            f"Warning: {count} recorded withdrawal{'s' if count != 1 else ''} "
            f"{'match' if count != 1 else 'matches'} no writer of this source or of any release built with "
            f"this key ({'; '.join(result.unmatched_withdrawals)}). Check that the worker id was "
            "given exactly as in the study's data (MTurk ids are case-sensitive), and record it "
            "again with `study withdraw` if not: a mistyped id leaves nothing out."
        )
    if result.without_metadata:
        click.echo(
            f"Left out {len(result.without_metadata)} session file(s) without a metadata row, "
            f"e.g. {result.without_metadata[0]}."
        )
    if click.get_current_context().get_parameter_source("license_") is click.core.ParameterSource.DEFAULT:
        click.echo(
            'Warning: no --license, so the card and datapackage.json give the licence as "other", '
            "which grants a reader no right to reuse the data. Fix: give the licence your consent "
            "form and data agreement allow, e.g. --license cc-by-4.0 (a licence added is a patch: "
            f"build {_next_patch(version)} with it before publishing), or --license other to say so on purpose."
        )
    if not facts.creators:
        # The card then keeps its note for the curator, which an edit would break (SHA256SUMS).
        click.echo(
            'Warning: the card answers "Who created it, and who funded it?" with "Not known to the '
            'toolkit", and an edited card fails `study release verify`. Fix: build '
            f"{_next_patch(version)} before publishing with --creator NAME (repeatable) and "
            "--funding TEXT, or [release] creators and funding in a study's study.toml."
        )
    found = sum(facts.redacted_by_entity.values())
    click.echo(
        f"Redacted {found} finding(s) in {facts.redacted_sessions} session(s). "
        f"Review them in {result.report} (it holds the original text: keep it private)."
    )


def _next_patch(version: str) -> str:
    from study.release.versioning import Version

    number = Version.parse(version)
    return str(Version(number.major, number.minor, number.patch + 1))


@release.command("verify")
@click.argument("target", metavar="DIR_OR_ARCHIVE", type=click.Path(exists=True))
@click.option(
    "--key",
    "key_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Also scan for every worker id in this key's re-identification table.",
)
@click.option(
    "--processes", "-j", type=click.IntRange(min=1), default=None,
    help="Worker processes (default: all cores).",
)  # fmt: skip
def release_verify(target: str, key_path: str | None, processes: int | None) -> None:
    """Re-check a release: checksums, schemas, leak scan. Exit status 0 only if all hold.

    With --key, also every worker id and study session id the key's table holds.
    """
    from study.release.verify import verify

    known: set[str] = set()
    sessions: set[str] = set()
    if key_path:
        from study.release.keys import load_key
        from study.release.pseudonyms import ReidentificationTable

        try:
            table = ReidentificationTable(load_key(key_path))
        except KeyFileError as error:
            raise click.ClickException(str(error)) from None
        known, sessions = table.worker_ids(), table.session_ids()
    report = verify(target, known_ids=known, session_ids=sessions, processes=processes)
    click.echo(report.render())
    sys.exit(0 if report.ok else 1)


@release.command("diff")
@click.argument("old", type=click.Path(exists=True))
@click.argument("new", type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document for machines.")
def release_diff(old: str, new: str, as_json: bool) -> None:
    """List the sessions added, removed and changed from release OLD to NEW (folders or .tar.gz)."""
    from study.release.archive import ArchiveError, opened
    from study.release.diff import diff_releases, render

    try:
        with opened(old) as old_dir, opened(new) as new_dir:
            result = diff_releases(old_dir, new_dir)
    except (ArchiveError, FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(json.dumps(result.to_dict(), indent=2) if as_json else render(result))


@click.command()
@click.argument("worker_id")
@click.option("--key", "key_path", default=None, type=click.Path(dir_okay=False),
              help="The key file made by `study keys init`: every later release leaves them out.")
@click.option("--study", "study_dir", default=None, type=click.Path(exists=True, file_okay=False),
              help="The study folder: its export, report, status, judging results, reviewers' "
              "workspace and qualification grants leave them out from now on.")
@click.option("--reason", default="", help="A note kept with the withdrawal (never released).")
def withdraw(worker_id: str, key_path: str | None, study_dir: str | None, reason: str) -> None:
    """Record that WORKER_ID withdrew: their sessions leave every later release (--key) and
    every later analysis of the study folder (--study); give both to do both at once.

    With --key the list is kept encrypted beside the key (KEYFILE.withdrawals), so every build
    with that key honours it; WORKER_ID may then also be a pseudonym from a release. With
    --study it is kept in the study's database. Releases already published are not changed
    (build and publish a new one), nor are payments: the MTurk and Prolific records stay.
    """
    from study.release.keys import load_key
    from study.release.pseudonyms import is_pseudonym, normalize_worker_id
    from study.release.study_withdrawal import StudyWithdrawalError, open_study, record_in_study
    from study.release.withdraw import resolve_worker

    if key_path is None and study_dir is None:
        raise click.UsageError("give --key KEYFILE (releases), --study DIR (the study folder), or both.")
    if not normalize_worker_id(worker_id):
        raise click.UsageError("WORKER_ID is empty.")
    today = date.today().isoformat()
    try:
        key = load_key(key_path) if key_path is not None else None
        if key is not None:
            worker_id = resolve_worker(key, worker_id)
        elif is_pseudonym(normalize_worker_id(worker_id)):
            raise KeyFileError(
                f"{normalize_worker_id(worker_id)} looks like a pseudonym from a release: give the "
                "--key it was built with, or the worker id."
            )
        engine = open_study(study_dir)[1] if study_dir is not None else None
    except (KeyFileError, StudyWithdrawalError) as error:
        raise click.ClickException(str(error)) from None
    options = " ".join(f"--{name} {shlex.quote(value)}" for name, value in
                       (("key", key_path), ("study", study_dir)) if value is not None)  # fmt: skip
    if engine is not None:
        try:
            for line in record_in_study(engine, study_dir, normalize_worker_id(worker_id),
                                        today=today, reason=reason, again=options):  # fmt: skip
                click.echo(line)
        finally:
            engine.dispose()
    if key is not None:
        _withdraw_from_releases(key, worker_id, today, reason, options)


def _withdraw_from_releases(key, worker_id: str, today: str, reason: str, options: str) -> None:
    from study.release.withdraw import load_withdrawals, near_misses, record_withdrawal, withdrawals_path

    try:
        entry, new = record_withdrawal(key, worker_id, today=today, reason=reason)
    except KeyFileError as error:
        raise click.ClickException(str(error)) from None
    if new:
        click.echo(
            f"Recorded the withdrawal in {withdrawals_path(key)}. "
            "The next release leaves out their sessions."
        )
        from study.release.pseudonyms import ReidentificationTable

        released = ReidentificationTable(key).worker_ids()
        if entry.worker_id not in released:
            # A mistyped id is recorded as readily as a real one, and leaves nothing out.
            click.echo(
                f"Note: no release built with {key.path} holds this worker. If one should, check "
                "the id as the study's data spells it (MTurk ids are case-sensitive) and record "
                "it again; the next build warns if its source has no session of theirs either."
            )
            for recorded, writer in near_misses(load_withdrawals(key), released):
                if recorded != entry.worker_id:
                    continue
                click.echo(
                    f"A release holds {writer!r}: if that is who withdrew, run: study withdraw "
                    f"{shlex.quote(writer)} {options}"
                )
    else:
        click.echo(f"Already withdrawn (recorded {entry.recorded}); nothing to do.")


@click.group()
def _standalone() -> None:
    """Release commands (normally `study keys|release|withdraw`)."""


_standalone.add_command(keys)
_standalone.add_command(release)
_standalone.add_command(withdraw)

if __name__ == "__main__":  # pragma: no cover
    _standalone()
