"""What a chat study's dataset card says where a writing study's says something else.

A chat study (CollabLLM's document creation, study.paradigms.chat) has no prompts, no minimum
writing time, no Tab suggestions and no editor log: its release is `conversations.jsonl`. The
card (study.release.card) takes these sentences for it, so a dataset user is not told about a
writing study that never ran.
"""

from __future__ import annotations

from study.release.layout import CONVERSATIONS
from study.release.source import StudyInfo

WHAT = "Conversations of people writing a document with a chat assistant (CollabLLM's document-creation study)"

PURPOSE = (
    "To study how people write a document together with a chat assistant, following "
    "CollabLLM's document-creation study: every message, rating and edit of the document is "
    "recorded."
)

COLLECTION = (
    "Participants chose what to write (an intent), noted their thoughts, then wrote the document "
    "in a pane beside a chat with an assistant they were assigned (its name hidden behind a "
    "label), rated the chat between exchanges and answered a final survey (CollabLLM, App. E). "
)

# What the redaction read, in the card's Preprocessing section.
REDACTED = (
    "every message of the conversations, the document as it stood at each edit of its pane, "
    "the pre-writing notes, the ratings' and the final survey's answers"
)

USES = (
    "Research on writing with a chat assistant: how people ask an assistant for a document, "
    "answer its questions and take its replies into their document, and how assistants (the "
    "conditions) differ in the conversations and documents they lead to. The document pane's "
    "edits can be replayed to any moment."
)

ARMS = (
    "- `arms.json`: every assistant (condition) of the study as its released conversations ran "
    "it: the model its calls asked for and the models that answered, decoding settings, "
    "the system prompt its replies were sent with, `sessions` and `closed` (true: closed to new "
    "participants, `assign = false` in `study.toml` when the release was built; an entry per "
    f"setting that ran; `null`: not recorded; `paradigm` \"chat\"); each line of `{CONVERSATIONS}` names its "
    "assistant in `assistant.condition`, with the model and system prompt its own replies were sent with."
)


def terms(study: StudyInfo) -> str:
    """What the study asked of each participant, in place of the writing study's minimum writing
    time and prompts per writer: the finish works after [chat] min_exchanges exchanges."""
    return (
        f"A participant could finish the chat after {study.min_exchanges} exchanges (a message "
        "and the assistant's reply) and chose what to write from the intents offered."
    )
