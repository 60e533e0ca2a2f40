"""A local MTurk endpoint (moto does not implement MTurk) for tests and researchers' dry runs.

It speaks MTurk's real JSON wire protocol, so the real boto3 client talks to it through
`endpoint_url`; it checks every request against botocore's own MTurk model and keeps the whole
lifecycle in a JSON file: HIT types, HITs, a worker accepting and submitting through the task
server, assignments, approvals, rejections, bonuses, qualifications, blocks, notifications and
the balance. Files: state.py (the account), hits.py / assignments.py / qualifications.py /
workers.py (the operations), identity.py (STS GetCallerIdentity: the account id, which
AWS answers for any credentials), worker.py (the simulated worker), wire.py (HTTP), server.py.

Error answers follow the service: RequestError or ServiceFault with a Message; TurkErrorCode is
given only where MTurk's documentation or the notes name one (HitAlreadyExists,
InvalidMaximumAssignmentsIncrease, InvalidAssignmentState, XMLParseError).
"""

from study.mturk.emulator.server import Running, serve, serve_in_thread
from study.mturk.emulator.state import State
from study.mturk.emulator.wire import Emulator
from study.mturk.emulator.worker import accept_and_submit

__all__ = ["Emulator", "Running", "State", "accept_and_submit", "serve", "serve_in_thread"]
