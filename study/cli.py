"""The `study` command: one subcommand per task a researcher or curator does, each imported
when it runs (GROUPS)."""

from __future__ import annotations

import importlib
import sys

import click

from study import paradigms as registry
# Imported from here by some eighty test modules and the benchmarks, which make their study
# folders as `study init` does; study.new_study imports nothing this module does not.
from study.new_study import write_study_files  # noqa: F401

# Each command group, and each command of `study`'s own, is imported when it runs, or when
# `study --help` lists them all: imported up front (the report's matplotlib, MTurk's boto3,
# judging's pandas) they took 2.4 s of every command's start on a slow host, `study serve` and
# its restart after a crash included.
# name: (module, the group or command, commands of other modules joined to it)
GROUPS = {
    "backup": ("study.backup", "backup", ()),
    "copy-database": ("study.copy_database", "copy_database", ()),
    "curate": ("study.curation.cli", "curate", ()),
    "demo": ("study.demo", "demo", ()),
    "export": ("study.export.cli", "export", ()),
    "init": ("study.new_study", "init", ()),
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
    "serve": ("study.serve", "serve", ()),
    "simulate": ("study.simulate.cli", "simulate", ()),
    "status": ("study.status", "status", ()),
    "withdraw": ("study.release.cli", "withdraw", ()),
}


def _imported(path: str) -> click.Command:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


class Commands(click.Group):
    """`study`: the commands and groups of GROUPS, imported when first asked for, and each
    paradigm's own commands (`study chat`)."""

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
            # A study.toml problem found past load_study (a file it names read only when used,
            # such as [session] access_codes_file): its message already names the file, the
            # key and the fix, so it is said as load_study says it, not as a traceback.
            from study.config_checks import ConfigError

            if isinstance(error, ConfigError):
                raise click.ClickException(str(error)) from None
            # Any command's first use of a database that cannot be opened (study.store.engine
            # names it): in words, not the driver's traceback.
            from study.store.engine import unopened_message  # sqlalchemy: only once one failed

            message = unopened_message(error)
            if message is None:
                raise
            raise click.ClickException(message) from None


@click.group(cls=Commands)
@click.version_option(package_name="study")
def main() -> None:
    """Run crowdsourced human-AI writing studies and publish their datasets."""


def _register_paradigm_commands() -> None:
    for paradigm in registry.registered():  # a paradigm's own commands (e.g. `study chat`)
        if paradigm.commands:
            paradigm.command_module().register(main)


_register_paradigm_commands()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
