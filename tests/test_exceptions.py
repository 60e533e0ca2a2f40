"""Every exception of the toolkit survives pickling, as it must to cross a process boundary.

The curation runner and the release build run jobs in worker processes; an exception whose
custom __init__ cannot be called with its pickled arguments used to kill the pool's result
thread and hang the CLI for ever (issue 11). Each exception class defined in `study` is built
with sample arguments, pickled and unpickled, and must come back equal in type, message and
attributes.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil

import pytest

import study

# Modules that cannot be imported on their own: what they need is said here.
NOT_IMPORTABLE = {"study.server.wsgi": "reads STUDY_DIR at import, to build the WSGI app"}


def exception_classes() -> list[type[BaseException]]:
    found = []
    for module_info in pkgutil.walk_packages(study.__path__, "study."):
        name = module_info.name
        if name.endswith("__main__") or name in NOT_IMPORTABLE:
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found.append(value)
    return sorted(found, key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


def sample(cls: type[BaseException]) -> BaseException:
    """An instance built from its signature: every parameter given a value."""
    if not any("__init__" in vars(base) for base in cls.__mro__ if base.__module__ != "builtins"):
        return cls("a message")  # BaseException's own __init__
    arguments = {}
    for parameter in list(inspect.signature(cls).parameters.values()):
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = str(parameter.annotation)
        arguments[parameter.name] = (
            [] if annotation.startswith("list") else f"<{parameter.name} of {cls.__name__}>"
        )
    return cls(**arguments)


CLASSES = exception_classes()


def test_the_toolkit_exceptions_are_found():
    names = {cls.__name__ for cls in CLASSES}
    assert {"DeltaError", "SessionFileError", "BuildError", "MTurkError", "InvalidRequest"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: f"{cls.__module__}.{cls.__name__}")
def test_every_exception_pickles_and_unpickles_whole(cls):
    error = sample(cls)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is cls
    assert str(back) == str(error)
    assert vars(back) == vars(error)
