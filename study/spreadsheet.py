"""Cells of the CSV files written for people to open in a spreadsheet, never read back.

Excel and LibreOffice take a cell that begins with `=`, `+`, `-` or `@` (or a tab or carriage
return before one) as a formula and run it when the file is opened: a phone number typed as
"+1 617 555 0199" becomes an error or a sum, and a comment "=HYPERLINK(...)" a link that sends
the sheet's neighbouring cells elsewhere (CSV injection, OWASP). A leading apostrophe makes
such a cell text; numbers ("-3", "+0.5") are left alone, they are what the cell should be.

Only files a person reads and no command reads back are written this way: the curator's
redaction report (study.release.redaction_report) and the reviews beside an export
(study.review.export). Data files (an export's and a release's CSVs, survey.csv, the judging
and curation tables) keep every answer exactly as written, since a researcher analyses them
and `study report` and `study release build` read them again; the README tells researchers how
to open those safely.
"""

from __future__ import annotations

import re

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_text(value):
    """`value` as a spreadsheet shows it as text: a string that would run as a formula gets a
    leading apostrophe; anything else, numbers included, is returned unchanged."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS) or _NUMBER.fullmatch(value):
        return value
    return "'" + value


def spreadsheet_row(row: dict) -> dict:
    return {column: spreadsheet_text(value) for column, value in row.items()}
