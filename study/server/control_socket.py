"""A control socket of its own for each gunicorn of the shipped config
(study.server.gunicorn_config).

gunicorn 25.1 and later open a control socket (for `gunicornc`) at one path for every gunicorn a
user runs on a machine: $XDG_RUNTIME_DIR/gunicorn.ctl, or ~/.gunicorn/gunicorn.ctl. A second
gunicorn there (a second study, or the README's two task servers on two ports) deletes the
first's socket and binds its own, they take it back from each other as they fork workers, and
the first to stop deletes the path, so `gunicornc` reaches the wrong server or none. Each
gunicorn listens on its own address, so a socket named for it is its own. A path the operator
gave (`--control-socket`) is kept, and gunicorn before 25.1, which has no such setting, is left
as it is.
"""

from __future__ import annotations

import hashlib
import os
import re

# The longest path a Unix socket may have on Linux (sun_path holds 108 bytes, with a NUL).
_LONGEST = 107


def own(cfg, log) -> None:
    """Set gunicorn's control socket to one named for its bind addresses, in the folder of
    gunicorn's default, unless the operator gave a path or this gunicorn has no control socket."""
    setting = cfg.settings.get("control_socket")
    if setting is None or cfg.settings["control_socket_disable"].get():
        return  # gunicorn before 25.1, or --no-control-socket
    if setting.get() != setting.default:
        return
    path = path_for(setting.default, cfg.bind)
    cfg.set("control_socket", path)
    log.debug("control socket of this gunicorn: %s", path)


def path_for(default: str, binds: list[str]) -> str:
    """`gunicorn-127.0.0.1-5000.ctl` beside gunicorn's default path for `-b 127.0.0.1:5000`;
    a digest of the addresses where their name would make too long a path (a Unix socket's)."""
    folder = os.path.dirname(default)
    name = re.sub(r"[^A-Za-z0-9.]+", "-", " ".join(binds)).strip("-")
    path = os.path.join(folder, f"gunicorn-{name}.ctl")
    if len(os.fsencode(path)) > _LONGEST:
        digest = hashlib.sha256(" ".join(binds).encode()).hexdigest()[:16]
        path = os.path.join(folder, f"gunicorn-{digest}.ctl")
    return path
