"""The requester's connection to MTurk: a boto3 client plus the checks around every call.

`connect()` gives the sandbox unless `live=True`; `endpoint_url` points boto3 elsewhere (a local
`study mturk emulate` for a dry run). Credentials come from the standard AWS chain (environment,
~/.aws/credentials, AWS_PROFILE, instance roles); every way that chain can fail becomes one
NoCredentials message naming the fix. Only a loopback endpoint (127.0.0.1, ::1, localhost) may
be used without credentials: requests are then signed with placeholders, since the emulator
checks that requests are signed, not by whom. Any other endpoint could be a real service, so it
gets the researcher's credentials or nothing.

The connection's `environment` keys everything the study database keeps about MTurk: sandbox or
live, and the requester's AWS account (study.mturk.account), never the endpoint's address.

Every call goes through `Requester.call`, which validates the request against botocore's MTurk
model first (study.mturk.validate) and turns the service's refusals into MTurkError.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import urlparse

import boto3
import botocore.config
import botocore.exceptions
from botocore import xform_name

from study.mturk import account, validate

REGION = "us-east-1"  # MTurk exists only there
SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
LIVE_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
PAGE_SIZE = 100  # the model's maximum for MaxResults


class NoCredentials(RuntimeError):
    pass


NO_CREDENTIALS = (
    "No AWS credentials found. Configure them as for the AWS CLI: `aws configure`, "
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (the IAM user needs "
    "the AmazonMechanicalTurkFullAccess policy)."
)
# botocore's ways of failing to find or load credentials (names present in this botocore).
CREDENTIAL_ERRORS = tuple(
    getattr(botocore.exceptions, name)
    for name in (
        "NoCredentialsError",
        "PartialCredentialsError",
        "ProfileNotFound",
        "ConfigParseError",
        "ConfigNotFound",
        "CredentialRetrievalError",
        "UnknownCredentialError",
        "InvalidConfigError",
        "NoAuthTokenError",
        "TokenRetrievalError",
        "SSOError",
        "SSOTokenLoadError",
        "UnauthorizedSSOTokenError",
    )
    if hasattr(botocore.exceptions, name)
)


def credential_problem(error: Exception) -> NoCredentials:
    """One line a researcher can act on, for any of botocore's credential errors."""
    if isinstance(error, botocore.exceptions.PartialCredentialsError):
        return NoCredentials(
            f"Incomplete AWS credentials: {error}. Fix: set both AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys), or unset them and "
            "use `aws configure` or AWS_PROFILE."
        )
    if isinstance(error, botocore.exceptions.ProfileNotFound):
        return NoCredentials(
            f"AWS profile not found: {error}. Fix: set AWS_PROFILE to a profile listed by "
            "`aws configure list-profiles`, create it with `aws configure --profile NAME`, or "
            "unset AWS_PROFILE to use the default credentials."
        )
    if isinstance(error, botocore.exceptions.NoCredentialsError):
        return NoCredentials(NO_CREDENTIALS)
    return NoCredentials(
        f"AWS credentials could not be loaded: {error}. Fix: check ~/.aws/config and "
        "~/.aws/credentials (`aws configure list` shows what is used), or set "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY."
    )


class MTurkError(RuntimeError):
    """MTurk refused a request, or could not be reached.

    `certain` says whether the request is known to have had no effect: a RequestError is a
    refusal; a ServiceFault, a timeout or a lost connection may or may not have been processed.
    """

    def __init__(
        self, operation: str, code: str, message: str, turk_code: str | None = None
    ) -> None:
        self.operation = operation
        self.code = code
        self.message = message
        self.turk_code = turk_code
        detail = f" [{turk_code}]" if turk_code else ""
        super().__init__(f"{operation} failed: {code}{detail}: {message}")

    def __reduce__(self):
        # Unpickling (a worker process's exception) calls the class with these arguments.
        return type(self), (self.operation, self.code, self.message, self.turk_code)

    @property
    def certain(self) -> bool:
        return self.code == "RequestError"

    @property
    def token_already_processed(self) -> bool:
        """MTurk's answer to a UniqueRequestToken used again within 24 hours."""
        text = self.message.lower()
        return self.code == "RequestError" and "already been processed" in text

    def entity_id(self) -> str | None:
        """The id MTurk names in the message (HitAlreadyExists gives the existing HIT's id)."""
        found = re.findall(r"\b[A-Z0-9]{20,64}\b", self.message)
        return found[-1] if found else None


@dataclass
class Requester:
    """A connected requester account in one environment."""

    client: Any
    environment: str  # "sandbox:<account id>" or "live:<account id>" (study.mturk.account)
    live: bool
    endpoint_url: str
    custom_endpoint: bool = False  # --endpoint-url away from MTurk: a dry run (is_dry_run)
    legacy_environment: str = ""  # the key earlier versions filed this connection's rows under
    calls: list[str] = field(default_factory=list, repr=False)  # operation names, in order

    def call(self, operation: str, **params) -> dict:
        """Validate, send, and return the response without its ResponseMetadata."""
        validate.check(operation, params)
        self.calls.append(operation)
        method = getattr(self.client, xform_name(operation))
        try:
            response = method(**params)
        except CREDENTIAL_ERRORS as error:
            raise credential_problem(error) from None
        except botocore.exceptions.ClientError as error:
            body = error.response
            raise MTurkError(
                operation,
                body.get("Error", {}).get("Code", "Error"),
                body.get("Error", {}).get("Message", str(error)),
                body.get("TurkErrorCode") or body.get("Error", {}).get("TurkErrorCode"),
            ) from None
        except (
            botocore.exceptions.EndpointConnectionError,
            botocore.exceptions.ConnectionError,
            botocore.exceptions.ReadTimeoutError,
        ) as error:
            raise MTurkError(
                operation, "ConnectionError", f"cannot reach {self.endpoint_url}: {error}"
            ) from None
        response.pop("ResponseMetadata", None)
        return response

    def pages(self, operation: str, key: str, **params) -> Iterator[dict]:
        """Every item of a List* operation, following NextToken."""
        params = {"MaxResults": PAGE_SIZE, **params}
        while True:
            response = self.call(operation, **params)
            yield from response.get(key, [])
            token = response.get("NextToken")
            if not token:
                return
            params["NextToken"] = token


def legacy_environment_name(live: bool, endpoint_url: str | None) -> str:
    """The key earlier versions used (by endpoint address); study.mturk.account moves its rows."""
    base = "live" if live else "sandbox"
    return f"{base}@{endpoint_url.rstrip('/')}" if endpoint_url else base


def new_session() -> boto3.Session:
    """A session on the standard AWS credential chain."""
    return boto3.Session()


def is_loopback(endpoint_url: str) -> bool:
    host = urlparse(endpoint_url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class WrongEnvironment(ValueError):
    pass


def is_dry_run(endpoint_url: str | None) -> bool:
    """Whether --endpoint-url points away from MTurk (e.g. at `study mturk emulate`): only then
    may a task URL be http or on this machine. MTurk's own endpoints, as AWS's examples pass
    them, are no dry run."""
    mturk_hosts = {urlparse(address).hostname for address in (LIVE_ENDPOINT, SANDBOX_ENDPOINT)}
    return bool(endpoint_url) and urlparse(endpoint_url).hostname not in mturk_hosts


def check_environment(live: bool, endpoint_url: str | None) -> None:
    """--endpoint-url naming MTurk's own live or sandbox endpoint must agree with --live or
    --sandbox: live money spent as "sandbox" would skip the budget cap and the confirmation and
    be filed in the sandbox's ledger."""
    host = urlparse(endpoint_url or "").hostname
    for name, address, flag in (
        ("live marketplace", LIVE_ENDPOINT, True),
        ("sandbox", SANDBOX_ENDPOINT, False),
    ):
        if host == urlparse(address).hostname and live != flag:
            raise WrongEnvironment(
                f"--endpoint-url {endpoint_url} is MTurk's {name}, but the command runs with "
                f"--{'live' if live else 'sandbox'}. Fix: pass --{'live' if flag else 'sandbox'} "
                "instead of --endpoint-url (it is only for `study mturk emulate` or a proxy)."
            )


def connect(
    *, live: bool = False, endpoint_url: str | None = None, session: boto3.Session | None = None
) -> Requester:
    check_environment(live, endpoint_url)
    endpoint = endpoint_url or (LIVE_ENDPOINT if live else SANDBOX_ENDPOINT)
    try:
        session = session or new_session()
        credentials = session.get_credentials()
    except CREDENTIAL_ERRORS as error:
        raise credential_problem(error) from None
    extra = {}
    if credentials is None:
        if not endpoint_url:
            raise NoCredentials(NO_CREDENTIALS)
        if not is_loopback(endpoint_url):
            raise NoCredentials(
                f"No AWS credentials found, and {endpoint_url} is not on this machine: only a "
                "loopback endpoint (127.0.0.1, localhost), such as `study mturk emulate`, is "
                "used without credentials. Fix: configure AWS credentials (`aws configure`, "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)."
            )
        extra = {"aws_access_key_id": "emulator", "aws_secret_access_key": "emulator"}
    config = botocore.config.Config(
        retries={"mode": "standard", "max_attempts": 3}, connect_timeout=10, read_timeout=30
    )
    try:
        client = session.client(
            "mturk", region_name=REGION, endpoint_url=endpoint, config=config, **extra
        )
        account_id = account.identify(
            session, endpoint_url=endpoint_url, config=config, credentials=extra
        )
    except CREDENTIAL_ERRORS as error:
        raise credential_problem(error) from None
    except account.UnknownAccount as error:
        raise MTurkError("GetCallerIdentity", "ConnectionError", str(error)) from None
    return Requester(
        client,
        account.environment_key(live, account_id),
        live,
        endpoint,
        custom_endpoint=is_dry_run(endpoint_url),
        legacy_environment=legacy_environment_name(live, endpoint_url),
    )
