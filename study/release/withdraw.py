"""Participants' withdrawals: their sessions leave every release built after the withdrawal.

`study withdraw WORKER_ID --key KEYFILE` appends the worker id to `KEYFILE.withdrawals`, a
Fernet-encrypted list kept beside the key (see `study.release.keys`), because the key is the one
thing every build of a dataset shares, whether its source is a study folder or a folder of
session files. `study release build` leaves out every session whose worker id is on the list
and says so in the CHANGELOG (as a count, never an id). Releases already published are not
changed: withdrawal takes effect from the next release, as consent forms usually promise.

WORKER_ID may also be a pseudonym from a release: it is looked up in the re-identification
table (`KEYFILE.reid`).
"""

from __future__ import annotations

from dataclasses import dataclass

from study.release.keys import KeyFileError, ReleaseKey, read_vault, write_vault
from study.release.pseudonyms import ReidentificationTable, is_pseudonym, normalize_worker_id

WITHDRAWALS_SUFFIX = ".withdrawals"


@dataclass(frozen=True)
class Withdrawal:
    worker_id: str
    recorded: str  # YYYY-MM-DD: when the curator recorded it (kept with the key, never released)
    reason: str = ""

    def note(self) -> str:
        """How the build names it: by when it was recorded, never by the worker id (a build's
        output may land in a log; ids stay with the key)."""
        return f"recorded {self.recorded}" + (f" ({self.reason})" if self.reason else "")


def withdrawals_path(key: ReleaseKey):
    return key.companion(WITHDRAWALS_SUFFIX)


def load_withdrawals(key: ReleaseKey) -> list[Withdrawal]:
    stored = read_vault(key, withdrawals_path(key), {"withdrawn": []})
    return [Withdrawal(**entry) for entry in stored.get("withdrawn", [])]


def resolve_worker(key: ReleaseKey, worker_or_pseudonym: str) -> str:
    """The worker id behind a pseudonym (via the re-identification table), else the id itself."""
    text = normalize_worker_id(worker_or_pseudonym)
    if not is_pseudonym(text):
        return text
    found = {worker for _, worker in ReidentificationTable(key).lookup(text)}
    if not found:
        raise KeyFileError(
            f"{text} looks like a pseudonym, but no release built with {key.path} issued it. "
            "Give the worker id instead."
        )
    if len(found) > 1:  # pragma: no cover - 80-bit collisions across namespaces
        raise KeyFileError(f"{text} names several workers; give the worker id instead.")
    return found.pop()


def record_withdrawal(
    key: ReleaseKey, worker_or_pseudonym: str, *, today: str, reason: str = ""
) -> tuple[Withdrawal, bool]:
    """Add the worker to the withdrawal list. Returns (entry, True if it was new)."""
    worker_id = resolve_worker(key, worker_or_pseudonym)
    if not worker_id:
        raise KeyFileError("the worker id is empty")
    entries = load_withdrawals(key)
    for entry in entries:
        if entry.worker_id == worker_id:
            return entry, False
    entry = Withdrawal(worker_id=worker_id, recorded=today, reason=reason)
    entries.append(entry)
    write_vault(key, withdrawals_path(key), {"withdrawn": [e.__dict__ for e in entries]})
    return entry, True


def _folded(worker_id: str) -> str:
    return "".join(worker_id.split()).casefold()


def near_misses(withdrawals: list[Withdrawal], writers: set[str]) -> list[tuple[str, str]]:
    """(recorded id, a writer's id) for each withdrawal that matches no writer as given but one
    in another case or spacing (`lab2` for `LAB2`, `A1B2 C3` for `A1B2C3`), whose writer is not
    withdrawn under their own spelling. Ids are compared exactly (MTurk's are case-sensitive),
    so such a withdrawal leaves out nothing: the writer it was surely meant for would be
    released."""
    withdrawn = {entry.worker_id for entry in withdrawals}
    by_fold: dict[str, list[str]] = {}
    for writer in writers - withdrawn:
        by_fold.setdefault(_folded(writer), []).append(writer)
    found = []
    for entry in withdrawals:
        if entry.worker_id not in writers:
            meant = by_fold.get(_folded(entry.worker_id), [])
            found += [(entry.worker_id, writer) for writer in sorted(meant)]
    return found
