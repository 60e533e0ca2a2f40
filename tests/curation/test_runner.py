"""Running on all cores gives the same results, in the same order, as one process."""

from __future__ import annotations

from study.curation.formats import session_files
from study.curation.runner import stats_paths, validate_paths

from .conftest import DATA


def test_parallel_and_serial_runs_agree():
    files = session_files([DATA])
    serial = [r.to_dict() for r in validate_paths(files, processes=1, progress=False)]
    parallel = [r.to_dict() for r in validate_paths(files, processes=2, progress=False)]
    assert serial == parallel and len(serial) == 32
    rows = [row for row, _ in stats_paths(files, "paper", processes=2, progress=False)]
    assert [row["session_id"] for row in rows] == [f.stem for f in files]
