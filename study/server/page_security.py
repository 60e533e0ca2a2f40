"""Where a participant page may send the writer, and who may frame it.

turkSubmitTo arrives in the task URL and becomes the completion form's action, so it is accepted
only when it is one of MTurk's two submit hosts: anything else (`javascript:...`, another site)
would run script in our page or post the verification code elsewhere. A loopback address is
accepted as well, but only from a request that itself came over loopback to a loopback host:
that is how the tests reach `study mturk emulate`, and no worker on the internet can ask for it.

Every participant page also carries a Content-Security-Policy: scripts and styles from this
server only (the editor's code is in static files; its start-up data is a JSON block, which the
browser never runs), forms may post only here and to MTurk, and only MTurk may show the page in
a frame (the worker site shows HITs in an iframe).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

# The submit hosts MTurk puts in turkSubmitTo (live and sandbox).
MTURK_SUBMIT_ORIGINS = ("https://www.mturk.com", "https://workersandbox.mturk.com")
# The pages that show a HIT in an iframe: the submit hosts and the live worker site.
MTURK_FRAME_ORIGINS = (*MTURK_SUBMIT_ORIGINS, "https://worker.mturk.com")
_LOOPBACK_NAMES = {"localhost"}


class NotMTurk(ValueError):
    """A turkSubmitTo that is not one of MTurk's submit hosts."""


def canonical_address(address: str) -> str:
    """`address` as one client is always written: a server listening on a dual-stack socket
    (`--host ::`) sees an IPv4 peer as an IPv4-mapped IPv6 address (::ffff:a.b.c.d), which is
    the IPv4 address. Anything that is not an IP address comes back unchanged."""
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip)


def http_address(host: str, port: int) -> str:
    """The address a server listening on `host`:`port` is opened at, for what the commands
    print: an IPv6 literal in brackets (`--host ::` is http://[::]:5000, not http://:::5000)."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(canonical_address(host)).is_loopback
    except ValueError:
        return False


def submit_origin(value: str, *, loopback_allowed: bool = False) -> str:
    """The origin the completion form posts to, from turkSubmitTo; raises NotMTurk."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        raise NotMTurk(f"turkSubmitTo {value[:80]!r} is not a web address") from None
    origin = f"{parts.scheme}://{parts.netloc}".lower()
    bare = not parts.username and not parts.password and parts.path in ("", "/")
    if bare and not parts.query and not parts.fragment and origin in MTURK_SUBMIT_ORIGINS:
        return origin
    if (
        loopback_allowed
        and bare
        and parts.scheme in ("http", "https")
        and is_loopback(parts.hostname)
        and (port is None or 0 < port < 65536)
    ):
        return origin
    raise NotMTurk(
        f"turkSubmitTo {value[:80]!r} is not MTurk's: it must be "
        + " or ".join(MTURK_SUBMIT_ORIGINS)
    )


def content_security_policy(submit_to: str | None = None) -> str:
    """The policy of a participant page; `submit_to` is the session's checked submit origin."""
    form_targets = ["'self'", *MTURK_SUBMIT_ORIGINS]
    if submit_to and submit_to not in form_targets:
        form_targets.append(submit_to)
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action " + " ".join(form_targets),
            "frame-ancestors 'self' " + " ".join(MTURK_FRAME_ORIGINS),
        ]
    )
