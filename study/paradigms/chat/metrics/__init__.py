"""CollabLLM's metrics, pure functions, one per file: `bleu` (the paper's character BLEU of the
final document against the goal document) and `itr` (the LLM judge's interactivity score), its
simulated evaluation's (Table 1); `ratings`, the user study's shares of high final ratings and
relative changes between assistants (§6). `study curate chat` and `study report` use them
(study.paradigms.chat.curation, study.paradigms.chat.report)."""
