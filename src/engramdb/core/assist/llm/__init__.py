"""The optional chat model: an OpenAI-compatible client, its prompts (files, versioned) and the
shapes its answers must have."""
