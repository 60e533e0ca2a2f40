"""The researcher's connection to Prolific's REST API: JSON over HTTPS, `Authorization: Token`.

The token comes from PROLIFIC_TOKEN (Prolific tokens are per workspace: make one under
Settings > API tokens); it is sent in the header and never printed, logged or put into an
error. The base URL is https://api.prolific.com/api/v1/ unless PROLIFIC_API_URL or
`--api-url` says otherwise (a local `study prolific emulate` for a dry run); any address that
is not https must be a loopback one, so a token is never sent in clear over a network.

Every refusal becomes ProlificError, which says whether the outcome is certain: a 4xx answer
means Prolific did nothing; a lost connection, a timeout or a 5xx means it may have done it,
which is what the paying code (study.prolific.payments) must never guess about.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import urljoin, urlparse

import requests

API_URL = "https://api.prolific.com/api/v1/"
TOKEN_VARIABLE = "PROLIFIC_TOKEN"
URL_VARIABLE = "PROLIFIC_API_URL"
TIMEOUT_SECONDS = 30
PAGE_SIZE = 100


class NoToken(RuntimeError):
    pass


class ProlificError(RuntimeError):
    """A call Prolific refused (`certain`: it did nothing) or whose outcome is unknown."""

    def __init__(self, message: str, *, status: int | None = None, certain: bool = True):
        super().__init__(message)
        self.message = message
        self.status = status
        self.certain = certain


def describe(body: Any) -> str:
    """Prolific's error body as one line: `detail` is a string or {"field": ["message"]}."""
    error = body.get("error", body) if isinstance(body, dict) else body
    detail = error.get("detail", error) if isinstance(error, dict) else error
    if isinstance(detail, dict):
        return "; ".join(
            f"{key}: {' '.join(map(str, value)) if isinstance(value, list) else value}"
            for key, value in detail.items()
        )
    return str(detail)


def is_loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class Client:
    base_url: str
    token: str = field(repr=False)
    http: requests.Session = field(default_factory=requests.Session, repr=False)

    @property
    def emulated(self) -> bool:
        return is_loopback(self.base_url)

    def call(self, method: str, path: str, body: dict | None = None, **params) -> Any:
        url = urljoin(self.base_url, path.lstrip("/"))
        what = f"{method} {path}"
        try:
            response = self.http.request(
                method,
                url,
                json=body,
                params=params or None,
                headers={"Authorization": f"Token {self.token}", "Accept": "application/json"},
                timeout=TIMEOUT_SECONDS,
            )
        except requests.RequestException as error:
            raise ProlificError(
                f"{what}: no answer from Prolific ({type(error).__name__}); it may or may not "
                "have been done",
                certain=False,
            ) from None
        if response.status_code >= 400:
            try:
                detail = describe(response.json())
            except ValueError:
                detail = response.text[:200]
            certain = response.status_code < 500 and response.status_code not in (408, 429)
            if response.status_code == 401:
                detail += f". Fix: set {TOKEN_VARIABLE} to a valid API token of the workspace"
            if response.status_code == 429:  # Prolific limits how often a token may call it
                wait = response.headers.get("Retry-After", "").strip()
                wait = f"{wait} seconds" if wait.isdigit() else "a minute"
                detail = (detail.rstrip(". ") + f". Fix: wait {wait} (Prolific's Retry-After) "
                          "and run the same command again")  # fmt: skip
            raise ProlificError(
                f"{what}: Prolific answered {response.status_code}: {detail}",
                status=response.status_code,
                certain=certain,
            )
        if response.status_code == 204 or not response.content:
            return {}
        try:
            return response.json()
        except ValueError:
            # A web page or a proxy's answer at that address, not Prolific's API: whatever it
            # did with the call is unknown.
            raise ProlificError(
                f"{what}: the answer from {self.base_url} is not JSON "
                f"({response.headers.get('Content-Type') or 'no content type'}), so that is not "
                f"Prolific's API; the call may or may not have been done. Fix: check --api-url "
                f"(or {URL_VARIABLE}); Prolific's is {API_URL}",
                status=response.status_code,
                certain=False,
            ) from None

    def get(self, path: str, **params) -> Any:
        return self.call("GET", path, **params)

    def post(self, path: str, body: dict | None = None) -> Any:
        return self.call("POST", path, body if body is not None else {})

    def patch(self, path: str, body: dict) -> Any:
        return self.call("PATCH", path, body)

    def delete(self, path: str, body: dict | None = None) -> Any:
        return self.call("DELETE", path, body)

    def pages(self, path: str, **params) -> Iterator[dict]:
        """Every item of a paged list (`results`, following `_links.next`)."""
        params = {"page": 1, "page_size": PAGE_SIZE, **params}
        while True:
            answer = self.get(path, **params)
            results = answer.get("results", []) if isinstance(answer, dict) else answer
            yield from results
            # The next link alone says whether there is more, and where: Prolific may give
            # fewer items a page than asked for, and pages some lists by limit and offset
            # (a study's submissions), where asking for page 2 would read page 1 again.
            following = ((answer.get("_links") or {}).get("next") or {}).get("href")
            if not following or not results:
                return
            there, here = urlparse(urljoin(self.base_url, following)), urlparse(self.base_url)
            if (there.scheme, there.netloc) != (here.scheme, here.netloc):
                raise ProlificError(
                    f"GET {path}: the next page is at {there.scheme}://{there.netloc}, not "
                    f"Prolific's address {here.scheme}://{here.netloc}; the token is not sent "
                    "there. Fix: check --api-url (or PROLIFIC_API_URL)."
                )
            path, params = urljoin(self.base_url, following), {}


def connect(api_url: str | None = None, token: str | None = None) -> Client:
    """The client for `api_url` (else PROLIFIC_API_URL, else Prolific) with PROLIFIC_TOKEN."""
    base = api_url or os.environ.get(URL_VARIABLE) or API_URL
    if not base.endswith("/"):
        base += "/"
    parts = urlparse(base)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise NoToken(
            f"--api-url {base!r} is not a URL. Fix: give Prolific's API address, e.g. {API_URL}, "
            "or the one `study prolific emulate` prints."
        )
    if parts.scheme == "http" and not is_loopback(base):
        raise NoToken(
            f"--api-url {base!r} is plain http to another machine: the API token would travel "
            "in clear. Fix: use https, or http only to 127.0.0.1 (`study prolific emulate`)."
        )
    token = token if token is not None else os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise NoToken(
            f"No Prolific API token: set {TOKEN_VARIABLE} (Prolific: Settings > API tokens; "
            "`study prolific emulate` prints the emulator's)."
        )
    return Client(base, token)
