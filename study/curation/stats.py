"""One row of statistics per session, and Table 3-style group means.

`session_stats` is pure (a parsed session in, a row out). The columns:
- `session_id`, `format`;
- the official metadata (`study.curation.metadata`): num_event, num_query, num_selected,
  perc_selected, num_cursor, time, written_by_human, first_timestamp, last_timestamp;
- `final_words`, `writer_share_final`, `distinct_2` (`study.curation.metrics`, from the replayed
  final text without the prompt);
- `equality`, `mutuality` (section 5.1.3 over event blocks; mutuality with the chosen sets);
- `blocks_<name>` for every Table 2 block and `blocks_unmatched` (`study.curation.blocks`);
- `typed_share`, `assistant_share`, `outside_share` (% of the final text, prompt excluded) and
  `outside_inserts` (inserts of text from outside the study): `study.curation.origin`.

`Summary` groups rows with per-session metadata (genre, prompt_code, worker_id, temperature,
frequency_penalty, as in the release's metadata.csv) and averages them like Table 3. Readings:
"acceptance (%)" is the mean of the per-session `perc_selected` over all sessions, a session
without queries counting as 0 as the release writes it: the paper's definition (the mean of
the release's `perc_selected` gives Table 3's 75.7 / 67.6 / 72.3 exactly). "acceptance,
queried sessions (%)" is the other reading, over sessions with at least one query only (where
the rate is defined); it is higher, since the left-out sessions count 0 in the paper's.
"written by writers (%)" is the mean of `writer_share_final` (the final text, prompt excluded);
"length" the mean of `final_words`.
"""

from __future__ import annotations

import csv
import math
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO

from study import out_file
from study.curation.blocks import BLOCK_NAMES, UNMATCHED, BlockTokens
from study.curation.formats import Session
from study.curation.metadata import MetadataTally
from study.curation.metrics import (
    DEFAULT_MUTUALITY,
    distinct_n,
    equality,
    final_words,
    mutuality,
    writer_share_final,
)
from study.curation.origin import COLUMNS as ORIGIN_COLUMNS
from study.curation.origin import Attribution

METADATA_COLUMNS = (
    "num_event", "num_query", "num_selected", "perc_selected", "num_cursor", "time",
    "written_by_human", "first_timestamp", "last_timestamp",
)  # fmt: skip
BLOCK_COLUMNS = tuple(f"blocks_{name}" for name in BLOCK_NAMES + (UNMATCHED,))
COLUMNS = (
    ("session_id", "format") + METADATA_COLUMNS
    + ("final_words", "writer_share_final", "equality", "mutuality", "distinct_2") + BLOCK_COLUMNS
    + ORIGIN_COLUMNS
)  # fmt: skip

# Figure 2 of the paper: the two decoding settings per genre, keyed by (temperature, FP).
RANDOMNESS = {
    (0.2, 0.5): "low", (0.9, 0.5): "high",  # argumentative
    (0.3, 0.0): "low", (0.75, 1.0): "high",  # creative
}  # fmt: skip
GROUPINGS = {
    "genre": "genre",
    "condition": "condition",
    "prompt": "prompt_code",
    "writer": "worker_id",
}
# Table 3's columns (and the section 5.1.3 scores), as (heading, stats column).
SUMMARY_COLUMNS = (
    ("time (min)", "time"),
    ("length (words)", "final_words"),
    ("queries", "num_query"),
    ("acceptance (%)", "perc_selected"),
    ("written by writers (%)", "writer_share_final"),
    ("equality", "equality"),
    ("mutuality", "mutuality"),
    ("acceptance, queried sessions (%)", "perc_selected_queried"),
)


def session_stats(session: Session, mutuality_sets: str = DEFAULT_MUTUALITY) -> dict:
    """The statistics row of one parsed session (see the module docstring for the columns)."""
    measure = SessionMeasure(session.session_id, session.format, mutuality_sets)
    for event in session.events:
        measure.add(event)
    return measure.row()


class SessionMeasure:
    """`session_stats` fed one event at a time, in line order: `study curate stats --validate`
    measures each record while the validator holds it (study.curation.onepass), and no
    session is held whole. Memory: the session's text and its counts."""

    def __init__(
        self, session_id: str, format_name: str, mutuality_sets: str = DEFAULT_MUTUALITY
    ) -> None:
        self.session_id, self.format, self.mutuality_sets = session_id, format_name, mutuality_sets
        self.metadata = MetadataTally()
        self.tokens = BlockTokens()
        # The final text and where it came from (typed, assistant, outside), from one replay.
        self.attribution = Attribution()

    def add(self, event: Mapping) -> None:
        """Count one more event; raises ValueError, KeyError or TypeError (as `session_stats`
        does) when the session cannot be measured."""
        self.metadata.add(event)
        self.tokens.add(event)
        self.attribution.add(event)

    def row(self) -> dict:
        row: dict = {"session_id": self.session_id, "format": self.format}
        row.update(self.metadata.result())
        document, found = self.attribution.result()
        counts = self.tokens.counts()
        row["final_words"] = final_words(document)
        row["writer_share_final"] = writer_share_final(document)
        row["equality"] = equality(counts)
        row["mutuality"] = mutuality(counts, sets=self.mutuality_sets)
        row["distinct_2"] = distinct_n(document.without_prompt(), 2)
        for name, count in counts.items():
            row[f"blocks_{name}"] = count
        row.update(found.row())  # beside the paper's writer share
        return row


def condition_of(temperature: object, frequency_penalty: object) -> str:
    """`high`/`low` randomness (Figure 2), or `T=<t> FP=<fp>` for other settings."""
    try:
        key = (round(float(temperature), 3), round(float(frequency_penalty), 3))
    except (TypeError, ValueError):
        return "unknown"
    return RANDOMNESS.get(key, f"T={key[0]:g} FP={key[1]:g}")


class Summary:
    """Running group means (memory: one accumulator per group, whatever the corpus size)."""

    def __init__(self, by: str, metadata: Mapping[str, Mapping]) -> None:
        if by not in GROUPINGS:
            raise ValueError(f"cannot group by {by!r}; choose one of {', '.join(GROUPINGS)}")
        self.by, self.metadata = by, metadata
        self.sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.sessions: dict[str, int] = defaultdict(int)

    def add(self, row: Mapping) -> None:
        meta = self.metadata.get(row["session_id"], {})
        group = meta.get(GROUPINGS[self.by]) or "(no metadata)"
        for key in (group, "combined"):
            self.sessions[key] += 1
            for _, column in SUMMARY_COLUMNS:
                if column == "perc_selected_queried":
                    if not row.get("num_query"):
                        continue  # no queries: no rate in this reading (module docstring)
                    column, value = "perc_selected_queried", row.get("perc_selected")
                else:
                    value = row.get(column)
                if value is not None and not (isinstance(value, float) and math.isnan(value)):
                    self.sums[key][column] += value
                    self.counts[key][column] += 1

    def table(self) -> list[dict]:
        """One dict per group (sorted, `combined` last): sessions and the mean of each column."""
        out = []
        for group in sorted(g for g in self.sessions if g != "combined") + ["combined"]:
            if group not in self.sessions:
                continue
            entry: dict = {self.by: group, "sessions": self.sessions[group]}
            for heading, column in SUMMARY_COLUMNS:
                n = self.counts[group][column]
                entry[heading] = self.sums[group][column] / n if n else math.nan
            out.append(entry)
        return out


def render_table(rows: list[dict], digits: int = 1) -> str:
    """A plain-text table with right-aligned numbers."""
    if not rows:
        return "(no sessions)"
    headings = list(rows[0])
    cells = [[_cell(row[h], digits) for h in headings] for row in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headings)]
    # A blank cell (a figure a row does not have) or an unknown one (None, shown "–") keeps a
    # column of numbers right-aligned.
    numeric = [all(isinstance(row[h], (int, float)) or row[h] in ("", None) for row in rows)
               for h in headings]  # fmt: skip

    def line(values: list[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    return "\n".join([line(headings)] + [line(c) for c in cells])


def _cell(value: object, digits: int) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else (f"{value:.{digits}f}" if abs(value) >= 1 else f"{value:.2f}")
        )
    return str(value)


class RowWriter:
    """Writes stats rows as they come: to a `.csv` or `.parquet` path (Parquet in batches),
    or as CSV to an open text stream such as stdout (left open).

    A path is written whole or not at all: rows go to a hidden `.<name>.partial` beside it,
    which replaces the file when the writer is closed, and is removed when the run stops
    with an error (Ctrl-C, a crash). A file that stopped half-way would read as complete with
    the last sessions missing, and would have overwritten the last good one."""

    BATCH = 1000

    def __init__(self, target: str | os.PathLike | TextIO) -> None:
        self._batch: list[dict] = []
        self._writer = None
        if hasattr(target, "write"):
            self.path, self.parquet, self._owned = None, False, False
            self._handle = target
        else:
            self.path = Path(target)
            self._partial = out_file.partial_for(self.path, f".{self.path.name}.partial")
            self.parquet = self.path.suffix.lower() == ".parquet"
            self._owned = not self.parquet
            if not self.parquet:
                self._handle = open(self._partial, "w", newline="", encoding="utf-8")
        if not self.parquet:
            self._csv = csv.DictWriter(self._handle, fieldnames=COLUMNS, extrasaction="ignore")
            self._csv.writeheader()

    def write(self, row: Mapping) -> None:
        if not self.parquet:
            self._csv.writerow(row)
            return
        self._batch.append(row)
        if len(self._batch) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._batch:
            return
        table = pa.Table.from_pylist(
            [{c: row.get(c) for c in COLUMNS} for row in self._batch], schema=_arrow_schema()
        )
        if self._writer is None:
            self._writer = pq.ParquetWriter(self._partial, table.schema)
        self._writer.write_table(table)
        self._batch = []

    def close(self) -> None:
        if not self.parquet:
            if self._owned:
                self._handle.close()
                out_file.place(self._partial, self.path)
            else:
                self._handle.flush()
            return
        self._flush()
        if self._writer is None:  # no rows: still write a file with the columns
            import pyarrow.parquet as pq

            pq.write_table(_arrow_schema().empty_table(), self._partial)
        else:
            self._writer.close()
        out_file.place(self._partial, self.path)

    def discard(self) -> None:
        """Stop without writing the file: the partial rows are removed, a previous file kept."""
        if self.path is None:
            self._handle.flush()
            return
        if self._owned:
            self._handle.close()
        elif self._writer is not None:
            self._writer.close()
        out_file.discard(self._partial, self.path)

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, kind, *exc) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


def _arrow_schema():
    import pyarrow as pa

    floats = {"time", "writer_share_final", "equality", "mutuality", "distinct_2", *ORIGIN_COLUMNS[:3]}
    fields = []
    for column in COLUMNS:
        if column in ("session_id", "format"):
            fields.append(pa.field(column, pa.string()))
        elif column in floats:
            fields.append(pa.field(column, pa.float64()))
        else:
            fields.append(pa.field(column, pa.int64()))
    return pa.schema(fields)


def iter_rows(
    sessions: Iterable[Session], mutuality_sets: str = DEFAULT_MUTUALITY
) -> Iterable[dict]:
    for session in sessions:
        yield session_stats(session, mutuality_sets)
