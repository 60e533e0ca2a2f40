"""`study preregister DIR` and `study preregister verify DIR`."""

from __future__ import annotations

import click

from study import config as study_config
from study import config_texts
from study.judging import results as judging_results
from study.plan import deviations as deviation_module
from study.plan import record as record_module
from study.store import create_tables, make_engine, reading


class RecordByDefault(click.Group):
    """`study preregister DIR` records; `study preregister verify DIR` checks."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands:
            args = ["record", *args]
        return super().resolve_command(ctx, args)


def _load(directory: str) -> study_config.Study:
    try:
        return study_config.load(directory)
    except study_config.ConfigError as error:
        raise click.ClickException(str(error)) from None


@click.group(cls=RecordByDefault)
def preregister() -> None:
    """Fix the plan before launch: a signed, timestamped record of the configuration, arms,
    outcome measures and planned comparisons ([plan] in study.toml)."""


@preregister.command("record")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--replace", is_flag=True,
              help="Record the plan again over an existing record (before anyone starts), keeping "
                   "the earlier one beside it as preregistration.replaced-<its time>.json.")
def record_command(directory: str, replace: bool) -> None:
    """Write DIR/preregistration.json, signed; refused once participants have started, and
    over an existing record unless --replace."""
    study = _load(directory)
    # The record fixes the consent text participants read (its SHA-256). `study serve` refuses
    # this one, so it is not what anyone will read: once the contact is filled in, every report
    # and `verify` would list the consent as a deviation from the plan deposited.
    unfinished = config_texts.unfinished_consent(study) or config_texts.demo_consent(study)
    if unfinished:
        raise click.ClickException(
            f"{study.directory / 'study.toml'}: not recording the plan, which fixes the consent "
            f"text participants read: {unfinished} Nothing was written."
        )
    engine = make_engine(study.database_url)
    create_tables(engine)
    with reading(engine) as connection:
        started = deviation_module.started(connection)
    engine.dispose()
    if started:
        raise click.ClickException(
            f"{started} participant session(s) have already started, so a record written now would "
            "not be a plan made before launch. Nothing was written. `study report` lists deviations "
            "from an existing record instead."
        )
    earlier = record_module.earlier(study.directory)
    if earlier is not None and not replace:
        # The digest may already be deposited (OSF, AsPredicted): replaced silently, it would
        # match nothing in the study's folder.
        raise click.ClickException(
            f"{study.directory / record_module.RECORD_NAME} already holds a record, made "
            f"{earlier.recorded_at} (SHA-256 {earlier.sha256}). Nothing was written. Fix: keep it "
            f"(study preregister verify {directory} checks it), or record the plan again with "
            f"study preregister {directory} --replace, which keeps the earlier record beside it."
        )
    try:
        record = record_module.build(study)
        if earlier is not None:
            # Signed into the new record: a reader of it (a release ships it) learns the plan was
            # recorded before, and which digest a deposit of that one holds.
            record["replaces"] = {"recorded_at": earlier.recorded_at, "sha256": earlier.sha256}
        signed = record_module.sign(record, record_module.key(study.directory))
        kept = record_module.set_aside(study.directory, earlier) if earlier is not None else None
    except record_module.PlanError as error:
        raise click.ClickException(str(error)) from None
    path = record_module.write(study.directory, signed)
    if kept is not None:
        click.echo(f"Kept the earlier record, made {earlier.recorded_at} (SHA-256 {earlier.sha256}), "
                   f"as {kept}: this one replaces it.")  # fmt: skip
    plan = signed["plan"]
    click.echo(f"Wrote {path}: {len(signed['arms'])} arm(s), {len(plan['outcomes'])} outcome(s), "
               f"{len(plan['comparisons'])} planned comparison(s), recorded {signed['recorded_at']}.")  # fmt: skip
    click.echo(f"Signed with {study.directory / record_module.KEY_NAME} (keep it private, out of releases).")
    click.echo(f"SHA-256 {record_module.digest(signed)}: deposit it with a third party (OSF, AsPredicted) "
               "to prove when the plan was fixed.")  # fmt: skip


@preregister.command("verify")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
def verify_command(directory: str) -> None:
    """Check the record's signature and list every deviation from it."""
    study = _load(directory)
    try:
        signed = record_module.checked(study.directory)
    except record_module.PlanError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Signature OK: recorded {signed['recorded_at']}, SHA-256 {record_module.digest(signed)}.")
    engine = make_engine(study.database_url)
    create_tables(engine)
    with reading(engine) as connection:
        # The judges the report lists as left out too, so both name the same deviations.
        excluded = deviation_module.exclusions(connection, signed, judging_results.flagged_left_out(connection, study))
    engine.dispose()
    found = deviation_module.compare(signed, study, excluded)
    if not found:
        click.echo("No deviation from the record.")
    for deviation in found:
        click.echo(f"DEVIATION ({deviation.kind}) {deviation.what}: {deviation.detail}")
