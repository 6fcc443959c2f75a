"""The optional language model: an OpenAI-compatible endpoint and what is asked of it."""
