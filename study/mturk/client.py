"""The requester's connection to MTurk: a boto3 client plus the checks around every call.

`connect()` gives the sandbox unless `live=True`; `endpoint_url` points boto3 elsewhere (a local
`study mturk emulate` for a dry run). Credentials come from the standard AWS chain (environment,
~/.aws/credentials, AWS_PROFILE, instance roles); a custom endpoint without credentials gets
placeholder ones, since the emulator checks that requests are signed, not by whom.

Every call goes through `Requester.call`, which validates the request against botocore's MTurk
model first (study.mturk.validate) and turns the service's refusals into MTurkError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator

import boto3
import botocore.config
import botocore.exceptions
from botocore import xform_name

from study.mturk import validate

REGION = "us-east-1"  # MTurk exists only there
SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
LIVE_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
PAGE_SIZE = 100  # the model's maximum for MaxResults


class NoCredentials(RuntimeError):
    pass


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
    environment: str  # "sandbox", "live", or either "@<endpoint url>"
    live: bool
    endpoint_url: str
    calls: list[str] = field(default_factory=list, repr=False)  # operation names, in order

    def call(self, operation: str, **params) -> dict:
        """Validate, send, and return the response without its ResponseMetadata."""
        validate.check(operation, params)
        self.calls.append(operation)
        method = getattr(self.client, xform_name(operation))
        try:
            response = method(**params)
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


def environment_name(live: bool, endpoint_url: str | None) -> str:
    """The key that keeps sandbox, live and custom endpoints apart in the study database."""
    base = "live" if live else "sandbox"
    return f"{base}@{endpoint_url.rstrip('/')}" if endpoint_url else base


def new_session() -> boto3.Session:
    """A session on the standard AWS credential chain."""
    return boto3.Session()


def connect(
    *, live: bool = False, endpoint_url: str | None = None, session: boto3.Session | None = None
) -> Requester:
    session = session or new_session()
    endpoint = endpoint_url or (LIVE_ENDPOINT if live else SANDBOX_ENDPOINT)
    credentials = session.get_credentials()
    extra = {}
    if credentials is None:
        if not endpoint_url:
            raise NoCredentials(
                "No AWS credentials found. Configure them as for the AWS CLI: `aws configure`, "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (the IAM user needs "
                "the AmazonMechanicalTurkFullAccess policy)."
            )
        extra = {"aws_access_key_id": "emulator", "aws_secret_access_key": "emulator"}
    config = botocore.config.Config(
        retries={"mode": "standard", "max_attempts": 3}, connect_timeout=10, read_timeout=30
    )
    client = session.client(
        "mturk", region_name=REGION, endpoint_url=endpoint, config=config, **extra
    )
    return Requester(client, environment_name(live, endpoint_url), live, endpoint)
