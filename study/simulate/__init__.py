"""`study simulate`: LLM-backed simulated writers who pilot a study through its real server.

- `run`: starts (or finds) the study's server and the writers' model, runs N writers, marks
  their sessions in the database (`study.store.simulated`).
- `participant`: one writer's way along the participant's path over HTTP.
- `editor`: the CoAuthor records the writing page would log for the same actions.
- `pages`: the pages' forms, prompt buttons, boot data and verification code.
- `writer`: the model's decisions (write, ask, accept, answer) and the personas' fallback habits.
- `personas`: who the writers are.
"""
