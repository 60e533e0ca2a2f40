"""Which processes hold a file open, for a command refused because one does (study copy-database
must be alone with study.db): named, the operator can stop the right one instead of hunting for
it. Found through Linux's /proc, where each process's open files are links in /proc/PID/fd;
elsewhere, and for another user's processes (whose links only root may read), none is named.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")
# A command line longer than this is cut (gunicorn's carry every option given).
SHOWN_CHARACTERS = 200


def holders(path: Path) -> list[tuple[int, str]]:
    """The processes other than this one that have `path` open: (process id, command line),
    by process id; empty where /proc cannot tell."""
    target = os.path.realpath(path)
    found = []
    try:
        pids = sorted(int(name) for name in os.listdir(PROC) if name.isdecimal())
    except OSError:
        return []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            fds = PROC / str(pid) / "fd"
            if any(os.readlink(fds / fd) == target for fd in os.listdir(fds)):
                found.append((pid, command_line(pid)))
        except OSError:  # another user's process, or one that ended meanwhile
            continue
    return found


def command_line(pid: int) -> str:
    """A process's command line as a shell shows it, cut to SHOWN_CHARACTERS; its name in
    brackets for one that has none (a kernel thread, a zombie)."""
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        raw = b""
    # On one line, as the refusal is: an argument may hold newlines (python -c's program).
    shown = " ".join(raw.decode(errors="replace").replace("\0", " ").split())
    if not shown:
        try:
            shown = "[" + (PROC / str(pid) / "comm").read_text().strip() + "]"
        except OSError:
            shown = "?"
    return shown if len(shown) <= SHOWN_CHARACTERS else shown[: SHOWN_CHARACTERS - 3] + "..."


def named(found: list[tuple[int, str]]) -> str:
    """The processes as a refusal names them: `process 4242 (gunicorn: master [...])`, ..."""
    return ", ".join(f"process {pid} ({command})" for pid, command in found)
