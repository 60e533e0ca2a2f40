"""The checks a batch of events passes on arrival, against what its session has stored.

1. Quota: a session stores at most `max_events` events and `max_bytes` of records
   (study.server.limits), so one browser cannot fill the disk.
2. Replay: the stored events and the new ones, in seq order, must replay (study.curation.replay)
   exactly as a release will replay them. One bad delta (`retain: 1000000000`) is refused here
   with 422 instead of being stored and then blocking every release.

3. A paradigm's own rules for the records it adds to the log (study.paradigms.base: `events`;
   e.g. ghost text's provenance, study.paradigms.proactive.arrival), added by the event API.

The chat page's log (chat_events) is not a CoAuthor document: it gets the quota alone
(`quota_checker`).

Both run inside the transaction that stores the batch (study.store.events.ingest), so two
batches of one session are never checked against the same stored state. Replaying a whole
session for every batch would cost O(events) each time; a small per-process cache keeps the
text after the last batch this process stored. When another worker process stored events of the
session meanwhile, only those are read and applied to it (`_caught_up`); a session this process
has not seen (after a restart, or a writer's first batch at this worker) is read and replayed
before the write lock is taken (`_read_stored`), so that one long session resuming never holds
every other writer's batch up while the whole of it is replayed. The cache holds only committed
states (`Arrival.committed`, and states read from the database), so the event API may also hand
one to the store as `known`: counting every stored event for every batch is O(events) as well.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson
from sqlalchemy import Connection, Engine, Table, select

from study.curation.replay import DeltaError, apply_delta, to_units
from study.server.limits import Limits
from study.server.session_memory import SessionMemory
from study.store import events as event_store
from study.store import reading
from study.store.db import events as events_table

CACHED_SESSIONS = 4096


@dataclass(frozen=True)
class _Checked:
    count: int
    last_seq: int | None
    bytes: int
    text: str  # UTF-16 units (study.curation.replay.to_units)


# A session with nothing stored: what a session's first batch (seq 0 onwards) is checked
# against ahead of the lock, as the lock then confirms.
_NOTHING_STORED = _Checked(count=0, last_seq=None, bytes=0, text="")


_checked = SessionMemory(CACHED_SESSIONS)


class Arrival:
    """A batch's arrival checks. `check`: what event_store.ingest runs before storing it; `known`:
    the session's stored (count, highest seq) as this process last committed them, when no seq
    is missing (ingest's `known`); `committed()`: to be called once the batch is stored, and
    only then: the text it leaves is remembered for the session's next batch.

    `check` is a method so that nothing the Arrival holds refers back to it: a closure setting
    its result on the Arrival that held it would be a reference cycle, keeping every batch (its
    parsed records, about 45 objects) alive until the garbage collector's next pass, which at a
    launch then went through hundreds of them each time (docs/benchmarks.md)."""

    def __init__(self, session_id: str, batch: Sequence[Mapping], limits: Limits, engine: Engine | None = None) -> None:
        self.session_id, self.limits = session_id, limits
        self.by_seq = {item["seq"]: item for item in batch}
        self.ordered = sorted(self.by_seq)
        self.stored: _Checked | None = None  # the state `check` leaves, once it has run
        # The replay is Python work; done while the write lock is held it would also wait for
        # the GIL behind every other thread, and every writer would wait for it. So the usual
        # case, a batch that follows the text this process last checked, is replayed here,
        # before the lock, and inside the lock only confirmed to follow what is stored still.
        # A session's first batch is replayed ahead too, from its initialize event: at a launch
        # a thousand of them arrive within a second, and each has nothing stored to read. A
        # later batch of a session this process has not seen is replayed ahead from what is
        # stored, read without the write lock (after a restart, every writer's next batch).
        self.ahead: tuple[_Checked, str | event_store.Refused] | None = None
        cached = _checked.get(session_id)
        if cached is None and engine is not None and self.ordered[0] > 0:
            cached = _read_stored(engine, session_id)
        records = [(seq, self.by_seq[seq]) for seq in self.ordered]
        try:
            if cached is not None and self.ordered[0] > cached.last_seq:
                self.ahead = (cached, _apply(cached.text, records))
            elif cached is None and self.ordered[0] == 0:
                self.ahead = (_NOTHING_STORED, _replay(records))
        except event_store.Refused as refusal:
            self.ahead = (cached or _NOTHING_STORED, refusal)
        self.known: tuple[int, int] | None = None
        if cached is not None and cached.last_seq is not None and cached.count == cached.last_seq + 1:
            self.known = (cached.count, cached.last_seq)

    def check(self, connection: Connection, rows: list[dict], stored: tuple[int, int | None]) -> None:
        # This runs while the database's write lock is held: the common case (a batch after
        # everything stored) costs no query of its own (`stored` came with its group's reads).
        count, last_seq = stored
        ahead, by_seq, ordered, limits, session_id = self.ahead, self.by_seq, self.ordered, self.limits, self.session_id
        if ahead is not None and (ahead[0].count, ahead[0].last_seq) == (count, last_seq):
            before, outcome = ahead
            added_bytes = sum(len(row["record"]) for row in rows)
            _within_quota(count, len(rows), before.bytes, added_bytes, limits)
            if isinstance(outcome, event_store.Refused):
                raise outcome
            self.stored = _Checked(count + len(rows), ordered[-1], before.bytes + added_bytes, outcome)
            return
        present: set[int] = set()
        if last_seq is not None and ordered[0] <= last_seq:  # a resend, or out of order
            stored_records = connection.execute(
                select(events_table.c.seq, events_table.c.record).where(
                    events_table.c.session_id == session_id,
                    events_table.c.seq.in_(ordered),
                )
            ).all()
            for seq, record in stored_records:
                _same_event(seq, orjson.loads(record), by_seq[seq])
            present = {seq for seq, _record in stored_records}
        new = [row for row in rows if row["seq"] not in present]
        if not new:
            return
        new.sort(key=lambda row: row["seq"])
        base = _caught_up(connection, session_id, ahead[0] if ahead else _checked.get(session_id), count, last_seq)
        stored_bytes = base.bytes if base else event_store.totals(connection, session_id).bytes
        added_bytes = sum(len(row["record"]) for row in new)
        _within_quota(count, len(new), stored_bytes, added_bytes, limits)
        appended = last_seq is None or new[0]["seq"] > last_seq
        if base is not None and appended:
            text = _apply(base.text, [(row["seq"], by_seq[row["seq"]]) for row in new])
        else:
            # Out of order, or not cached: replay everything, as the release will.
            stored_rows = _stored_after(connection, session_id)
            merged = {seq: orjson.loads(record) for seq, record in stored_rows}
            merged.update((row["seq"], by_seq[row["seq"]]) for row in new)
            text = _replay(sorted(merged.items()))
        self.stored = _Checked(*event_store.after_storing((count, last_seq), new), stored_bytes + added_bytes, text)

    def committed(self) -> None:
        if self.stored is not None:
            _checked.remember(self.session_id, self.stored)


def checker(session_id: str, batch: Sequence[Mapping], limits: Limits, engine: Engine | None = None) -> Arrival:
    """The checks of `batch` (items carry `seq`) on its arrival; with the study's `engine`, a
    session this process has not seen is read and replayed before the write lock is taken."""
    return Arrival(session_id, batch, limits, engine)


def _read_stored(engine: Engine, session_id: str) -> _Checked | None:
    """The session's stored state, read and replayed without the write lock, and remembered (it
    is committed); None when nothing is stored or the stored log does not replay (the check
    inside the lock then says why)."""
    with reading(engine) as connection:
        rows = _stored_after(connection, session_id)
    if not rows:
        return None
    try:
        text = _replay([(seq, orjson.loads(record)) for seq, record in rows])
    except event_store.Refused:
        return None
    state = _Checked(len(rows), rows[-1][0], sum(len(record) for _seq, record in rows), text)
    _checked.remember(session_id, state)
    return state


def _caught_up(connection: Connection, session_id: str, earlier: _Checked | None, count: int,
               last_seq: int | None) -> _Checked | None:
    """The session's stored state (`count` events, the highest `last_seq`) from `earlier`, a
    committed state of it this process knows: the events stored after it (by another worker
    process) are read and applied, not the whole session. None when there is no such state, or
    the log changed otherwise (an earlier gap filled): the whole session is replayed then."""
    if earlier is None or earlier.last_seq is None or last_seq is None or last_seq < earlier.last_seq:
        return None
    if (earlier.count, earlier.last_seq) == (count, last_seq):
        return earlier
    rows = _stored_after(connection, session_id, earlier.last_seq)
    if earlier.count + len(rows) != count:
        return None
    text = _apply(earlier.text, [(seq, orjson.loads(record)) for seq, record in rows])
    return _Checked(count, last_seq, earlier.bytes + sum(len(record) for _seq, record in rows), text)


def quota_checker(session_id: str, limits: Limits, table: Table) -> event_store.BatchCheck:
    """The check `event_store.ingest` runs on a batch for `table`: the session's quota, counting
    only the events not stored yet (a resend of the very events stored is acknowledged; another
    event under a stored seq is a Conflict, as in `Arrival`)."""

    def check(connection: Connection, rows: list[dict], _stored: tuple[int, int | None]) -> None:
        sent = {row["seq"]: row for row in rows}
        stored_records = connection.execute(
            select(table.c.seq, table.c.record).where(table.c.session_id == session_id, table.c.seq.in_(list(sent)))
        ).all()
        for seq, record in stored_records:
            _same_event(seq, orjson.loads(record), orjson.loads(sent[seq]["record"]))
        present = {seq for seq, _record in stored_records}
        new = [row for row in rows if row["seq"] not in present]
        if new:
            stored = event_store.totals(connection, session_id, table)
            added_bytes = sum(len(row["record"]) for row in new)
            _within_quota(stored.count, len(new), stored.bytes, added_bytes, limits)

    return check


# What the browser sets and the server never fills in: a resend carries them unchanged.
_BROWSER_KEYS = ("eventName", "eventTimestamp", "textDelta")


def _same_event(seq: int, stored: Mapping, sent: Mapping) -> None:
    """A seq already stored must come back as the same event. Another one under that number was
    made by another page of the session (the link opened in a second browser, where this
    browser's tab guard cannot see it): acknowledging it as a resend would drop it while that
    page says its text is saved, and its later events would edit a text it never showed."""
    if any(stored.get(key) != sent.get(key) for key in _BROWSER_KEYS):
        raise event_store.Conflict(
            f"event seq {seq} is not the event this session stored under that number: the session "
            f"is being written in another window or browser; please continue there"
        )


def full(stored: event_store.Totals, limits: Limits) -> str | None:
    """Why a session that has stored `stored` takes no event more, or None while one fits."""
    try:
        _within_quota(stored.count, 1, stored.bytes, 1, limits)
    except event_store.Full as refusal:
        return str(refusal)
    return None


def _within_quota(count: int, adding: int, stored_bytes: int, added_bytes: int, limits: Limits) -> None:
    if count + adding > limits.max_events:
        raise event_store.Full(
            f"this session has stored {count} events and may store at most "
            f"{limits.max_events}; no more events are accepted"
        )
    if stored_bytes + added_bytes > limits.max_bytes:
        raise event_store.Full(
            f"this session's events would take {stored_bytes + added_bytes} bytes, more than "
            f"the {limits.max_bytes} it may store; no more events are accepted"
        )


def _stored_after(connection: Connection, session_id: str, after: int = -1) -> list[tuple[int, str]]:
    """(seq, record) of the session's stored events numbered after `after`, in order."""
    return connection.execute(
        select(events_table.c.seq, events_table.c.record)
        .where(events_table.c.session_id == session_id, events_table.c.seq > after)
        .order_by(events_table.c.seq)
    ).all()


def _replay(records: list[tuple[int, Mapping]]) -> str:
    seq, first = records[0]
    if first.get("eventName") != "system-initialize" or not isinstance(first.get("currentDoc"), str):
        raise event_store.Refused(
            f"event seq {seq}: the first event of a session must be system-initialize carrying "
            f"the prompt in currentDoc, got {first.get('eventName')!r}"
        )
    return _apply(to_units(first["currentDoc"]), records[1:])


def _apply(text: str, records: Sequence[tuple[int, Mapping]]) -> str:
    for seq, record in records:
        delta = record.get("textDelta")
        if not delta:
            continue
        try:
            text = apply_delta(text, delta["ops"])
        except DeltaError as error:
            raise event_store.Refused(
                f"event seq {seq}: {error}; the text it edits is as the events stored before it "
                f"left it, so this event would make the session impossible to replay"
            ) from None
    return text
