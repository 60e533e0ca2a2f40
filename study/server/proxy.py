"""Running behind a reverse proxy that terminates TLS (nginx, Caddy, a cloud load balancer).

Behind a proxy every request arrives from the proxy's address over plain HTTP, so the server
would see one client (the per-address login throttle of the reviewers' workspace would throttle
everyone together) and no TLS (cookies would not get their Secure flag). werkzeug's `ProxyFix`
takes the client's address, scheme, host and port from the proxy's X-Forwarded-For, -Proto,
-Host and -Port headers instead, but only when told how many proxies to trust: a client talking
to the server directly could otherwise send those headers itself, pick any address and escape
the throttle. So it is off unless configured, with environment variables (they describe the
deployment, not the study, so they are not in study.toml):

- `STUDY_TRUSTED_PROXIES=N`: N proxies in front of the server set X-Forwarded-* (usually 1);
  0 or unset trusts none.
- `STUDY_SECURE_COOKIES=1`: always mark cookies Secure (for a proxy that serves https but does
  not send X-Forwarded-Proto). Without it, cookies are Secure when the request came over https.

A response to a request that came over https (or with STUDY_SECURE_COOKIES=1) carries
Strict-Transport-Security, so the browser never again sends a participant's access code or a
reviewer's cookie over plain http to this host. Over plain http it is left out: `study demo` on
localhost would otherwise tell the browser to refuse http://localhost for a year (browsers
ignore the header over http anyway, RFC 6797 §8.1, so the forced case cannot lock one out).

ProxyFix reads the headers only if the HTTP server hands them on, and servers have their own
say: waitress (`study demo`, `study review`) deletes every X-Forwarded-* header of a peer it was
not told to trust, and gunicorn (`study.server.wsgi` by hand) takes the scheme from
X-Forwarded-Proto only for the peers in its `forwarded_allow_ips` (loopback by default).
`waitress_options` and `gunicorn_options` tell each one the same thing STUDY_TRUSTED_PROXIES
tells the app; granian (`study serve`) hands every header on untouched. So ProxyFix alone
decides, with the configured number of hops, and a direct client's forged headers count nowhere
when no proxy is configured.
"""

from __future__ import annotations

import os

from flask import Flask, request
from werkzeug.middleware.proxy_fix import ProxyFix

TRUSTED_PROXIES = "STUDY_TRUSTED_PROXIES"
SECURE_COOKIES = "STUDY_SECURE_COOKIES"


class ProxyConfigError(ValueError):
    pass


def trusted_proxies() -> int:
    value = os.environ.get(TRUSTED_PROXIES, "").strip() or "0"
    if not value.isdecimal() or int(value) > 10:  # isdigit passes "²", which int() refuses
        raise ProxyConfigError(
            f"{TRUSTED_PROXIES}={value!r}: give the number of reverse proxies in front of the "
            "server, 0 to 10 (usually 1), or leave it unset."
        )
    return int(value)


def secure_cookies_forced() -> bool:
    return os.environ.get(SECURE_COOKIES, "").strip().lower() in ("1", "true", "yes")


# A year, the usual value; no includeSubDomains: the study's host may sit under an institution's
# domain whose other hosts are not ours to bind to https.
STRICT_TRANSPORT = "max-age=31536000"


def over_https() -> bool:
    """This request came over TLS (as the trusted proxy reports it) or the operator says every
    request does (STUDY_SECURE_COOKIES=1)."""
    return request.is_secure or secure_cookies_forced()


def strict_transport(response):
    if over_https():
        response.headers.setdefault("Strict-Transport-Security", STRICT_TRANSPORT)
    return response


# The headers ProxyFix reads (x_for, x_proto, x_host, x_port).
FORWARDED_HEADERS = frozenset({"x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-forwarded-port"})


def waitress_options(hops: int) -> dict:
    """waitress.serve's proxy settings for `hops` trusted proxies."""
    if not hops:
        return {"clear_untrusted_proxy_headers": True}
    # The peer is the nearest proxy, whatever its address (a container's, a load balancer's):
    # trusting "*" for the configured number of hops is what ProxyFix does with them too.
    return {
        "trusted_proxy": "*", "trusted_proxy_count": hops,
        "trusted_proxy_headers": set(FORWARDED_HEADERS), "clear_untrusted_proxy_headers": True,
    }  # fmt: skip


def gunicorn_options(hops: int) -> dict:
    """gunicorn's proxy settings for `hops` trusted proxies."""
    return {"forwarded_allow_ips": "*" if hops else ""}


def without_port(address: str) -> str:
    """The client's address alone, from a forwarded "203.0.113.7:50123" or "[2001:db8::1]:50123"
    (anything else unchanged). Some load balancers (Azure's Application Gateway, IIS's ARR)
    forward the client with its port, which is new for each connection: kept, every start and
    every login attempt would count as another client's, and no per-address limit would hold."""
    if address.startswith("["):
        return address[1:].partition("]")[0]
    host, colon, port = address.rpartition(":")
    if colon and port.isdigit() and host.count(".") == 3 and ":" not in host:
        return host
    return address


class _ClientWithoutPort:
    """Inside ProxyFix: REMOTE_ADDR as the forwarded client's address without a port."""

    def __init__(self, app) -> None:
        self.app = app

    def __call__(self, environ, start_response):
        address = environ.get("REMOTE_ADDR")
        if address:
            environ["REMOTE_ADDR"] = without_port(address.strip())
        return self.app(environ, start_response)


def behind_proxies(app: Flask) -> Flask:
    """Trust X-Forwarded-* from `STUDY_TRUSTED_PROXIES` proxies, if set, and send
    Strict-Transport-Security over https; returns `app`."""
    hops = trusted_proxies()
    app.after_request(strict_transport)
    if hops:
        app.wsgi_app = ProxyFix(_ClientWithoutPort(app.wsgi_app), x_for=hops, x_proto=hops, x_host=hops, x_port=hops)
    app.config["STUDY_TRUSTED_PROXIES"] = hops
    return app
