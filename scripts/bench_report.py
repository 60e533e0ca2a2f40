"""Benchmark `study report` with and without Fig. 7's named entities, and extrapolate to the
full CoAuthor release.

Only 31 released sessions ship here (../shared/data/coauthor), so the full release (1,445
sessions, 2.7 million events) cannot be timed on this machine. This script times, on the same
sessions in the same run:

1. reading the report's data (`study.report.data.load`) without an entity model;
2. the same with the installed spaCy pipeline, `ner` alone, batched with `nlp.pipe`, on
   --processes cores (what `study report` does);
3. the entities alone, one process: that way (`ner` only, one `nlp.pipe` per session) against
   the earlier way (the whole pipeline, one `nlp()` call and one replay per suggestion).

It prints wall and CPU seconds (this process and its workers), the ratio of (3), and an
extrapolation to the full release: CPU seconds per event here, times 2.7 million events,
divided by --processes (a lower bound for wall time on that many idle cores; the machine's
other load is printed beside it, since shared machines are noisy). Usage:

    python scripts/bench_report.py [--processes 2] [--source FOLDER]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from study.curation.formats import read_session  # noqa: E402
from study.curation.replay import replay  # noqa: E402
from study.curation.suggestions import inserted_text  # noqa: E402
from study.report import render  # noqa: E402
from study.report.data import load  # noqa: E402
from study.report.entities import EntityModel, load_model, session_entities  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "data" / "coauthor"
RELEASE_EVENTS = 2_700_000  # the full release (shared data README)


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(function, *args, **kwargs):
    wall, used = time.perf_counter(), cpu()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - wall, cpu() - used


def earlier_way(events, nlp) -> int:
    """The entities as computed before issue 20: a replay and an nlp() call per suggestion."""
    new, selected = 0, False
    for index, event in enumerate(events):
        if event.get("eventName") == "suggestion-select":
            selected = True
        elif event.get("eventName") == "text-insert" and event.get("eventSource") == "api" and selected:
            selected = False
            context = replay(events, at=index - 1).text
            new += len({e.text for e in nlp(inserted_text(event)).ents if e.text not in context})
    return new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--source", type=Path, default=FIXTURES)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores (other processes share them)")
    model, wall, used = timed(load_model)
    if model.nlp is None:
        sys.exit(f"no entity model: {model.why_not}")
    print(f"entity model {model.name} {model.version}, components {model.nlp.pipe_names}: "
          f"loaded in {wall:.1f} s wall, {used:.1f} s CPU")
    none = EntityModel(None, "", "benchmark")

    def report(entity_model):  # what `study report` does, less writing the file
        data = load(args.source, entity_model=entity_model, processes=args.processes)
        render(data)
        return data

    without, wall0, cpu0 = timed(report, none)
    data, wall1, cpu1 = timed(report, model)
    events = sum(s.stats["num_event"] for s in data.sessions)
    accepted = sum(s.entities.accepted for s in data.sessions)
    print(f"{len(data.sessions)} sessions, {events} events, {accepted} accepted suggestions")
    print(f"report without entities: {wall0:.1f} s wall, {cpu0:.1f} s CPU")
    print(f"report with entities:    {wall1:.1f} s wall, {cpu1:.1f} s CPU "
          f"({args.processes} processes)")
    import spacy

    full = spacy.load(model.name)
    sessions = [read_session(p).events for p in sorted((args.source / "sessions").glob("*.jsonl"))]
    _, _, now = timed(lambda: [session_entities(e, model.nlp) for e in sessions])
    _, _, before = timed(lambda: [earlier_way(e, full) for e in sessions])
    print(f"entities alone, one process: {now:.1f} s CPU now (ner only, nlp.pipe, one pass), "
          f"{before:.1f} s CPU the earlier way (whole pipeline {full.pipe_names}, per call): "
          f"{before / now:.1f}x")
    scale = RELEASE_EVENTS / events
    print(f"extrapolated to the full release ({RELEASE_EVENTS:,} events, x{scale:.0f}) on "
          f"{args.processes} idle cores: {cpu0 * scale / args.processes:.0f} s without entities, "
          f"{cpu1 * scale / args.processes:.0f} s with them (CPU / cores; plus "
          f"{wall:.0f} s to load the model once)")
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
