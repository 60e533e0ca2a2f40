"""Which processes hold a file open, for a command refused because one does (study copy-database
must be alone with study.db): named, the operator can stop the right one instead of hunting for
it. Found through Linux's /proc, where each process's open files are links in /proc/PID/fd;
elsewhere, and for another user's processes (whose links only root may read), none is named.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")
# A command line longer than this is cut (gunicorn's carry every option given).
SHOWN_CHARACTERS = 200


@dataclass
class Holder:
    """A program holding the file: its process (a server's master, when the holders are its
    workers: stopping it stops them) and those of its processes that hold the file."""

    pid: int
    command: str
    holding: list[int] = field(default_factory=list)


def holders(path: Path) -> list[Holder]:
    """The programs other than this process that have `path` open, by process id; empty where
    /proc cannot tell. A worker forked by a master of the same command line (gunicorn's, `study
    serve`'s) is counted under its master, the process to stop."""
    target = os.path.realpath(path)
    try:
        pids = sorted(int(name) for name in os.listdir(PROC) if name.isdecimal())
    except OSError:
        return []
    found: dict[int, Holder] = {}
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            fds = PROC / str(pid) / "fd"
            if not any(os.readlink(fds / fd) == target for fd in os.listdir(fds)):
                continue
        except OSError:  # another user's process, or one that ended meanwhile
            continue
        command = command_line(pid)
        top = pid
        while (parent := _parent(top)) not in (None, os.getpid()) and _same_program(command_line(parent), command):
            top = parent
        found.setdefault(top, Holder(top, command)).holding.append(pid)
    return sorted(found.values(), key=lambda holder: holder.pid)


def _same_program(parent: str, child: str) -> bool:
    """Whether a child process is a worker of its parent: the same command line, or gunicorn's
    titles when setproctitle is installed (`gunicorn: master [app]`, `gunicorn: worker [app]`)."""
    return parent == child or (parent.startswith("gunicorn: master") and child.startswith("gunicorn: worker"))


def _parent(pid: int) -> int | None:
    try:
        status = (PROC / str(pid) / "status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1]) or None
    return None


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


def named(found: list[Holder]) -> str:
    """The programs as a refusal names them: `process 4242 (python -m gunicorn ...), whose
    processes 4250 and 4251 hold it`."""
    shown = []
    for holder in found:
        others = [str(pid) for pid in holder.holding if pid != holder.pid]
        whose = ""
        if others:
            listed = ", ".join(others[:-1]) + " and " + others[-1] if len(others) > 1 else others[0]
            whose = f", whose process{'es' if len(others) > 1 else ''} {listed} hold{'' if len(others) > 1 else 's'} it"
        shown.append(f"process {holder.pid} ({holder.command}){whose}")
    return "; ".join(shown)
