"""study: run crowdsourced human-AI writing studies and publish their datasets.

Five parts (README, Layout):

- the core: the participant's path (study.server, study.survey), storage (study.store), the
  configuration (study.config), the model client (study.model_client), `study simulate`
  (study.simulate) and `study report` (study.report). It learns which interaction paradigms
  exist, and what each serves, from the registry;
- the paradigms (study.paradigms): one folder per way of writing with the AI (none, tab,
  proactive, chat), each declaring a `Paradigm` (study.paradigms.base); a new one is a folder
  and a `register()` call;
- the providers: the local model endpoint (study.lm) and recruitment: MTurk (study.mturk) and
  Prolific (study.prolific), each a folder behind one interface (study.providers), which the
  core asks and never names (the qualification rounds of study.review are shared);
- curation (study.curation, study.export, study.metrics): formats, validation, replay, blocks,
  statistics;
- release (study.release): anonymized, versioned datasets.
"""

__version__ = "0.1.0"
