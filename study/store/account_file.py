"""A platform account kept in one private JSON file, with a clock that tests can move.

The MTurk and Prolific emulators (study.mturk.emulator, study.prolific.emulator) each stand in
for an account of a service this machine cannot reach: a dry run survives restarts because the
whole account is written after every change, and time moves lazily, so each emulator says in
`refresh` what the clock implies (a HIT expires, a submission times out) when a request comes
or the clock is advanced.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

from study.store.permissions import write_private


class AccountFile:
    """`data` is the account; all access goes through `with account.lock:`."""

    def __init__(self, path: str | os.PathLike | None, clock: Callable[[], float],
                 fresh: Callable[[], dict]) -> None:
        self.path = Path(path) if path else None
        self.clock = clock
        self.lock = threading.RLock()
        if self.path and self.path.exists():
            self.data = json.loads(self.path.read_text(encoding="utf-8"))
        else:
            self.data = fresh()

    def save(self) -> None:
        """Write the whole account atomically: a crash never leaves half a file."""
        if not self.path:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Private and whole or not at all: the account holds its token (study.store.permissions).
        write_private(self.path, json.dumps(self.data, indent=1, sort_keys=True).encode())

    def now(self) -> float:
        return self.clock() + self.data["clock_offset"]

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.data["clock_offset"] += seconds
            self.refresh()
            self.save()

    def refresh(self) -> None:
        """Apply what the clock implies since the last request (each emulator's own rules)."""
        raise NotImplementedError
