"""Running a study on Amazon Mechanical Turk (the `study mturk` commands).

One file per concept, named after the MTurk data model:
  client.py          the boto3 client (sandbox by default, --live, --endpoint-url) and its calls
  account.py         which AWS account a connection reaches (STS), the key its rows are filed by
  validate.py        every request checked against botocore's MTurk model before it is sent
  money.py           dollar amounts and MTurk's fees (Decimal only)
  settings.py        the [mturk] section of study.toml
  context.py         what every command works with: study, settings, account, database
  ledger.py          the payments ledger and the budget cap
  hits.py            what a HIT is made of (ExternalQuestion, requirements); list, extend,
                     expire, delete
  posting.py         posting HITs crash-safely (planned rows, tokens, annotations, adoption)
  extensions.py      adding assignments to a HIT exactly once (intent first, then MTurk)
  qualifications.py  qualification types, grants and the exclusion qualification
  assignments.py     sync: MTurk's assignments reconciled with local sessions
  review.py          the approve/reject rules, and approving and rejecting
  bonuses.py         bonuses paid exactly once
  workers.py         notifying and blocking workers
  repeat.py          the server-side repeat check (one session per worker), and which sessions
                     MTurk has synced (releases count only those)
  qualify.py         `study qualify` for a round run on MTurk: pay its HITs, grant the
                     study's qualification
  judging.py         a judging round's judges recruited and paid on MTurk
  provider.py        all of it behind study.providers' interface, which the core asks
  emulator/          a local MTurk endpoint for tests and dry runs
  cli/               the click group `mturk`, MTurk's `study qualify` and `study judging post`
                     and `review`
"""
