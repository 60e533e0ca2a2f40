"""A path as the report shows it: a report is mailed, shared and published with a paper, so it
never shows where its data lay on the researcher's disk (`/home/alice/...`: a user name and a
folder layout).

A path inside the report's own folder is shown relative to it (`export/metadata.csv`), which a
reader who has the folder as it was shared can follow; any other path by its name alone
(`metadata.csv`, the source folder's `my-study`), which is all a reader elsewhere could use.
"""

from __future__ import annotations

from pathlib import Path


def shown(path: str | Path, report_folder: Path | None) -> str:
    """`path` for the report written into `report_folder` (None: not known, the name alone)."""
    path = Path(path).resolve()
    if report_folder is not None:
        try:
            relative = path.relative_to(Path(report_folder).resolve())
        except ValueError:
            pass
        else:
            if relative.parts:  # the report's own folder is named, not shown as "."
                return relative.as_posix()
    return path.name
