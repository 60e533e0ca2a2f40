"""Run a per-file function over many session files on every core, streaming the results.

Results come back in file order while only a few sessions are in flight per worker, so memory
stays bounded by the largest session, not the corpus. One process (no pool) when there is a
single file or `processes=1`.

A job that fails never stops the run, and never hangs it. Inside the worker every exception
becomes a `Failure` (its type and message as text, which always pickles), so an exception that
could not be unpickled in the parent (the old DeltaError did that, and a `multiprocessing.Pool`
then waited for ever) never crosses the process boundary. A worker that dies outright
(`os._exit`, a crash, the kernel's out-of-memory killer) or sends a result that cannot be read
back breaks a `concurrent.futures` pool, which, unlike `multiprocessing.Pool`, says so: the
jobs that were in flight are then run again one at a time, each in a fresh worker, so the one
that breaks its worker is named and the others still get their results. Each failure reaches
the caller's `failed(item, message)`, which turns it into a result (a report naming the file);
without one, `run` raises `JobFailed`.

The cycle collector is paused while sessions are processed: parsed JSON and the per-session
work create no reference cycles, and rescanning each session's many dicts cost about a third
of the stats time. Memory is still freed by reference counting as each session is dropped.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from tqdm import tqdm

from study.curation.formats import SessionFileError, read_session
from study.curation.issues import ISSUES, MAX_PER_CODE, Issue, SessionReport
from study.curation.quote import cut
from study.curation.stats import session_stats
from study.curation.validate import validate_file

Result = TypeVar("Result")
IN_FLIGHT = 4  # jobs queued per worker: enough to keep it busy, few sessions in memory
DIED = (
    "its worker process died or sent back a result that could not be read "
    "(a crash, os._exit, the out-of-memory killer, or an exception that does not pickle)"
)


@dataclass(frozen=True)
class Failure:
    """A job that raised or killed its worker, in words (plain text always pickles)."""

    message: str


class JobFailed(RuntimeError):
    """A job failed and the caller gave no `failed` handler; the message names the item."""


def default_processes() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _call(function: Callable, item: object) -> object:
    """Run one job in a worker: its result, or a Failure describing what it raised."""
    try:
        return function(item)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - one job's failure is reported, not fatal
        return Failure(_describe(error))


def _describe(error: BaseException) -> str:
    text = str(error)
    return cut(f"{type(error).__name__}: {text}" if text else type(error).__name__, 400)


def run(
    function: Callable[[object], Result],
    items: Sequence,
    *,
    processes: int | None = None,
    progress: bool | None = None,
    unit: str = "session",
    failed: Callable[[object, str], Result] | None = None,
) -> Iterator[Result]:
    """`function(item)` for every item, in order, on `processes` cores (default: all).

    A job that raises, or kills its worker, yields `failed(item, message)`; without `failed`,
    `JobFailed` is raised. (In one process there is no worker to lose: a job that ends the
    process, with os._exit or a crash, ends the run.) `progress`: True shows a bar on stderr,
    None shows one when stderr is a terminal.
    """
    processes = processes or default_processes()

    def settle(item: object, outcome: object) -> Result:
        if not isinstance(outcome, Failure):
            return outcome  # type: ignore[return-value]
        if failed is None:
            raise JobFailed(f"{_label(item)}: {outcome.message}")
        return failed(item, outcome.message)

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
                yield settle(item, _call(function, item))
                bar.update()
            return
        for item, outcome in _in_pool(function, items, processes):
            yield settle(item, outcome)
            bar.update()
    finally:
        bar.close()
        if collecting:
            gc.enable()


def _context():
    return multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")


def _pool(processes: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(processes, mp_context=_context(), initializer=gc.disable)


def _in_pool(function: Callable, items: Sequence, processes: int) -> Iterator[tuple]:
    """(item, result or Failure) in item order, from a pool that is rebuilt if it breaks."""
    following = 0  # the next item to submit
    pending: deque[tuple[object, Future]] = deque()
    pool = _pool(processes)
    try:
        while following < len(items) or pending:
            while following < len(items) and len(pending) < processes * IN_FLIGHT:
                try:
                    future = pool.submit(_call, function, items[following])
                except BrokenProcessPool:
                    break  # the futures in flight say so too
                pending.append((items[following], future))
                following += 1
            if pending:
                item, future = pending[0]
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    pass
                except Exception as error:  # noqa: BLE001 - e.g. a result that did not pickle
                    pending.popleft()
                    yield item, Failure(_describe(error))
                    continue
                else:
                    pending.popleft()
                    yield item, outcome
                    continue
            # A worker died: rerun what was in flight, each job alone, to find the one.
            pool.shutdown(wait=True, cancel_futures=True)
            suspects = list(pending)
            pending.clear()
            for suspect, earlier in suspects:
                if earlier.done() and not earlier.cancelled() and not _broke(earlier):
                    yield suspect, _outcome(earlier)  # finished before the pool broke
                else:
                    yield suspect, _alone(function, suspect)
            pool = _pool(processes)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _broke(future: Future) -> bool:
    return isinstance(future.exception(), BrokenProcessPool)


def _outcome(future: Future) -> object:
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001
        return Failure(_describe(error))


def _alone(function: Callable, item: object) -> object:
    """Run one job in a fresh worker of its own: its result, or a Failure if it breaks it."""
    with _pool(1) as pool:
        try:
            return pool.submit(_call, function, item).result()
        except BrokenProcessPool:
            return Failure(DIED)
        except Exception as error:  # noqa: BLE001
            return Failure(_describe(error))


def _label(item: object) -> str:
    """The file a job is about, for messages: the first path in it, else the item itself."""
    for part in item if isinstance(item, tuple) else (item,):
        if isinstance(part, os.PathLike):
            return str(part)
        path = getattr(part, "path", None)
        if path is not None:
            return str(path)
    return cut(repr(item))


def failed_session_report(path: Path, message: str) -> SessionReport:
    """A validation report for a file whose check crashed: one `crash` error naming it."""
    report = SessionReport(file=str(path), session_id=Path(path).stem)
    severity, fix = ISSUES["crash"]
    report.counts[(severity, "crash")] += 1
    report.issues.append(
        Issue(severity, "crash", None, None, f"could not be checked: {message}", fix, str(path))
    )
    return report


def validate_worker(job: tuple[Path, int | None]) -> SessionReport:
    path, keep = job
    return validate_file(path, keep)


def stats_worker(job: tuple[Path, str]) -> tuple[dict | None, str | None]:
    """(row, None) for a readable session, (None, message) otherwise."""
    path, sets = job
    try:
        return session_stats(read_session(path), sets), None
    except (SessionFileError, ValueError, KeyError, TypeError) as error:
        return None, f"{path}: {error} (run `study curate validate {path}` for every problem)"


def validate_paths(
    files: Iterable[Path], *, keep: int | None = MAX_PER_CODE, **options
) -> Iterator[SessionReport]:
    """Validation reports in file order; `keep` issues worded per code and file (None: all)."""
    yield from run(
        validate_worker,
        [(path, keep) for path in files],
        failed=lambda job, message: failed_session_report(job[0], message),
        **options,
    )


def stats_paths(
    files: Iterable[Path], sets: str, **options
) -> Iterator[tuple[dict | None, str | None]]:
    yield from run(
        stats_worker,
        [(path, sets) for path in files],
        failed=lambda job, message: (None, f"{job[0]}: {message}"),
        **options,
    )

