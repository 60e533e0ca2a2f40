"""Ghost text's records on arrival at the event API (study.paradigms.base: `events`).

Blinding (`fill`): a proactive session's records name its paradigm (`proactive.paradigm`,
"L1".."L3", or "L0" in a study that also has proactive conditions) and an L3 suggestion's
strategy ("L1" or "L2"). Sent to the page, those names unblind the comparison: a writer who
reads "L2" in the page source or in an answer knows their arm (issue 25). So the page and the
ghost-text API carry behaviour only (stateful history, staged threshold) and the event API fills
the names in from the session's condition and the server's record of each suggestion, before
the batch is checked. A value the browser did send is left for the batch check, which compares
it with the session.

Provenance (`with_rules`): a proactive event's paradigm is the session's, its `suggestionId` one
this server returned to this session, and the text it shows or inserts what that request
returned (study.paradigms.proactive.curation.provenance), so no client can forge the rows
Table 5 counts. It runs on every session's batches: a Tab or control session's records may not
claim ghost text either. `stored_problems` applies the same rules to a stored session (`study
curate validate STUDY_FOLDER`, study.export.validate): sessions stored before those rules, or
written into the database by other means, are caught there ("proactive-forged").
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson
from sqlalchemy import Connection, select

from study.config import Condition
from study.paradigms.proactive.curation.provenance import PROACTIVE_PARADIGMS, Provenance, issued_texts
from study.server.arrival import CACHED_SESSIONS
from study.server.session_memory import SessionMemory
from study.store import events as event_store
from study.store import reading
from study.store.db import events as events_table
from study.store.db import suggestion_requests


def fill(engine, session_id: str, condition: Condition, body: object) -> None:
    """Give every record of `body` (an event batch, as parsed) that carries the proactive
    extension its paradigm, and each suggestion-open its strategy, in place. Anything not
    shaped like a batch is left as it is for the schema check to name."""
    if not isinstance(body, dict) or not isinstance(body.get("events"), list):
        return
    extensions = [
        (event, event["proactive"]) for event in body["events"]
        if isinstance(event, dict) and isinstance(event.get("proactive"), dict)
    ]  # fmt: skip
    opened = {}
    for event, extension in extensions:
        extension.setdefault("paradigm", condition.paradigm)
        suggestion_id = extension.get("suggestionId")
        if event.get("eventName") == "suggestion-open" and "strategy" not in extension and type(suggestion_id) is int:
            opened.setdefault(suggestion_id, []).append(extension)
    if opened:
        for suggestion_id, strategy in _strategies(engine, session_id, list(opened)).items():
            for extension in opened[suggestion_id]:
                extension["strategy"] = strategy


def _strategies(engine, session_id: str, suggestion_ids: list[int]) -> dict[int, str]:
    """The strategy each of this session's suggestions was made with, as the ghost-text API
    recorded it (study.paradigms.proactive.api)."""
    with reading(engine) as connection:
        rows = connection.execute(
            select(suggestion_requests.c.id, suggestion_requests.c.parameters)
            .where(suggestion_requests.c.session_id == session_id)
            .where(suggestion_requests.c.id.in_(suggestion_ids))
        ).all()
    found = {}
    for row in rows:
        strategy = json.loads(row.parameters or "{}").get("strategy")
        if isinstance(strategy, str):
            found[row.id] = strategy
    return found


def with_rules(
    check: event_store.BatchCheck, session_id: str, paradigm: str, batch: Sequence[Mapping]
) -> event_store.BatchCheck:
    """`check` followed by the provenance rules, for a session whose condition's paradigm is
    `paradigm`. Raises Refused at once when an event claims another paradigm (no database
    work); the suggestion rules need the session's stored state and run in the transaction."""
    ordered = sorted(batch, key=lambda item: item["seq"])
    claims = Provenance(paradigm, {})
    cited = False
    cited_ids: set[int] = set()  # a non-integer id is refused by the rules (Provenance)
    carried = paradigm in PROACTIVE_PARADIGMS  # every record must carry the extension
    for item in ordered:
        if "proactive" not in item and not carried:
            continue  # a Tab or control session's usual record: nothing claimed, nothing cited
        problem = next(iter(claims.check({**item, "proactive": _without_id(item)})), None)
        if problem is not None:
            raise event_store.Refused(_refusal(item["seq"], problem))
        extension = item.get("proactive") or {}
        for key in ("suggestionId", "chatId"):
            value = extension.get(key)
            cited = cited or value is not None
            if type(value) is int:
                cited_ids.add(value)

    # What the rules followed, once this batch is committed (`committed`).
    after: list[_Followed | None] = []

    def uncited(connection: Connection, rows: list[dict], stored: tuple[int, int | None]) -> None:
        check(connection, rows, stored)
        # Records that cite nothing change nothing the rules follow: the session's followed
        # state still holds after them.
        followed = _followed.get(session_id)
        if followed is not None:
            moved = followed.after(stored, ordered)
            after.append(dataclasses.replace(followed, stored=moved) if moved else None)

    def both(connection: Connection, rows: list[dict], stored: tuple[int, int | None]) -> None:
        check(connection, rows, stored)
        followed = _followed.get(session_id)
        moved = followed.after(stored, ordered) if followed is not None else None
        if moved is not None:
            # Only the batch, from where the session's stored records left the rules.
            provenance = followed.resumed(paradigm, _issued(connection, session_id, sorted(cited_ids)))
            for item in ordered:
                problems = provenance.check(item)
                if problems:
                    raise event_store.Refused(_refusal(item["seq"], problems[0]))
            after.append(_Followed.of(provenance, moved))
            return
        stored_records = dict(
            connection.execute(
                select(events_table.c.seq, events_table.c.record)
                .where(events_table.c.session_id == session_id)
                .where(events_table.c.record.like('%"suggestionId"%') | events_table.c.record.like('%"chatId"%'))
            ).all()
        )
        issued = _issued(connection, session_id)
        present = set(
            connection.execute(
                select(events_table.c.seq).where(
                    events_table.c.session_id == session_id,
                    events_table.c.seq.in_([item["seq"] for item in ordered]),
                )
            ).scalars()
        )
        merged = {seq: orjson.loads(record) for seq, record in stored_records.items()}
        new = [item for item in ordered if item["seq"] not in present]
        merged.update((item["seq"], item) for item in new)
        provenance = Provenance(paradigm, issued)
        for seq in sorted(merged):
            problems = provenance.check(merged[seq])
            if problems and seq not in stored_records:
                raise event_store.Refused(_refusal(seq, problems[0]))
        after.append(_Followed.of(provenance, event_store.after_storing(stored, new)))

    def committed() -> None:
        """Called by the event API once the batch is stored, and only then."""
        if after:
            _follow(session_id, after[-1])

    rules = both if cited else uncited
    rules.committed = committed
    return rules


# What the rules followed through each session's stored records, per process: a cited batch
# (a suggestion shown or accepted) is then checked on its own, where reading and replaying every
# cited record the session stored costs O(events) with the write lock held (a cited batch of a
# ghost-text session at 2,100 events: 24.6 ms of CPU, 3.1 ms followed; medians of 15 in one
# process, 2026-11-27). An entry holds for the stored (count, highest seq) it names, confirmed
# under the lock; a session whose records moved on elsewhere (another worker process, a batch
# that was not committed) is replayed from the database as before.
_followed = SessionMemory(CACHED_SESSIONS)


@dataclass(frozen=True)
class _Followed:
    stored: tuple[int, int]  # the session's (count, highest seq) the state is for
    opened: frozenset[int]
    inserted: tuple[tuple[int, str], ...]

    @classmethod
    def of(cls, provenance: Provenance, stored: tuple[int, int]) -> _Followed:
        return cls(stored, frozenset(provenance.opened), tuple(provenance.inserted.items()))

    def after(self, stored: tuple[int, int | None], ordered: Sequence[Mapping]) -> tuple[int, int] | None:
        """The stored (count, highest seq) once `ordered` (a batch, in seq order) is stored, when
        this state is for `stored` and the batch comes after all of it; None otherwise."""
        if stored != self.stored or not ordered or ordered[0]["seq"] <= self.stored[1]:
            return None
        return (self.stored[0] + len({item["seq"] for item in ordered}), ordered[-1]["seq"])

    def resumed(self, paradigm: str, issued: Mapping[int, str]) -> Provenance:
        provenance = Provenance(paradigm, issued)
        provenance.opened = set(self.opened)
        provenance.inserted = dict(self.inserted)
        return provenance


def _follow(session_id: str, followed: _Followed | None) -> None:
    if followed is None:
        _followed.forget(session_id)
    else:
        _followed.remember(session_id, followed)


def _issued(connection: Connection, session_id: str, ids: list[int] | None = None) -> dict[int, str]:
    """issued_texts of this session's requests: all of them, or those among `ids` (the ids a
    batch cites)."""
    query = select(suggestion_requests.c.id, suggestion_requests.c.suggestions, suggestion_requests.c.error).where(
        suggestion_requests.c.session_id == session_id
    )
    if ids is not None:
        query = query.where(suggestion_requests.c.id.in_(ids))
    return issued_texts(connection.execute(query).all())


def _without_id(item: Mapping) -> Mapping | None:
    # The paradigm rule alone: the suggestion rules need the stored state.
    extension = item.get("proactive")
    if extension is None:
        return None
    return {key: value for key, value in extension.items() if key not in ("suggestionId", "chatId")}


# A refusal goes to the participant's browser, which is never told its paradigm (issue 25):
# these say what is wrong without naming it. The researcher's checks (stored_problems) do.
_BLIND = {
    "proactive": "is missing: every event of this session carries it",
    "proactive.paradigm": "is not this session's paradigm; send none (the server fills it in)",
}


def _refusal(seq: int, problem) -> str:
    return f"event seq {seq}: {problem.field} {_BLIND.get(problem.field, problem.message)}"


def stored_problems(connection, session: dict, paradigm: str | None, records: list[dict]):
    """What of a stored session's `records` (as exported) breaks the rules above, as (index in
    `records` or None, code, field, message, fix or ""); `paradigm` None: the session's
    condition is no longer in study.toml."""
    if paradigm is None:
        yield (None, "proactive-forged", "condition",
               f"{session['condition']!r} is not a condition of study.toml, so its events "
               "cannot be checked against it", "put the condition back in study.toml")  # fmt: skip
        return
    provenance = Provenance(paradigm, _issued(connection, session["session_id"]))
    for index, record in enumerate(records):
        for problem in provenance.check(record):
            yield (index, "proactive-forged", problem.field, problem.message, "")
