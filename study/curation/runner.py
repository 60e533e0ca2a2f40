"""Run a per-file function over many session files on every core, streaming the results.

A `multiprocessing.Pool` maps files in small chunks with `imap`, so results come back in file
order while only a few sessions are in memory per worker: memory stays bounded by the largest
session, not the corpus. One process (no pool) when there is a single file or `processes=1`.

The cycle collector is paused while sessions are processed: parsed JSON and the per-session
work create no reference cycles, and rescanning each session's many dicts cost about a third
of the stats time. Memory is still freed by reference counting as each session is dropped.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from tqdm import tqdm

from study.curation.formats import SessionFileError, read_session
from study.curation.stats import session_stats
from study.curation.validate import SessionReport, validate_file

Result = TypeVar("Result")


def default_processes() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run(
    function: Callable[[object], Result],
    items: Sequence,
    *,
    processes: int | None = None,
    progress: bool | None = None,
    unit: str = "session",
) -> Iterator[Result]:
    """`function(item)` for every item, in order, on `processes` cores (default: all).

    `progress`: True shows a bar on stderr, None shows one when stderr is a terminal.
    """
    processes = processes or default_processes()
    bar = tqdm(
        total=len(items),
        unit=unit,
        disable=(None if progress is None else not progress),
        leave=False,
    )
    collecting = gc.isenabled()
    try:
        if processes == 1 or len(items) <= 1:
            gc.disable()
            for item in items:
                yield function(item)
                bar.update()
            return
        chunksize = max(1, min(16, len(items) // (processes * 8)))
        context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        with context.Pool(processes, initializer=gc.disable) as pool:
            for result in pool.imap(function, items, chunksize=chunksize):
                yield result
                bar.update()
    finally:
        bar.close()
        if collecting:
            gc.enable()


def validate_worker(path: Path) -> SessionReport:
    return validate_file(path)


def stats_worker(job: tuple[Path, str]) -> tuple[dict | None, str | None]:
    """(row, None) for a readable session, (None, message) otherwise."""
    path, sets = job
    try:
        return session_stats(read_session(path), sets), None
    except (SessionFileError, ValueError, KeyError, TypeError) as error:
        return None, f"{path}: {error} (run `study curate validate {path}` for every problem)"


def validate_paths(files: Iterable[Path], **options) -> Iterator[SessionReport]:
    yield from run(validate_worker, list(files), **options)


def stats_paths(
    files: Iterable[Path], sets: str, **options
) -> Iterator[tuple[dict | None, str | None]]:
    yield from run(stats_worker, [(path, sets) for path in files], **options)
