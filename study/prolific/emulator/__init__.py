"""A local Prolific for tests and researchers' dry runs: `study prolific emulate`.

It speaks Prolific's researcher REST API (https://api.prolific.com/api/v1/, documented at
docs.prolific.com) on a local port, so the real client code talks to it by changing only the base
URL and the token. WIRE.md, next to this file, lists every route with its JSON and status codes.

What it speaks: token auth (`Authorization: Token <token>`, 401 otherwise); users/me; one
workspace with one project and its balance; the study cost calculator; studies (draft, checks,
PATCH, DELETE of drafts, the PUBLISH / PAUSE / START / STOP status machine and the statuses a study
reaches by itself); submissions (paginated lists, APPROVE / REJECT with their rules, bulk approve);
bulk bonus payments and their asynchronous pay step; participant groups and their members;
messages. Errors come in Prolific's shape `{"error": {"status", "error_code", "title", "detail",
"additional_information"}}`. Besides the API: a participant's side (take part, be sent to the study
URL with its placeholders filled, come back to /submissions/complete?cc=CODE, return), and test
controls under /_emulator/ (injected faults, settling payments, the clock, the state).

What it does not: surveys, hooks (webhooks), filter sets and any filter other than the
participant-group allow and block lists (others are stored, not evaluated), SCHEDULED studies
(`publish_at`), RESERVED submissions, screen-outs and partial approvals, return requests,
Taskflow, AI Task Builder, rate limits, several workspaces or tokens. The `error_code` numbers and
the exact wording of messages are the emulator's own.

The provider's traps, as the facts note on Prolific's API (prolific-facts.md, the provider's
notes) states them, checked against docs.prolific.com (where they differ, the docs win):
- Money is in minor units (`reward: 150` is 1.50), except `csv_bonuses` amounts, which are major
  units ("1.50"; the docs warn "30" pays 30.00): both are kept exactly so.
- The minimum reward rate, 8.00 USD / 6.00 GBP per hour of `estimated_completion_time` (note and
  Prolific's pricing page), is refused at creation (and PATCH) and again at PUBLISH.
- Publishing checks the balance and holds reward + fee for every place (docs: "Checking if your
  account has sufficient balance ... Locking the amount required"); the API cannot top up.
- The cost calculator answers `total_cost` with Prolific's fee and VAT: the fee rate is a
  setting of the emulated account, so a client that hard-codes a fee is caught.
- The study URL must carry `{{%PROLIFIC_PID%}}` (and may carry `{{%STUDY_ID%}}`,
  `{{%SESSION_ID%}}`), filled per participant; SESSION_ID is the submission id (docs).
- The note says returned and timed-out places are re-offered; the docs add rejected ones, and
  so does the emulator.
- The note names a submission's `participant_id` and `study_code`; the docs' submission object
  says `participant` and `entered_code`. The emulator answers all four.
- The bonus pay endpoint is not idempotent (note and docs): each call pays again,
  asynchronously, and the emulator does exactly that, so a client that sends pay twice for one id
  is caught paying twice. Injected faults (`after`: done, answer lost; with `hold`, the answer
  kept back until released, so a test can kill a real process while it waits) let a test check
  that the client reconciles (reads the submissions' `bonus_payments`, or the balance) before it would
  ever send pay again.
- Participant groups gate studies through allow/block-list filters, read at each join.
- Submission transitions are idempotent (docs): the same action twice is ignored, not an error.

Files: state.py (the workspace, the clock, money held and paid), fees.py, errors.py, call.py
(request view, pagination), account.py, studies.py, submissions.py, bonuses.py, groups.py,
messages.py, participant.py (the simulated participant), faults.py, wire.py (HTTP), server.py.
"""

from study.prolific.emulator.server import Running, serve, serve_in_thread
from study.prolific.emulator.state import State
from study.prolific.emulator.wire import Emulator

__all__ = ["Emulator", "Running", "State", "serve", "serve_in_thread"]
