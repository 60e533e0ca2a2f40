"""A command's `--out FILE`: written beside it and renamed over it once complete, so a run that
stops leaves the last good file (or none), never half of one. Except where the target is not a
file but a stream: /dev/null, /dev/stdout, a named pipe (or a link to one). A rename there puts a
regular file in the stream's place, and a command run as root would replace the machine's
/dev/null; so such a target is written into, as the shell's `>` does.

`study report`, `study curate stats --out` and `study chat draft-intents --out` write through
`partial_for` and `place`; `study backup` refuses a stream (a backup is a file a restore reads).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def is_stream(path: str | os.PathLike) -> bool:
    """`path` exists and is neither a regular file nor a folder: a device or a pipe, links
    followed."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def partial_for(out: Path, name: str) -> Path:
    """Where `out` is written until it is complete: the file `name` beside it, or `out` itself
    when it is a stream."""
    return out if is_stream(out) else out.with_name(name)


def place(partial: Path, out: Path) -> None:
    """Put the complete `partial` in `out`'s place (a stream was written in place already)."""
    if partial != out:
        os.replace(partial, out)


def discard(partial: Path, out: Path) -> None:
    """Remove an incomplete `partial`, never the stream it may be."""
    if partial != out:
        partial.unlink(missing_ok=True)
