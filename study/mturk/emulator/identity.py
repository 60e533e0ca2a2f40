"""STS GetCallerIdentity: which AWS account the emulator stands in for.

MTurk's API never names the requester's account, so `study mturk` asks STS (study.mturk.account)
and files its ledger under the answer. The emulator answers the same query-protocol request at
its own address, with an account id kept in its state file: one emulator reached as 127.0.0.1
or as localhost is one account, as one AWS account is whatever endpoint address reaches it.
"""

from __future__ import annotations

import uuid
from xml.sax.saxutils import escape

from werkzeug.wrappers import Response

from study.mturk.emulator.state import State

STS_NS = "https://sts.amazonaws.com/doc/2011-06-15/"


def caller_identity(state: State) -> Response:
    with state.lock:
        account_id = state.account_id()
    body = (
        f'<GetCallerIdentityResponse xmlns="{STS_NS}"><GetCallerIdentityResult>'
        f"<Arn>arn:aws:iam::{escape(account_id)}:user/requester</Arn>"
        f"<UserId>AIDAEMULATEDREQUESTER</UserId><Account>{escape(account_id)}</Account>"
        "</GetCallerIdentityResult>"
        f"<ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata>"
        "</GetCallerIdentityResponse>"
    )
    return Response(body, 200, content_type="text/xml")
