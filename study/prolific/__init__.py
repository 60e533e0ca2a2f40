"""Prolific as a recruitment provider: studies, submissions, review, payments, participant
groups and messages over Prolific's researcher REST API (README, "Prolific").

One file per concept: client (the HTTP calls), context (what every command works with),
settings ([prolific] of study.toml), money and ledger (minor units, the budget cap), studies
(draft, publish, places), submissions (sync), review, payments (bonuses), groups (the
qualification gate and the repeat block), qualify (a qualification round into the qualified
group), messages, entry (the participant's path through the task server: Prolific's URL in,
its completion redirect out); provider.py puts them behind study.providers' interface, and
`cli/` holds `study prolific ...` (`emulate`, the local Prolific, is study.prolific.emulator).

Through that interface the core asks Prolific what it asks MTurk: which sessions it synced
(releases, the repeat guard), its qualify command (`study qualify`), its participant path (the
task server), and its submissions and money (`study status`). What the two share lives below
them: sessions filed alike (PID as worker id, submission as assignment, Prolific study as HIT),
the review rules (study.review), the rounds and the release's keyed pseudonyms. What they do
not share is the money: Prolific's ledger is its own table (study.store.prolific), in the
workspace currency's minor units, with its own [prolific] budget cap.
"""
