"""What a within-subjects release's card says of its design (study.release.within), beside the
card's "Collection process": that the sessions come in sets, one per arm for each writer, in a
Latin square's order, and each arm list and row with how many released participants began it,
completed every arm and are part-way. Without it a reader of metadata.csv would compare the
arms as independent groups and could not check the counterbalancing.
"""

from __future__ import annotations

from study.export.within_design import row_label
from study.release.facts import ReleaseFacts
from study.release.within import COUNTED, WITHIN
from study.server.within import square_before

FILE = (
    f"- `{WITHIN}`: the within-subjects design (schema: `schemas/within-release.schema.json`): "
    "each participant (their `worker_id` pseudonym) per genre with the arm list and Latin-square "
    "row they began with and their order, each of their released sessions with its arm and its "
    "position in that order (1, 2, ...); then each list and row with its counts of "
    f"{COUNTED}."
)


def collection(facts: ReleaseFacts) -> str:
    """The card's paragraph on the design ("" between subjects)."""
    if not facts.study or facts.study.assignment != "within":
        return ""
    # A reader pairing sessions needs to know they come in sets per writer, and in which order.
    text = (
        "**Arms were assigned within subjects:** each writer (`worker_id` in `metadata.csv`) "
        "was to write one session in every arm of the prompt's genre, in the order of a row of "
        "Williams' design (every arm in every position, and directly after every other arm, "
        "equally often: one Latin square for an even number of arms, two for an odd one, each "
        "row then its mirror image; rows from 0; a row marked cyclic is of the cyclic square an "
        "odd number of arms took before), the r-th writer to begin with an arm list taking row r "
        "modulo the rows. Compare "
        "a writer's sessions with each other (paired), not as independent groups"
    )
    if facts.within is None:
        return text + "; `timestamp` gives each writer's order.\n\n"
    text += (
        f": `{WITHIN}` gives each writer's arm list, row and order, and each session's arm and "
        "position in it. The arm lists and rows, with how many of the "
        f"{COUNTED} began each (writers who withdrew, or none of whose sessions was released, "
        "are not counted), completed a released session in every arm, and are part-way (they "
        "stopped, had not come back, or a session of theirs was left out):\n\n"
    )
    rows = ["| genre | arm list | row | order | began | completed every arm | part-way |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    for entry in facts.within["lists"]:
        row = row_label(entry["row"], entry.get("square") or square_before(len(entry["arms"])))
        rows.append(f"| {entry['genre']} | {', '.join(entry['arms'])} | {row} | {' → '.join(entry['order'])} "
                    f"| {entry['began']} | {entry['completed_every_arm']} | {entry['part_way']} |")  # fmt: skip
    return text + "\n".join(rows) + "\n\n"
