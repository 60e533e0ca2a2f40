"""CollabLLM's simulated-evaluation metrics (Table 1), pure functions over a conversation's
texts, one per file: `bleu` (the paper's character BLEU of the final document against the goal
document) and `itr` (the LLM judge's interactivity score). `study curate chat` and `study
report` use them (study.paradigms.chat.curation)."""
