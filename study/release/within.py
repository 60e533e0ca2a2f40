"""within.json: a within-subjects study's design, carried by its release (schemas/within-release.schema.json).

A reader of the published data needs the design to analyse it paired and to check the
counterbalancing: which participant wrote which sessions, in which arm, at which position of
their order, and the arm list and Latin-square row that order came from (study.server.within).
The build takes the design as it ran from the study database (study.export.within_design, read
by study.release.source with the model calls) and keeps the released part of it: released
sessions under their released ids, participants under their pseudonyms (metadata.csv's
worker_id), never a worker id or access code. A participant with no released session (withdrawn,
left out, or who finished none) is not a released participant: the counts are of released
participants, and the file says so.

`read` gives the report the same WithinDesign it reads from a study folder, so `study report`
on a release shows the same "Within-subjects design" section; `problems` is `study release
verify`'s check that the file agrees with its schema, with metadata.csv and with itself.
Between subjects a release has no within.json: nothing of this changes it.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

from study.export.within_design import Participant, WithinDesign, list_order, order_of
from study.release.csvtable import CsvError, read_table
from study.release.layout import METADATA_CSV
from study.server.within import square_before, square_rows

WITHIN = "within.json"
SCHEMA = "within-release.schema.json"
FORMAT = "study-within-1"
COUNTED = "released participants"
DESCRIPTION = (
    "The within-subjects design (schemas/within-release.schema.json): each released participant "
    "(their pseudonym, metadata.csv's worker_id) per genre, with the arm list and Latin-square "
    "row they began with, their order, and each of their released sessions with its arm and its "
    "position in their order (1, 2, ...); then each list and row with how many released "
    "participants began it, completed every arm and are part-way."
)


class WithinFileError(ValueError):
    pass


def collect(design: WithinDesign | None, released: dict[str, str], pseudonyms: dict[str, str]) -> dict | None:
    """within.json's content for a within-subjects study's `design` as the release's source read
    it (study.release.source, with the model calls); None between subjects (`design` None).
    `released`: study session id -> released id; `pseudonyms`: study session id -> its writer's
    pseudonym, for the sessions with a released log."""
    if design is None:
        return None
    participants = []
    for person in design.participants:
        # Their released sessions, by position; sessions of no released log are not in the release.
        mine = sorted((person.position[s], arm, s) for arm, s in person.completed.items() if s in pseudonyms)
        if not mine:
            continue
        participants.append({
            "worker_id": pseudonyms[mine[0][2]], "genre": person.genre, "arms": list(person.arms),
            "row": person.row, "square": person.square, "order": order_of(person.arms, person.row, person.square),
            "sessions": [{"session_id": released[s], "condition": arm, "position": position}
                         for position, arm, s in mine],
        })  # fmt: skip
    return {"format": FORMAT, "assignment": "within", "counted": COUNTED, "arms": design.arms,
            "lists": lists(participants), "participants": participants}  # fmt: skip


def lists(participants: list[dict]) -> list[dict]:
    """Each arm list and row begun, with its counts (WithinDesign.lists' order)."""
    groups: dict[tuple, list[dict]] = {}
    for person in participants:
        groups.setdefault((person["genre"], tuple(person["arms"]), person["row"], _square(person)), []).append(person)
    out = []
    for genre, arms, row, square in sorted(groups, key=list_order):
        people = groups[(genre, arms, row, square)]
        complete = sum(1 for p in people if _every_arm(p))
        entry = {"genre": genre, "arms": list(arms), "row": row, "order": order_of(arms, row, square),
                 "began": len(people), "completed_every_arm": complete, "part_way": len(people) - complete}  # fmt: skip
        # A file built before squares were written names none, and its lists are still its own.
        out.append({**entry, "square": square} if any("square" in p for p in people) else entry)
    return out


def _square(person: dict) -> str:
    """A participant's square; a within.json built before squares were written has none: its
    rows are of the square of that version (study.server.within.square_before)."""
    return person.get("square") or square_before(len(person["arms"]))


def _every_arm(person: dict) -> bool:
    return set(person["arms"]) <= {s["condition"] for s in person["sessions"]}


def write(staging: Path, document: dict | None) -> list[str]:
    """Write within.json (nothing between subjects: `document` None); returns what it wrote."""
    if document is None:
        return []
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    (staging / WITHIN).write_text(text, encoding="utf-8")
    return [WITHIN]


def summary(document: dict) -> dict:
    """datapackage.json's word on the design (its `study.design`): a reader of the package alone
    learns that the sessions come in sets per participant, and how they were counterbalanced."""
    totals = Counter()
    for entry in document["lists"]:
        totals.update({key: entry[key] for key in ("began", "completed_every_arm", "part_way")})
    return {"assignment": "within", "file": WITHIN, "counted": COUNTED, "lists": document["lists"],
            "participants": {key: totals[key] for key in ("began", "completed_every_arm", "part_way")}}  # fmt: skip


def read(directory: Path) -> WithinDesign | None:
    """The release's design as study.export.within_design gives it for a study folder, with
    released session ids (None: a release without within.json, between subjects)."""
    document = _load(directory)
    if document is None:
        return None
    found = _schema_problems(document)
    if found:
        raise WithinFileError(f"{directory / WITHIN}: {found[0]} (`study release verify` lists every problem)")
    people = []
    for person in document["participants"]:
        sessions = person["sessions"]
        people.append(Participant(person["genre"], tuple(person["arms"]), person["row"],
                                  {s["condition"]: s["session_id"] for s in sessions},
                                  {s["session_id"]: s["position"] for s in sessions}, _square(person)))  # fmt: skip
    return WithinDesign(people, list(document["arms"]))


def _load(directory: Path) -> dict | None:
    path = directory / WITHIN
    if not path.is_file():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise WithinFileError(f"{path}: not JSON ({error})") from None
    if not isinstance(document, dict):
        raise WithinFileError(f"{path}: not a JSON object")
    return document


@cache
def _validator():
    from jsonschema import Draft202012Validator

    from study.paths import schemas_dir

    return Draft202012Validator(json.loads((schemas_dir() / SCHEMA).read_text(encoding="utf-8")))


def _schema_problems(document: dict) -> list[str]:
    from study.curation.schema import field_path

    errors = sorted(_validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{field_path(e.absolute_path)}: {e.message[:200]}" for e in errors]


def problems(directory: Path) -> list[str]:
    """What is wrong with within.json: not its schema's, or at odds with metadata.csv (a session
    missing, another writer or arm) or with itself (an order not its row's, a position twice,
    counts that are not its participants')."""
    try:
        document = _load(directory)
    except WithinFileError as error:
        return [str(error).replace(f"{directory}/", "", 1)]
    if document is None:
        return []
    found = [f"{WITHIN}: {problem}" for problem in _schema_problems(document)]
    if found:
        return found
    try:
        _, numbered = read_table(directory / METADATA_CSV)
    except (OSError, CsvError):
        return []  # the layout check says what is wrong with metadata.csv
    metadata = {row.get("session_id", ""): row for _, row in numbered}
    found = _rows_beyond(document)
    if found:
        return found  # no order, and so no list, to check them against
    listed: set[str] = set()
    for index, person in enumerate(document["participants"]):
        where = f"{WITHIN}: participants[{index}]"
        expected = order_of(tuple(person["arms"]), person["row"], _square(person))
        if person["order"] != expected:
            found.append(f"{where}: order is not row {person['row']} of the {_square(person)} square over its "
                         f"arms ({' → '.join(expected)})")  # fmt: skip
        found += [f"{where}: arm {arm} is not among the study's arms" for arm in person["arms"]
                  if arm not in document["arms"]]  # fmt: skip
        for count, what in ((Counter(s["position"] for s in person["sessions"]), "position"),
                            (Counter(s["condition"] for s in person["sessions"]), "condition")):
            found += [f"{where}: two sessions at {what} {value}" for value, n in count.items() if n > 1]
        for number, session in enumerate(person["sessions"]):
            found += _session_problems(f"{where}.sessions[{number}]", session, person, metadata, listed)
    found += [f"{WITHIN}: session {s} of {METADATA_CSV} is in no participant's sessions"
              for s in sorted(set(metadata) - listed)]  # fmt: skip
    if document["lists"] != lists(document["participants"]):
        found.append(f"{WITHIN}: lists do not count its participants (as they would: "
                     f"{json.dumps(lists(document['participants']))})")  # fmt: skip
    return found


def _rows_beyond(document: dict) -> list[str]:
    found = []
    for index, person in enumerate(document["participants"]):
        rows = len(square_rows(len(person["arms"]), _square(person)))
        if person["row"] is not None and person["row"] >= rows:
            found.append(f"{WITHIN}: participants[{index}]: row {person['row']}, but the {_square(person)} "
                         f"square over its {len(person['arms'])} arms has rows 0 to {rows - 1}")  # fmt: skip
    return found


def _session_problems(where: str, session: dict, person: dict, metadata: dict, listed: set[str]) -> list[str]:
    session_id, arm = session["session_id"], session["condition"]
    if session_id in listed:
        return [f"{where}: session {session_id} is listed twice"]
    listed.add(session_id)
    row = metadata.get(session_id)
    if row is None:
        return [f"{where}: session {session_id} has no row in {METADATA_CSV}"]
    found = []
    if arm not in person["arms"]:
        found.append(f"{where}: condition {arm} is not in the participant's arms")
    if session["position"] > len(person["arms"]):
        found.append(f"{where}: position {session['position']}, but the participant has {len(person['arms'])} arms")
    if row.get("worker_id") != person["worker_id"]:
        found.append(f"{where}: {METADATA_CSV} names another writer of session {session_id} "
                     f"({row.get('worker_id')}, not {person['worker_id']})")  # fmt: skip
    if row.get("condition") != arm:
        found.append(f"{where}: {METADATA_CSV} gives session {session_id} condition "
                     f"{row.get('condition')!r}, not {arm!r}")  # fmt: skip
    if row.get("genre") and row["genre"] != person["genre"]:
        found.append(f"{where}: {METADATA_CSV} gives session {session_id} genre {row['genre']!r}, not {person['genre']!r}")
    return found
