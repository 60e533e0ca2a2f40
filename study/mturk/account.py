"""Which requester account a connection reaches, and the key the study database files it under.

Everything stored about MTurk (HITs, assignments, qualifications, the payments ledger and its
budget) is keyed by environment and account, "sandbox:<account id>" or "live:<account id>": the
same account reached under two addresses is one ledger, and sandbox and live (different worker
pools, qualification ids and money) never mix.

MTurk's API never names the account (GetAccountBalance gives money only), so the id comes from
STS GetCallerIdentity signed with the same credentials. That is sound: an access key belongs to
one account for good, and AWS answers GetCallerIdentity for any valid key without any IAM
permission, so the AmazonMechanicalTurkFullAccess policy is enough. With --endpoint-url the
endpoint is asked first: `study mturk emulate` answers GetCallerIdentity with the account id it
keeps in its state file, as AWS would; an endpoint that does not (a proxy in front of MTurk) is
the account of the researcher's credentials, so AWS's STS is asked with them.

Databases written before this key existed filed rows by endpoint address ("sandbox",
"live", "sandbox@http://..."); `adopt_legacy_rows` moves them to the account's key the first
time the account is seen, so nothing already stored is lost.
"""

from __future__ import annotations

import boto3
import botocore.config
import botocore.exceptions
from sqlalchemy import Engine, func, select, update

from study.store import reading, writing
from study.store.mturk import (
    mturk_assignments,
    mturk_extensions,
    mturk_hits,
    mturk_missing_submissions,
    mturk_payments,
    mturk_qualifications,
)
from study.store.review_tables import review_grants

STS_REGION = "us-east-1"
MTURK_TABLES = (
    mturk_hits,
    mturk_assignments,
    mturk_qualifications,
    mturk_payments,
    mturk_extensions,
    mturk_missing_submissions,
    review_grants,
)


class UnknownAccount(RuntimeError):
    pass


def environment_key(live: bool, account_id: str) -> str:
    return f"{'live' if live else 'sandbox'}:{account_id}"


def identify(
    session: boto3.Session,
    *,
    endpoint_url: str | None,
    config: botocore.config.Config,
    credentials: dict,
) -> str:
    """The 12-digit AWS account id behind this connection (see the module's docstring)."""
    problems = []
    if endpoint_url:
        try:
            return _caller_account(session, endpoint_url, config, credentials)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
            if credentials:  # placeholders: AWS would not know them
                raise UnknownAccount(
                    f"{endpoint_url} did not say which account it is (STS GetCallerIdentity: "
                    f"{error}). Fix: point --endpoint-url at `study mturk emulate`, or configure "
                    "AWS credentials for a proxy in front of MTurk."
                ) from None
            problems.append(f"{endpoint_url}: {error}")
    try:
        return _caller_account(session, None, config, credentials)
    except botocore.exceptions.ClientError as error:
        message = error.response.get("Error", {}).get("Message", str(error))
        raise UnknownAccount(
            f"AWS did not accept these credentials ({message}). Fix: check the access key with "
            "`aws sts get-caller-identity`, or configure other credentials."
        ) from None
    except (
        botocore.exceptions.EndpointConnectionError,
        botocore.exceptions.ConnectionError,
        botocore.exceptions.ReadTimeoutError,
    ) as error:
        problems.append(str(error))
        raise UnknownAccount(
            "Cannot learn which AWS account these credentials belong to (STS GetCallerIdentity): "
            + "; ".join(problems)
            + ". Fix: check the network connection to AWS."
        ) from None


def _caller_account(
    session: boto3.Session,
    endpoint_url: str | None,
    config: botocore.config.Config,
    credentials: dict,
) -> str:
    sts = session.client(
        "sts", region_name=STS_REGION, endpoint_url=endpoint_url, config=config, **credentials
    )
    return sts.get_caller_identity()["Account"]


def adopt_legacy_rows(engine: Engine, legacy_key: str, key: str) -> int:
    """Move rows filed under an earlier version's endpoint-address key to the account's key,
    once: only while the account's key has no rows yet. Returns how many rows moved."""
    with reading(engine) as connection:  # the usual case: nothing to move, no write lock
        if not any(_count(connection, table, legacy_key) for table in MTURK_TABLES):
            return 0
    with writing(engine) as connection:
        if any(_count(connection, table, key) for table in MTURK_TABLES):
            return 0
        moved = 0
        for table in MTURK_TABLES:
            moved += connection.execute(
                update(table).where(table.c.environment == legacy_key).values(environment=key)
            ).rowcount
        return moved


def _count(connection, table, key: str) -> int:
    return connection.execute(
        select(func.count()).select_from(table).where(table.c.environment == key)
    ).scalar_one()
