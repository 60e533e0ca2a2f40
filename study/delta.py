"""The document text after a sequence of CoAuthor records: a thin entry point to the
curation core's replay (study.curation.replay), for code that needs only the text."""

from __future__ import annotations

from typing import Iterable, Mapping

from study.curation.replay import DeltaError, replay as _replay

__all__ = ["DeltaError", "replay"]


def replay(records: Iterable[Mapping]) -> str:
    """The document after `records` (first one: system-initialize with the prompt)."""
    return _replay(list(records)).text
