"""Proactive co-writing sessions (MindCopilot L1-L3) in curation.

- `checks`: what `study curate validate` checks beyond the CoAuthor invariants.
- `suggestions`: the per-suggestion records (spec A2.6) derived from a session's log.
The metrics themselves are in `study.paradigms.proactive.metrics`, one per file.
"""

EXTENSION_EVENTS = frozenset(
    {"suggestion-stale", "suggestion-modify", "window-blur", "window-focus", "stage-change",
     # L0's assistant panel (static/editor-assistant.js)
     "chat-send", "chat-receive", "chat-copy", "panel-focus"}
)
