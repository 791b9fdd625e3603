"""MORTAR Studio: multi-turn metamorphic testing of LLM-based dialogue systems."""

__version__ = "0.1.0"
