"""Post-processing the model's text for a writer (CoAuthor App. A.3): sentence cuts, the
blocklist, duplicates and probabilities, shared by the paradigms that suggest text (Tab:
study.paradigms.tab, ghost text: study.paradigms.proactive)."""
