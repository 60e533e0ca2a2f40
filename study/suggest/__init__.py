"""The suggestion engine: query a model, keep what a writer should see (CoAuthor App. A.3)."""
