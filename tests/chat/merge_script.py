"""What a scripted assistant says in the running-document tests: the chat page's merge
(tests/browser/test_chat_merged_document.py) and its rule in Python (tests/chat/test_merge.py)."""

from __future__ import annotations

FIRST = "The lighthouse keeper counted the ships every night."
ADDED = "One more line."
REWRITE = (
    "The keeper counted the ships every night, and one night a ship did not come. "
    "He waited until dawn, then rowed out alone."
)
# What the assistant says, in turn: a draft wrapped in talk, a short addition, only a question,
# a new version; then questions until the conversation ends.
REPLIES = [
    f"Here is a first draft:\n\n{FIRST}\n\nShould it be sadder?",
    f"{ADDED}\n\nWhat should happen next?",
    "Would you like a title?",
    f"Here is a new version:\n\n{REWRITE}",
]
