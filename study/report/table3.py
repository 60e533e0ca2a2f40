"""CoAuthor's Table 3 ("Overall statistics of CoAuthor") from a folder of sessions, beside the
paper's figures.

The means are the curation core's (`study.curation.stats.Summary` by genre, the same readings
as `study curate stats --summary genre`): time is the span of the log's events in minutes,
length the words of the final text without the prompt, queries the release's `num_query`
(suggestion-open events), acceptance the mean of per-session `perc_selected` over all sessions
(a session without a query counts 0, as the release writes it: the paper's definition, which
gives its 75.7 / 67.6 / 72.3 from the release's own `perc_selected`), written by writers the
writer's share of the final text. The last column, not in the paper, is acceptance over
sessions with at least one query only. Prompts, writers and sessions are counted from the
metadata of the sessions present; where no session's metadata names a writer (no `worker_id`
column) or a prompt, that count is unknown (None), not 0.

Two of the paper's figures are not reproduced by any reading, and are left as they are:
writers (the release's metadata holds 57 creative and 47 argumentative worker ids, the paper
says 58 and 49; 63 in all either way) and length (the paper's table says 446 / 380 / 418 words
while its caption says 366, and the final texts without the prompt average about 367 words).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from study.curation.stats import Summary

COLUMNS = ("prompts", "writers", "sessions", "time (min)", "length (words)", "queries",
           "acceptance (%)", "written by writers (%)",
           "acceptance, queried sessions (%)")  # fmt: skip
# Table 3 of Lee, Liang & Yang (CHI 2022), over the full release of 1,445 sessions.
PAPER = {
    "creative": (10, 58, 830, 11.6, 446, 12.8, 75.7, 72.7),
    "argumentative": (10, 49, 615, 10.6, 380, 10.3, 67.6, 72.5),
    "combined": (20, 63, 1445, 11.2, 418, 11.8, 72.3, 72.6),
}  # the eight columns the paper prints; COLUMNS[-1] is ours only
GENRES = ("creative", "argumentative", "combined")


def table3(rows: Iterable[Mapping], metadata: Mapping[str, Mapping]) -> list[dict]:
    """One dict per genre (creative, argumentative, combined) with COLUMNS, from stats rows
    (`study.curation.stats.session_stats`) and the release's metadata (`read_metadata`)."""
    summary = Summary("genre", metadata)
    prompts: dict[str, set] = {g: set() for g in GENRES}
    writers: dict[str, set] = {g: set() for g in GENRES}
    for row in rows:
        summary.add(row)
        meta = metadata.get(row["session_id"], {})
        for genre in (meta.get("genre") or "(no metadata)", "combined"):
            prompts.setdefault(genre, set()).add(meta.get("prompt_code"))
            writers.setdefault(genre, set()).add(meta.get("worker_id"))
    # Metadata without a worker_id (or prompt_code) column cannot count writers (prompts):
    # "0 writers" would read as a measured figure.
    known = {key: any(meta.get(key) for meta in metadata.values())
             for key in ("prompt_code", "worker_id")}  # fmt: skip
    out = []
    for entry in summary.table():
        genre = entry["genre"]
        out.append({
            "genre": genre,
            "prompts": len(prompts[genre] - {None, ""}) if known["prompt_code"] else None,
            "writers": len(writers[genre] - {None, ""}) if known["worker_id"] else None,
            "sessions": entry["sessions"],
            **{heading: entry[heading] for heading in COLUMNS[3:]},
        })  # fmt: skip
    order = {g: i for i, g in enumerate(GENRES)}
    return sorted(out, key=lambda r: order.get(r["genre"], -1))


def with_paper(ours: list[dict]) -> list[dict]:
    """Our rows and the paper's, interleaved per genre, with a `source` column."""
    out = []
    for row in ours:
        out.append({"genre": row["genre"], "source": "ours", **{c: row[c] for c in COLUMNS}})
        if row["genre"] in PAPER:
            paper = dict(zip(COLUMNS[:-1], PAPER[row["genre"]], strict=True))
            out.append({"genre": row["genre"], "source": "paper", **paper})
            out[-1][COLUMNS[-1]] = ""  # the paper gives one reading only
    return out
