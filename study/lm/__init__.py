"""A local OpenAI-compatible model endpoint (`study lm serve`)."""
