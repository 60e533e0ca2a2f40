"""Curation of CoAuthor-format session logs: check, replay, abstract and measure them.

Researchers curate what they collected (and the public CoAuthor release, Lee, Liang & Yang,
CHI 2022) before analysis and release. Data flows one way: session files -> `formats` ->
pure functions over parsed events -> writers in `stats` and the CLI.

The pieces, one concept per module:

- `formats`: find `.jsonl` session files, detect their format per file (`coauthor-2021`: the
  2021 release and this project's export, 17 keys in order; `coauthor-interface`: the later
  interface, `originalSuggestions` instead of `eventNum`), read them with orjson.
- `schema`: the JSON Schemas `schemas/coauthor-*.schema.json` (the single source of truth for
  a record), loaded into a local `referencing` registry that never touches the network, plus a
  compiled fast check so millions of events validate quickly; jsonschema words the errors.
- `validate`: schema + the format's invariants (first event, eventNum order, deltas that apply,
  accepted suggestions matching the shown list by text, ...). Errors and warnings are separate;
  each issue names file, line, field and the fix.
- `replay`: apply Quill deltas from the prompt (`currentDoc` of the first event) to get the
  text at any event, with the author of every character (prompt / writer / suggestion); an
  embed (a pasted image) is one character, as in Quill.
- `suggestions`: which shown suggestion an inserted text is (by text, not index).
- `blocks`: Table 2's event blocks (hover events dropped; unmatched events kept apart).
- `metadata`: the release's official `metadata.csv` columns, exactly as defined there.
- `metrics`: equality and mutuality (section 5.1.3; mutuality's sets are ambiguous in the paper
  and configurable), writer share of the final text (Table 3), final words, distinct-2.
- `stats`: one row per session, Table 3-style group means, CSV/Parquet writers.
- `runner`: a process pool over files (all cores, results streamed in order, bounded memory);
  a job that raises or kills its worker is reported by file, never a hang.
- `summary`: validate's corpus summary: counts per issue code, the first few of each.
- `quote`: how a value from a file is quoted in a message (JSON, cut to 80 characters).
- `cli`: the `study curate` click group: validate, replay, stats, blocks.

Definitions chosen where the paper is ambiguous are documented where they are implemented:
`blocks` (Table 2's notation, hovers, the later interface's choose), `metrics` (mutuality sets,
distinct-2 over the whole text), `metadata` (time from first/last line, rounding, zero cases).
"""
