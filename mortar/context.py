"""The equivalent context check (MORTAR §III-E): for every round of a perturbed test case, is the
context before it as informative, for its question, as the context of the source round in the seed?

Three checks, OR-ed:
- semantic: the question resolves itself — no anaphor, not elliptical, at least 3 words;
- ontology: Ḡ_j (what the question takes from its original context) is contained in the context
  graph accumulated before this position; an elliptical question must also directly follow the
  round it continues (set containment alone ignores order: the paper's known weakness);
- story: every anaphor has exactly one possible referent in the story, its original antecedent.
Accumulation: a round that passes adds everything it gave (question + answer information);
a round that fails adds only what its question states explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass

from mortar.dataset import TestCase
from mortar.kg.model import DialogueGraph, Graph
from mortar.vocab import ORIG

MIN_SELF_CONTAINED_WORDS = 3  # the paper: shorter questions never resolve themselves


@dataclass(frozen=True)
class ECVerdict:
    equivalent: bool
    semantic: bool
    ontology: bool
    story: bool
    needed: frozenset[str]  # Ḡ_j
    missing: frozenset[str]  # needed entities the perturbed context lacks
    follows_ok: bool | None  # elliptical questions: does it directly follow the round it continues?

    def as_export(self) -> dict:
        return {"equivalent": self.equivalent, "semantic": self.semantic, "ontology": self.ontology,
                "story": self.story}


def semantic_check(question: str, rg) -> bool:
    return len(question.split()) >= MIN_SELF_CONTAINED_WORDS and not rg.anaphors and not rg.elliptical


def check_case(dg: DialogueGraph, case: TestCase, questions: dict[int, str], follow_rule: bool = True) -> list[ECVerdict]:
    """The EC verdict of every position of ``case`` (ORIG rounds are equivalent by definition).

    ``follow_rule=False`` gives the paper's order-blind containment, for comparison.
    """
    context = Graph()
    verdicts = []
    previous: int | None = None
    for source in case.source_rounds:
        rg = dg.round(source)
        missing = rg.needed - context.names
        follows_ok = None if rg.continues is None else previous == rg.continues
        semantic = semantic_check(questions[source], rg)
        ontology = not missing and (follows_ok is not False or not follow_rule)
        story = rg.story_resolved and not rg.elliptical
        equivalent = case.perturbation == ORIG or semantic or ontology or story
        verdicts.append(ECVerdict(equivalent, semantic, ontology, story, rg.needed, frozenset(missing), follows_ok))
        context = context.union(contribution(rg, equivalent))
        previous = source
    return verdicts


def contribution(rg, equivalent: bool) -> Graph:
    """What an asked round adds to the context: everything it gave (question and answer) when its context
    was equivalent, else only what its question states explicitly."""
    return rg.given if equivalent else rg.question


def context_before(dg: DialogueGraph, earlier) -> set[str]:
    """Entity names the context holds after these asked rounds, ``earlier`` = [(source_round, equivalent), …]."""
    names: set[str] = set()
    for source, equivalent in earlier:
        names |= contribution(dg.round(source), equivalent).names
    return names
