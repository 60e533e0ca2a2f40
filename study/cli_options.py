"""Building blocks every command group shares (`study mturk`, `study prolific`, `study
review`, `study judging`): the study folder argument, and known errors said as a command
line says them (one line, exit status 1) rather than as a traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable

import click


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
