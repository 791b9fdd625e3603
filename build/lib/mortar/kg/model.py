"""The knowledge-graph dialogue information model (MORTAR §III-E1 b).

Entities are identified by their canonical name (lower-case lemma form, no determiners), so
graphs from different rounds can be united and compared by set operations.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mortar.dataset import Seed


@dataclass(frozen=True)
class Entity:
    name: str  # canonical name: the identity of the entity
    type: str = ""
    description: str = ""


@dataclass(frozen=True)
class Relation:
    source: str  # entity names
    target: str
    name: str


@dataclass(frozen=True)
class Graph:
    entities: tuple[Entity, ...] = ()
    relations: tuple[Relation, ...] = ()

    @property
    def names(self) -> frozenset[str]:
        return frozenset(e.name for e in self.entities)

    def union(self, other: "Graph") -> "Graph":
        seen = {e.name: e for e in self.entities}
        for e in other.entities:
            seen.setdefault(e.name, e)
        rels = dict.fromkeys(self.relations + other.relations)
        return Graph(tuple(seen.values()), tuple(rels))


@dataclass(frozen=True)
class RoundGraph:
    """What one seed round says and needs.

    ``needed`` is Ḡ_j: the entities that the decontextualised question names but the question
    itself does not — what the question takes from its original context.
    """

    turn_id: int
    question: Graph
    answer: Graph
    decontextualised_question: str
    decontextualised: Graph
    needed: frozenset[str] = frozenset()
    elliptical: bool = False  # a bare continuation ("Why?", "And then?") of the round before it
    continues: int | None = None  # the turn_id an elliptical question continues
    anaphors: tuple[str, ...] = ()  # words of the question that point outside it
    story_resolved: bool = False  # every anaphor has exactly one possible referent in the story

    @property
    def given(self) -> Graph:
        """Everything the round contributes to the context when it is understood (question + answer)."""
        return self.question.union(self.answer).union(self.decontextualised)


@dataclass(frozen=True)
class DialogueGraph:
    seed_id: str
    backend: str
    model: str
    graph: Graph  # the whole-dialogue graph G(V, E)
    rounds: tuple[RoundGraph, ...] = field(default=())

    def round(self, turn_id: int) -> RoundGraph:
        for r in self.rounds:
            if r.turn_id == turn_id:
                return r
        raise KeyError(turn_id)

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=sorted, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "DialogueGraph":
        d = json.loads(text)

        def graph(g):
            return Graph(tuple(Entity(**e) for e in g["entities"]), tuple(Relation(**r) for r in g["relations"]))

        rounds = tuple(RoundGraph(
            turn_id=r["turn_id"], question=graph(r["question"]), answer=graph(r["answer"]),
            decontextualised_question=r["decontextualised_question"], decontextualised=graph(r["decontextualised"]),
            needed=frozenset(r["needed"]), elliptical=r["elliptical"], continues=r["continues"],
            anaphors=tuple(r["anaphors"]), story_resolved=r["story_resolved"]) for r in d["rounds"])
        return cls(d["seed_id"], d["backend"], d["model"], graph(d["graph"]), rounds)


class ExtractionError(RuntimeError):
    """Extraction of a seed failed for good (after retries); the seed is recorded as failed."""


class Extractor(Protocol):
    """The interface both knowledge-graph backends (spaCy, LLM) implement."""

    backend: str  # 'spacy' or 'llm'

    @property
    def model(self) -> str:
        """The pipeline or LLM that extracts: the cache key of the graphs, stored with the run."""

    def extract(self, seed: Seed) -> DialogueGraph:
        """The seed's graph; raises ExtractionError when this seed cannot be extracted."""

    def extract_many(self, seeds: list[Seed], progress=None) -> list[DialogueGraph | ExtractionError]:
        """One result per seed, in order: its graph, or the ExtractionError that says why it failed (the run
        records the seed as failed). ``progress(done, total, info)`` after each seed."""

    def close(self) -> None:
        """Let go of what it holds (an HTTP client)."""
