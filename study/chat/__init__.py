"""The chat document-creation study (CollabLLM §6, App. E): configuration, assignment of
document type and assistant, the assistant's replies, and the chat session export."""
