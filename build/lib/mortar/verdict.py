"""The equivalent context check's verdict on one round of a test case (model layer: the check itself is
``mortar.context``)."""

from __future__ import annotations

from dataclasses import dataclass


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
