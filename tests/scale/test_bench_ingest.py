"""scripts/bench_ingest.py, the benchmark issue 17's figures come from, runs a small launch end to
end for each kind of model request: its writers reach the editor, type and ask the model, every
request is answered, and its database check finds exactly the acknowledged events stored. Its
speed figures are the machine's and are not asserted here; that it prints them, and which Python
made them, is."""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "scripts" / "bench_ingest.py"


@pytest.mark.parametrize(
    "paradigm, requests", [("tab", "suggestion"), ("ghost", "ghost-text request"), ("chat", "chat message")]
)
def test_a_small_launch_stores_exactly_what_was_acknowledged(paradigm, requests):
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--writers", "10", "--duration", "3", "--suggest-every", "1",
         "--model-delay", "0.05", "--workers", "1", "--threads", "4", "--paradigm", paradigm],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip

    out = run.stdout
    assert run.returncode in (0, 1), out[-3000:] + run.stderr[-3000:]  # 1: a target missed
    stored = re.search(r"database +(\d+) stored, \d+ acknowledged, \d+ made: identical", out)
    assert stored and int(stored[1]) > 0, out
    assert re.search(r"timeouts +0\n", out) and re.search(r"errors +0\n", out), out
    assert re.search(rf"PASS +every {requests} answered 200 +200: \d+", out), out
    assert re.search(r"server CPU .* ms per event request", out), out
    assert f"python            {platform.python_version()} at {sys.executable}" in out
    assert re.search(r"hypervisor +took \d+\.\d% of the CPUs' time during the typing \(steal\), up to \d+%", out), out
    assert re.search(r"disk +4 KB appended and fsync'd: p50 \d+\.\d\d ms, p99 \d+\.\d\d, max \d+\.\d\d", out), out
