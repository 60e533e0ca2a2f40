"""A judging round: crowd judges rate texts the study collected (README, "Judging round").

Jakesch et al. (CHI 2023) had 500 independent judges rate the 9,223 sentences their writers
wrote. A judging round does that with the reviewers' rubric, rating and agreement code
(study.review): the study's finished texts, whole or split into sentences (`items`), each
rated by k judges on the rubric; the items spread evenly over fixed-size tasks (`design`), one
task per judge and MTurk assignment; gold items with known answers in every task (`gold`);
judges recruited and paid through the study's MTurk code and payments ledger (study.mturk.judging,
`study judging post` and `review`); the
ratings joined to their sessions (`results`). Judges see the texts only: never a session id, a
condition, an arm or a worker id.
"""
