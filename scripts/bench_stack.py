"""What scripts/bench_ingest.py runs its writers against: the task server (`study serve`, or
gunicorn on study.server.wsgi), a throwaway PostgreSQL cluster, and a model endpoint that
answers after a fixed delay, each in its own process, on 127.0.0.1 only."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

POSTGRES_USER = "study_bench"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# pause_cost's first figure on the host where every target of issue 17 held in one sweep
# (2026-11-30, 02:19-02:38 UTC: 0.44-0.47 ms; docs/benchmarks.md). The same code's CPU per
# request follows the host: on a host at about twice this figure it took 1.5-2.0 times as much
# (2026-11-30, 06:08-07:17 UTC, every size on SQLite and PostgreSQL).
QUICK_HOST_MS = 0.46


def pause_cost(rounds: int = 300, pause: float = 0.008) -> tuple[float, float]:
    """Milliseconds of CPU that one fixed piece of Python (an event batch's JSON written, read
    back and its records copied) takes run back to back, and run after a pause of `pause`
    seconds each time.

    A request at low load starts after such a pause. On a virtual machine whose CPUs halt when
    idle, the second figure is up to twice the first (2 CPUs, 2026-11-28: 0.46 ms against
    0.69-0.80); spinning through the pause instead of sleeping leaves it at the first. The
    event API pays the same at 200 writers: its own code took 0.35 ms of CPU a batch run back
    to back in one process, and 0.85-1.0 ms inside the server, every part of it slower by about
    the same factor (docs/benchmarks.md)."""
    record = {"eventName": "text-insert", "eventSource": "user", "eventTimestamp": 1700000000000,
              "textDelta": {"ops": [{"retain": 120}, {"insert": "a"}]}, "currentCursor": 121,
              "currentSuggestions": [], "currentDoc": "The quick brown fox. " * 6}
    batch = {"events": [dict(record, seq=seq) for seq in range(9)]}

    def work() -> None:  # Python's own work as much as the C parts', as a request's is
        for _ in range(10):
            items = json.loads(json.dumps(batch))["events"]
            rows = [{key: value for key, value in item.items() if key != "seq"} for item in items]
            sorted((str(row["eventTimestamp"]), len(row["currentDoc"]), tuple(row)) for row in rows)

    figures = []
    for wait in (0.0, pause):
        work()
        spent = 0.0
        for _ in range(rounds):
            started = time.process_time()
            work()
            spent += time.process_time() - started
            if wait:
                time.sleep(wait)
        figures.append(spent / rounds * 1000)
    return figures[0], figures[1]


def stolen_and_total() -> tuple[int, int] | None:
    """The CPUs' time the hypervisor took (`steal`) and all of it, in clock ticks since boot,
    from /proc/stat's first line; None where there is none (not Linux). A vCPU taken away stalls
    every request its process holds, for as long as it is away."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def steal_shares(samples: list[tuple[float, int, int]]) -> tuple[float, float] | None:
    """From (time, stolen, total) samples taken in order: the share of the CPUs' time stolen
    between the first and the last, and the largest share between two samples in a row."""
    if len(samples) < 2 or samples[-1][2] == samples[0][2]:
        return None
    steps = [(b[1] - a[1]) / (b[2] - a[2]) for a, b in zip(samples, samples[1:]) if b[2] > a[2]]
    return (samples[-1][1] - samples[0][1]) / (samples[-1][2] - samples[0][2]), max(steps, default=0.0)


# What an fsync took on the disk of issue 17's first figures (its text).
ISSUE_FSYNC_MS = 0.15


def fsync_cost(folder: Path, rounds: int = 200) -> tuple[float, float, float]:
    """Milliseconds that appending 4 KB to a file in `folder` and fsync-ing it took: the median,
    the 99th percentile and the longest of `rounds`. Every acknowledgement waits for one (an
    event batch is answered once its group's commit is on the disk: SQLite's WAL, PostgreSQL's),
    so a disk whose fsync sometimes stalls shows in the acknowledgements' tail whatever the
    server does (the issue's disk: ISSUE_FSYNC_MS)."""
    page = os.urandom(4096)
    times = []
    handle, name = tempfile.mkstemp(dir=folder, prefix="fsync-")
    try:
        for _ in range(rounds):
            started = time.perf_counter()
            os.write(handle, page)
            os.fsync(handle)
            times.append((time.perf_counter() - started) * 1000)
    finally:
        os.close(handle)
        os.unlink(name)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], times[-1]


def _wait_for(url: str, process: subprocess.Popen, log: Path, what: str) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{what} exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    stop(process)
    raise SystemExit(f"{what} did not answer within 90 s:\n{log.read_text()[-3000:]}")


def start_server(kind: str, directory: Path, port: int, log: Path, *, workers: int | None,
                 threads: int, connections: int) -> subprocess.Popen:
    """`study serve` (kind "serve") or gunicorn on study.server.wsgi (kind "gunicorn"), in its
    own process group so that its CPU is counted whole and it is stopped whole."""
    env = dict(os.environ)
    if kind == "serve":
        command = [sys.executable, "-m", "study", "serve", str(directory), "--port", str(port),
                   "--threads", str(threads), "--writers", str(connections)]
        if workers:
            command += ["--workers", str(workers)]
    else:
        command = [sys.executable, "-m", "gunicorn", "-w", str(workers or 2), "-b", f"127.0.0.1:{port}",
                   "-k", "gthread", "--threads", str(threads), "--keep-alive", "75",
                   "--worker-connections", str(connections), "study.server.wsgi:app"]
        env.update(STUDY_DIR=str(directory), STUDY_SECRET_KEY=os.urandom(16).hex())
    with open(log, "ab") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
    _wait_for(f"http://127.0.0.1:{port}/healthz", process, log, "the task server")
    return process


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def cpu_seconds(group: int) -> float:
    """User + system CPU seconds of every process in a process group (the server and its workers)."""
    return _cpu_seconds(lambda _pid, _ppid, pgrp: pgrp == group)


def _cpu_seconds(counted) -> float:
    """User + system CPU seconds of the live processes for which `counted(pid, ppid, pgrp)`."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid, rest = stat.read_text().split(" ", 1)
            fields = rest.rsplit(")", 1)[1].split()
        except (OSError, IndexError, ValueError):
            continue
        if counted(int(pid), int(fields[1]), int(fields[2])):
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


@contextmanager
def model_endpoint(delay: float, log: Path):
    """An OpenAI-compatible endpoint answering every request after `delay` seconds; its /v1 URL."""
    port = free_port()
    with open(log, "ab") as handle:
        process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("bench_endpoint.py")),
                                    str(port), str(delay)],
                                   stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(f"http://127.0.0.1:{port}/v1/models", process, log, "the model endpoint")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop(process)


def _postgres_tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True)
    return str(candidates[0]) if candidates else None


# The postmaster of the cluster temporary_postgres is running, if any (its CPU is reported).
_postmaster: int | None = None


def cluster_cpu_seconds() -> float | None:
    """User + system CPU seconds of temporary_postgres' running cluster (the postmaster and
    its backends, each of which PostgreSQL puts in a process group of its own); None without
    one. A backend that has exited is no longer counted: the server keeps its connections."""
    if _postmaster is None:
        return None
    return _cpu_seconds(lambda pid, ppid, _pgrp: _postmaster in (pid, ppid))  # itself, or a child


# The throwaway cluster's settings beyond PostgreSQL's defaults, as README "Scale" advises for
# a launch. A new cluster fills each new 16 MB WAL segment with zeroes while every commit waits
# (wal_init_zero): at 1,000 writers about one segment in 4 s, each a 20-70 ms stall of every
# acknowledgement and suggestion, until checkpoints recycle old segments. A database that has
# run a while writes into recycled segments; with this setting a new one costs as little.
LAUNCH_POSTGRES_SETTINGS = ("wal_init_zero=off",)


@contextmanager
def temporary_postgres(settings=LAUNCH_POSTGRES_SETTINGS):
    """A throwaway PostgreSQL cluster in a temporary folder (durable commits: the benchmark
    measures what a real study would get) with `settings` ("name=value"); its database's
    SQLAlchemy URL."""
    global _postmaster
    tools = {name: _postgres_tool(name) for name in ("initdb", "pg_ctl")}
    if None in tools.values():
        raise SystemExit("--database postgres needs PostgreSQL's initdb and pg_ctl (apt-get install postgresql)")
    owner = None
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        owner = next((n for n in ("postgres", "nobody") if _user_exists(n)), None)
        if owner is None:
            raise SystemExit("running as root with no 'postgres' or 'nobody' user to run PostgreSQL")
    base = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    data, sockets = base / "data", base / "sockets"
    sockets.mkdir()
    if owner:
        entry = pwd.getpwnam(owner)
        for path in (base, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = free_port()
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    options = (f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c max_connections=300 "
               "-c shared_buffers=128MB " + " ".join(f"-c {setting}" for setting in settings))

    def run(command, check=True):
        if owner:
            command = ["runuser", "-u", owner, "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True, env=env, cwd=base)

    try:
        run([tools["initdb"], "-D", str(data), "-U", POSTGRES_USER, "--auth=trust", "--encoding=UTF8",
             "--no-locale"])
        run([tools["pg_ctl"], "-D", str(data), "-l", str(base / "server.log"), "-w", "-t", "60",
             "-o", options, "start"])
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=port, user=POSTGRES_USER, dbname="postgres",
                             autocommit=True) as admin:
            admin.execute('CREATE DATABASE "bench"')
        _postmaster = int((data / "postmaster.pid").read_text().split()[0])
        yield f"postgresql+psycopg://{POSTGRES_USER}@127.0.0.1:{port}/bench"
    finally:
        _postmaster = None
        run([tools["pg_ctl"], "-D", str(data), "-m", "fast", "-w", "stop"], check=False)
        shutil.rmtree(base, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False
