"""Knowledge-graph extraction: one interface, two backends (spaCy offline default, LLM pipeline)."""

from mortar.kg.model import DialogueGraph, Entity, ExtractionError, Graph, Relation, RoundGraph

__all__ = ["DialogueGraph", "Entity", "ExtractionError", "Graph", "Relation", "RoundGraph"]
