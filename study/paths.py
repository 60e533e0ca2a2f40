"""Where the top-level `templates/` and `schemas/` folders are, in a checkout or an install."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent


@cache
def _resource_dir(name: str) -> Path:
    for base in (_CHECKOUT, Path(sys.prefix) / "share" / "study"):
        if (base / name).is_dir():
            return base / name
    raise FileNotFoundError(
        f"cannot find the '{name}' folder of the study toolkit; reinstall it with `pip install -e .`"
    )


def templates_dir() -> Path:
    return _resource_dir("templates")


def schemas_dir() -> Path:
    return _resource_dir("schemas")


def static_dir() -> Path:
    return Path(__file__).resolve().parent / "static"


def not_utf8_where(error: UnicodeDecodeError) -> str:
    """Where a file stops being UTF-8: "line 3, byte 0xff"."""
    data = error.object
    line = data[: error.start].count(b"\n") + 1
    return f"line {line}, byte 0x{data[error.start]:02x}"
