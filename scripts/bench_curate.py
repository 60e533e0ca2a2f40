"""Benchmark `study curate validate` and `stats` on a CoAuthor-scale corpus.

Builds a corpus by copying the real fixture sessions (../shared/data/coauthor) under new
session ids into a temporary folder until it reaches --size-gb (default 1.2 GB, the size of the
public release: 1,445 sessions, 2.7 million events), then times, in the same run and on the same
files (all in the page cache by then):

1. a plain pass: every line through the standard library's `json.loads`, one process;
2. `validate` (schema + invariants) over all files on all cores;
3. `stats` (metadata, replay, blocks, metrics; rows written to a CSV) on all cores;
4. `stats --validate`: both in one pass, each file parsed once (study.curation.onepass).

It prints throughput, the ratio (validate + stats) / plain parse (target 2 or less), the ratio
one pass / plain parse (target 1.0 or less; issue 17), and the peak resident memory of the main
process and of the largest worker. The corpus is deleted afterwards. Usage:

    python scripts/bench_curate.py [--size-gb 1.2 | --sessions N] [--repeat 3] [--processes N] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from study.curation.onepass import check_and_measure_paths  # noqa: E402
from study.curation.runner import default_processes, stats_paths, validate_paths  # noqa: E402
from study.curation.stats import RowWriter  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "data" / "coauthor"


def fixture_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("sessions/*.jsonl")) + sorted(folder.glob("interface-format/*.jsonl"))


def build_corpus(
    target: Path, sources: list[Path], size_bytes: int, sessions: int | None = None
) -> tuple[list[Path], int]:
    """Copy the fixtures round-robin under fresh ids until `size_bytes` are written (or, when
    given, `sessions` files)."""
    contents = [path.read_bytes() for path in sources]
    written, files = 0, []

    def done() -> bool:
        return len(files) >= sessions if sessions is not None else written >= size_bytes

    with tqdm(
        total=size_bytes, unit="B", unit_scale=True, desc="building corpus", leave=False
    ) as bar:
        while not done():
            for data in contents:
                if done():
                    break
                path = target / f"{uuid.uuid4().hex}.jsonl"
                path.write_bytes(data)
                files.append(path)
                written += len(data)
                bar.update(len(data))
    return sorted(files), written


def plain_parse(files: list[Path]) -> int:
    events = 0
    loads = json.loads
    for path in tqdm(files, desc="plain json.loads", unit="session", leave=False):
        with open(path, "rb") as handle:
            for line in handle:
                loads(line)
                events += 1
    return events


def cpu_seconds() -> float:
    """CPU time of this process and of its reaped children (the pool's workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(function) -> tuple[object, float, float]:
    """(result, wall seconds, CPU seconds of this process and its workers)."""
    start, start_cpu = time.perf_counter(), cpu_seconds()
    result = function()
    return result, time.perf_counter() - start, cpu_seconds() - start_cpu


def peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: kilobytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-gb", type=float, default=1.2, help="corpus size (default 1.2)")
    parser.add_argument(
        "--sessions", type=int, default=None, help="corpus of this many sessions instead of --size-gb"
    )
    parser.add_argument("--processes", type=int, default=None, help="workers (default: all cores)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds; the best of each is shown")
    parser.add_argument("--fixtures", type=Path, default=FIXTURES, help="has sessions/*.jsonl")
    parser.add_argument("--tmp", type=Path, default=None, help="where to build the corpus")
    parser.add_argument("--keep", action="store_true", help="keep the corpus folder")
    args = parser.parse_args()

    sources = fixture_files(args.fixtures)
    if not sources:
        sys.exit(f"no fixture sessions under {args.fixtures}")
    base = args.tmp or Path(tempfile.gettempdir())
    size = int(args.size_gb * 1e9)
    if args.sessions is not None:  # at most this many fixture-sized files
        size = args.sessions * max(path.stat().st_size for path in sources)
    free = shutil.disk_usage(base).free
    if free < size * 1.2:
        size = int(free / 1.5)
        print(f"only {free / 1e9:.2f} GB free in {base}: corpus scaled to {size / 1e9:.2f} GB")
    processes = args.processes or default_processes()
    corpus = Path(tempfile.mkdtemp(prefix="bench_curate_", dir=base))

    def run_validate():
        errors = 0
        for report in validate_paths(files, processes=processes, progress=None):
            errors += report.errors
        return errors

    def run_stats():
        rows = 0
        with RowWriter(corpus / "stats.csv") as writer:
            for row, _ in stats_paths(files, "paper", processes=processes, progress=None):
                if row is not None:
                    writer.write(row)
                    rows += 1
        return rows

    def run_one_pass():
        errors = rows = 0
        with RowWriter(corpus / "onepass.csv") as writer:
            jobs = check_and_measure_paths(files, "paper", processes=processes, progress=None)
            for report, (row, _) in jobs:
                errors += report.errors
                if row is not None:
                    writer.write(row)
                    rows += 1
        return errors, rows

    passes = {
        "plain": lambda: plain_parse(files), "validate": run_validate, "stats": run_stats,
        "onepass": run_one_pass,
    }  # fmt: skip
    best: dict[str, tuple[float, float]] = {}  # pass -> (wall, cpu), the fastest round
    results: dict[str, object] = {}
    try:
        files, written = build_corpus(corpus, sources, size, args.sessions)
        for _ in range(args.repeat):  # interleaved, so passes share the machine's moods
            for name, function in passes.items():
                results[name], wall, cpu = timed(function)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu)
    finally:
        if args.keep:
            print(f"corpus kept in {corpus}")
        else:
            shutil.rmtree(corpus, ignore_errors=True)
    report(best, results, len(files), written / 1e6, processes, args.repeat)


def report(best, results, sessions: int, mb: float, processes: int, rounds: int) -> None:
    events = results["plain"]
    t_plain, cpu_plain = best["plain"]
    both = best["validate"][0] + best["stats"][0]
    cpu_both = best["validate"][1] + best["stats"][1]

    def line(label: str, wall: float, cpu: float) -> str:
        return (
            f"{label:<36} {wall:7.2f} s {mb / wall:7.1f} MB/s {events / wall / 1e3:6.0f} k events/s"
            f" {wall / t_plain:5.2f}x plain (CPU {cpu:6.2f} s)"
        )

    print(f"corpus: {sessions} sessions, {events:,} events, {mb:,.0f} MB; {processes} processes")
    print(f"best of {rounds} round(s):")
    print(line("plain json.loads (1 core)", t_plain, cpu_plain))
    print(line(f"validate ({results['validate']} errors)", *best["validate"]))
    print(line(f"stats ({results['stats']} rows)", *best["stats"]))
    print(line("validate + stats", both, cpu_both))
    errors, rows = results["onepass"]
    print(line(f"stats --validate ({errors} errors, {rows} rows)", *best["onepass"]))
    print(f"ratio (validate + stats) / plain parse, wall clock: {both / t_plain:.2f} (target <= 2)")
    print(
        f"ratio of CPU time: {cpu_both / cpu_plain:.2f}; on {processes} otherwise idle cores the "
        f"wall ratio would be about {cpu_both / processes / cpu_plain:.2f}"
    )
    one, cpu_one = best["onepass"]
    verdict = "PASS" if one / t_plain <= 1.0 else "FAIL"
    print(
        f"ratio one pass (stats --validate) / plain parse, wall clock: {one / t_plain:.2f} "
        f"(target <= 1.0: {verdict}); of CPU time: {cpu_one / cpu_plain:.2f}"
    )
    print(
        f"peak memory: main process {peak_mb(resource.RUSAGE_SELF):.0f} MB, "
        f"largest worker {peak_mb(resource.RUSAGE_CHILDREN):.0f} MB"
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the end: {load} on {os.cpu_count()} CPUs (other work skews times)")


if __name__ == "__main__":
    main()
