"""The one error a report's source gives: a folder, file or database the report cannot be made
from, said with the path and the fix (the CLI prints it; nothing is written)."""


class ReportSourceError(ValueError):
    pass
