"""Importing NLP libraries without the deep-learning stack they reach for but this project does
not use through them.

Presidio (the release's PII scan, study.release.pii) and spaCy (the report's named entities,
study.report.entities) each import torch and transformers when those are installed, which the
`lm` extra does for SmolLM2: Presidio for NLP engines the release never builds, spaCy through
thinc and through Presidio's spaCy factory, which spaCy imports from its entry points whenever a
pipeline loads. That was 10-30 s of every `study release build` and `study report` for nothing.
Both libraries guard those imports, so hiding the two packages while they are imported makes
them skip them; the packages are importable again right after.

What was imported meanwhile keeps its answer for the life of the process (thinc then runs
without torch): the commands using this run no model on torch.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

HIDDEN = ("transformers", "torch")


@contextmanager
def torch_hidden() -> Iterator[None]:
    """Within the block, `import torch` and `import transformers` raise ImportError, unless the
    process had already imported them (then nothing changes)."""
    hidden = [name for name in HIDDEN if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, "") is None:
                del sys.modules[name]
