"""Task servers in their own processes (`study serve`, gunicorn) on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def study_serve(folder: Path, log: Path, *options: str) -> ServerProcess:
    """`study serve FOLDER` with one worker on a free port, started and answering."""
    port = free_port()
    server = ServerProcess([sys.executable, "-m", "study", "serve", str(folder), "--port", str(port),
                            "--workers", "1", *options], port, log)  # fmt: skip
    server.start()
    return server


class ServerProcess:
    """A task server in its own process, which a test can kill -9 and start again."""

    def __init__(self, command: list[str], port: int, log: Path, env: dict | None = None) -> None:
        self.command = command
        self.port = port
        self.log = log
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30) -> None:
        self.launch()
        self.wait_until_up(timeout)

    def launch(self) -> None:
        """Start the process without waiting for it to answer (servers started together, as
        several hosts are: see `wait_until_up`)."""
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                start_new_session=True,  # its own process group, so kill() reaches gunicorn's workers
            )

    def wait_until_up(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}:\n{self.log_text()}")
            try:
                # Another test's server may have taken the port between free_port() and this
                # one's bind (pytest-xdist runs several at once): only an answer from a socket
                # this process group listens on counts.
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200 and self._listening():
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the server did not answer /healthz within {timeout} s:\n{self.log_text()}")

    def _listening(self) -> bool:
        """Whether a process of this server's group listens on its port (Linux's /proc; True
        where there is none to read)."""
        sockets = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                lines = Path(table).read_text().splitlines()[1:]
            except OSError:
                return True
            for line in lines:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == self.port:  # 0A: LISTEN
                    sockets.add(f"socket:[{fields[9]}]")
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.getpgid(int(pid)) != self.process.pid:
                    continue
                fds = Path(f"/proc/{pid}/fd")
                if any(os.readlink(fds / fd) in sockets for fd in os.listdir(fds)):
                    return True
            except OSError:  # the process ended meanwhile
                continue
        return False

    def kill(self) -> None:
        """SIGKILL, the whole process group: no cleanup, no graceful shutdown."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")[-5000:] if self.log.exists() else ""
