"""L0's assistant panel (MindCopilot Table 3, Fig. 1 left): the writer states a request, the
model gives a complete response, and the writer integrates it by hand.

The model call is the chat study's (study.paradigms.chat.assistant.reply: the same endpoint
settings, errors and timeouts) with L0's own system message, the writer's document as context
and `[proactive] assistant_max_tokens`. The panel keeps no conversation: each request is
answered against the document as it is then (the paper's L0 reacts to "explicitly stated user
intent" and anticipates nothing), so a response cannot depend on what the writer asked before.
"""

from __future__ import annotations

from dataclasses import replace

from study.config import Condition, SuggestionSettings
from study.paradigms.chat.assistant import Reply, reply
from study.paradigms.proactive.settings import ProactiveSettings

# The most of the writer's document sent with a request (its end: the text around the caret
# is usually there); the request schema caps the document the browser may send at 50,000.
DOCUMENT_CHARS = 20_000


def request_messages(doc: str, request: str) -> list[dict]:
    """The user turn: the document (its last DOCUMENT_CHARS characters), then the request."""
    text = doc[-DOCUMENT_CHARS:]
    return [{"role": "user", "content": f"My document so far:\n\n{text}\n\nMy request: {request}"}]


def answer(suggestions: SuggestionSettings, settings: ProactiveSettings, condition: Condition,
           doc: str, request: str) -> Reply:
    """The model's complete response to one request; never raises (failures in Reply.error)."""
    assistant = replace(condition, system_prompt=settings.system_prompt_l0)
    return reply(suggestions, assistant, request_messages(doc, request), settings.assistant_max_tokens)
