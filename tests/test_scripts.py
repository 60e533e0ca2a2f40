"""Every benchmark under scripts/ still starts: the README sends researchers to them for the
figures behind its targets, and a script that no longer imports (a module moved) says nothing
until someone needs its numbers. A script with a main answers --help; the others are parts of
a benchmark (bench_writer.py, bench_stack.py) and must import."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.py"))


def _started(script: Path) -> str | None:
    """What went wrong starting `script`, or None."""
    if 'if __name__ == "__main__":' in script.read_text():
        command, wanted = [sys.executable, str(script), "--help"], "usage:"
    else:
        command, wanted = [sys.executable, "-c", f"import {script.stem}"], ""
    answer = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=script.parent)
    if answer.returncode == 0 and wanted in answer.stdout:
        return None
    return (answer.stderr.strip().splitlines() or ["no usage printed"])[-1]


def test_every_script_starts():
    assert len(SCRIPTS) > 3
    with ThreadPoolExecutor(max_workers=4) as pool:
        broken = {script.name: wrong for script, wrong in zip(SCRIPTS, pool.map(_started, SCRIPTS)) if wrong}
    assert broken == {}
