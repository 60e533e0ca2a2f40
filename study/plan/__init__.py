"""A plan fixed before launch (README, "Preregistration").

`study preregister DIR` writes DIR/preregistration.json: the study's configuration, its arms
(conditions and their paradigms), the outcome measures and planned comparisons of [plan], and
when, signed with an Ed25519 key kept beside it (`record`). It is refused once participants have
started, and over an existing record unless `--replace` (which keeps the earlier one beside
it). `study report` shows the planned comparisons first and every deviation from the record
next to them (`deviations`); `study preregister verify DIR` checks the signature and lists the
deviations. Every launch (`study mturk post`, `study prolific publish`, `study serve`) warns of
a missing record or a study changed since it (`launch`); `study status` says where the plan
stands (`standing`).
"""
