"""Building blocks every command group shares (`study mturk`, `study prolific`, `study
review`, `study judging`, and the commands of their own: `study init`, `serve`, `demo`,
`export`): the study folder argument and its study, the choices the registered paradigms
declare, and known errors said as a command line says them (one line, exit status 1) rather
than as a traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable

import click

from study import config as study_config


def directory_argument(command):
    return click.argument("directory", type=click.Path(exists=True, file_okay=False))(command)


def reports(expected: tuple[type[BaseException], ...]) -> Callable:
    """A decorator: the `expected` errors a command may raise, shown as click shows errors."""

    def reports_errors(command):
        @functools.wraps(command)
        def wrapper(*args, **kwargs):
            try:
                return command(*args, **kwargs)
            except expected as error:
                raise click.ClickException(str(error)) from None

        return wrapper

    return reports_errors


def load_study(directory: str) -> study_config.Study:
    """The study in `directory`, its study.toml's problems said as a command line says them."""
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
