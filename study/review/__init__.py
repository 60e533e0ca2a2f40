"""Qualification rounds and the reviewers' workspace (CoAuthor, Lee, Liang & Yang, CHI 2022,
§4.3.1 and App. D: 201 writers took a qualification round, the authors rated every submission on
a 1-5 rubric, and the 100 rated 4 or 5 wrote in the main round).

Data flows one way: sessions -> submissions (pseudonymous) -> ratings and decisions -> outcomes
-> MTurk. The pieces, one concept per module:

- `settings`: `[[rounds]]` and `[review]` of study.toml (rubric, pass mark, ratings per
  submission, the automatic disqualification rule), with the paper's defaults.
- `rounds`: which round a session is in and who may enter it (the task server asks).
- `submissions`: finished sessions of the reviewed rounds under a random pseudonym.
- `rules`: pass/fail as pure functions: disqualification, disagreement, the final score.
- `queue`: which submission a reviewer rates next; `ratings`: ratings, blind until one rates;
  `decisions`: adjudications and every submission's outcome.
- `accounts`, `logins`: reviewer accounts (salted hashes) and login sessions with CSRF tokens.
- `audit`: the append-only log of every rating, edit and decision.
- `agreement` (one statistic per module), `report`: inter-rater agreement for researchers.
- `playback`, `presentation`: what reviewers see (replay steps with authorship from
  study.curation.replay, statistics, self-evaluation), never a worker id; `pastes`: text
  pasted from outside the study; `panel`: an L0 session's assistant panel conversation.
- `qualify`: the qualification granted on MTurk, the qualification HITs paid via the ledger.
- `web`: the Flask blueprint under /review; `cli`: `study reviewers`, `review`, `qualify`.
"""
