"""Which server process is this, and does a process of this host that made a model call still run?

A model call's row names the process that made it (study.server.model_calls): its host and its
process. A worker killed mid-call (kill -9, the out-of-memory killer) never writes the call's
outcome, and the row held one of the study's model-call slots until its time window passed (a
minute with the default timeout). A process of the same host can tell that the one named is gone
and settle its rows at once; another host cannot see this host's processes, so its rows keep the
window.

"The same host" is one boot of one machine (Linux's boot id) and one process-id namespace (a
container has its own): only there does a process id name the same process, and the host's name
is kept beside them for the operator. A process id is reused once its process is gone, so a
process is named by its id and its start time (in clock ticks since boot, from /proc): a new
process that got the id of a killed worker is not taken for it. Where /proc is missing (not
Linux), nothing is named and every row keeps the window.
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")


@dataclass(frozen=True)
class ServingProcess:
    host: str  # "<host name> boot <boot id> pids <namespace>"
    process: str  # "<pid>:<start time in clock ticks since boot>"


_lock = threading.Lock()
_this: dict[int, ServingProcess | None] = {}  # by pid: a forked worker is a process of its own


def this_process() -> ServingProcess | None:
    """This process, as a model call's row names it; None where /proc cannot tell."""
    pid = os.getpid()
    with _lock:
        if pid not in _this:
            _this[pid] = _named(pid)
        return _this[pid]


def _named(pid: int) -> ServingProcess | None:
    host = this_host()
    started = _start_time(pid)
    if host is None or started is None:
        return None
    return ServingProcess(host=host, process=f"{pid}:{started}")


def this_host() -> str | None:
    """This boot of this machine and this process-id namespace, or None where /proc cannot say."""
    try:
        boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink(_PROC / "self/ns/pid").removeprefix("pid:[").removesuffix("]")
    except OSError:
        return None
    return f"{socket.gethostname()} boot {boot} pids {namespace}"


def running(process: str) -> bool:
    """Whether `process` (a ServingProcess.process of this host) still runs. A process killed and
    not yet reaped by its parent (a zombie) runs no code: it is not running. When /proc cannot be
    read for it, it is taken as running (its rows keep the time window)."""
    pid, _, started = process.partition(":")
    if not pid.isdecimal():
        return True  # not a name this module wrote
    try:
        state, start_time = _stat(int(pid))
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X") and start_time == started


def _start_time(pid: int) -> str | None:
    try:
        return _stat(pid)[1]
    except (OSError, IndexError):
        return None


def _stat(pid: int) -> tuple[str, str]:
    """(state, start time) from /proc/<pid>/stat; FileNotFoundError when there is no such process."""
    stat = (_PROC / str(pid) / "stat").read_text()
    # The command name (field 2) is in parentheses and may itself hold spaces and ")"; the
    # fields after the last ")" start with the state (field 3); the start time is field 22.
    fields = stat.rpartition(")")[2].split()
    return fields[0], fields[19]
