"""Metrics as pure functions over parsed records, one per file (crowd-kit's habit).

- MindCopilot's acceptance, Hierarchical Acceptance Rate (HAR), Knowledge-aware Editing
  Distance (KED), edit distances and correlation with editing duration are the proactive
  paradigm's own: study.paradigms.proactive.metrics.
- CollabLLM's Table 1 metrics (document BLEU, interactivity ITR) are the chat paradigm's:
  study.paradigms.chat.metrics.
- `judges`: the LLM judges HAR, KED and ITR need: any OpenAI-compatible endpoint through the
  openai SDK with judgements cached on disk, and a deterministic judge for tests and demos.
"""
