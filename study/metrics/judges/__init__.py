"""LLM judges (MindCopilot's HAR and KED, CollabLLM's ITR): `client.OpenAIJudge` (any
OpenAI-compatible endpoint, cached on disk) and
`deterministic` (rule-based answers in the same wire format, served by `study lm serve
--backend judge` so tests exercise the real client over HTTP)."""
