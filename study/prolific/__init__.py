"""Prolific as a recruitment provider: studies, submissions, review, payments, participant
groups and messages over Prolific's researcher REST API (README, "Prolific").

One file per concept: client (the HTTP calls), context (what every command works with),
settings ([prolific] of study.toml), money and ledger (minor units, the budget cap), studies
(draft, publish, places), submissions (sync), review, payments (bonuses), groups (the
qualification gate and the repeat block), qualify (a qualification round into the qualified
group), messages; provider.py puts them behind study.providers' interface, and `cli/` holds
`study prolific ...` (`emulate`, the local Prolific, is study.prolific.emulator).
"""
