"""EngramDB: long-term memory for LLM agents."""

__version__ = "0.1.0"

__all__ = ["__version__"]
