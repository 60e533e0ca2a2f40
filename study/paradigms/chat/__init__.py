"""A chat assistant beside the document (CollabLLM, Wu et al. ICML 2025, App. E): the
participant picks an intent, notes their thoughts, then writes the document while chatting.

Its own stages (intent, prewriting, chat) are pages of study.server.chat; the chat API is
study.server.chat_api; the assistant, config, assignment and export are study.chat.
"""

from study.paradigms.base import Paradigm

PARADIGM = Paradigm(
    name="chat",
    summary="the participant writes a document while chatting with an assistant (CollabLLM)",
    pages=("study.server.chat",),
    apis=("study.server.chat_api",),
    stage_endpoints={"intent": "chat.intent", "prewriting": "chat.prewriting", "chat": "chat.chat_page"},
)
