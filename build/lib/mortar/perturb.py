"""Dialogue-level perturbations (MORTAR §III-C) as pure functions of a question order.

A question order is a tuple of seed ``turn_id``s: the source round of each position. Each
perturbation takes the seed's order and an explicit ``random.Random`` and returns the new order.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import asdict, dataclass

from mortar.dataset import Seed, TestCase
from mortar.settings import setting
from mortar.vocab import (DIALOGUE_PERTURBATIONS, DRD, DRR, DRS, DSD, DSR, DUPLICATE_RATIO, ORIG, PERTURBATION_TEXT,
                          REDUCE_RATIO,
                          REDUCING)


@dataclass(frozen=True)
class PerturbationSettings:
    reduce_ratio: float = setting(REDUCE_RATIO, f"share of rounds DRR/DSR drop: max(1, floor(ratio·n)) (default "
                                  f"{REDUCE_RATIO})", label="reduce ratio", flag="--reduce-ratio", between=(0.0, 1.0),
                                  open_interval=True)
    duplicate_ratio: float = setting(DUPLICATE_RATIO, f"share of rounds DRD/DSD repeat: max(1, floor(ratio·n)) "
                                     f"(default {DUPLICATE_RATIO})", label="duplicate ratio", flag="--duplicate-ratio",
                                     between=(0.0, 1.0), open_interval=True)
    replicates: int = setting(1, "test cases per seed and perturbation (default 1)", label="replicates",
                              flag="--replicates", minimum=1)
    perturbations: tuple[str, ...] = setting(
        DIALOGUE_PERTURBATIONS, "; ".join(f"{p}: {PERTURBATION_TEXT[p]}" for p in DIALOGUE_PERTURBATIONS)
        + f" (default: all of {' '.join(DIALOGUE_PERTURBATIONS)})", label="dialogue-level perturbation", flag="--perturbations",
        choices=DIALOGUE_PERTURBATIONS, nonempty=True)
    # Where the tool departs from the paper on purpose; ``--profile paper`` turns both off.
    follow_rule: bool = setting(True, "context check: an elliptical question (\"and then?\") must also directly "
                                "follow the round it continues; --no-follow-rule: the paper's order-blind "
                                "containment", label="follow rule", flag="--no-follow-rule", inverted_flag=True)
    story_support: bool = setting(True, "MR2/MR4: no bug when the answers are right and the story alone gives them to "
                                  "the question's own words; --no-story-support: the paper's relations as written",
                                  label="story-support exemption", flag="--no-story-support", inverted_flag=True)

    def key(self) -> dict:
        """What enters a run id: every field, the two switches only when off (so the run ids of runs made before
        they existed stay valid)."""
        return {k: v for k, v in asdict(self).items() if k not in SWITCHES or v is not True}


SWITCHES = ("follow_rule", "story_support")  # settings that judge the test cases rather than make them


def n_reduced(n: int, ratio: float) -> int:
    """Rounds dropped by DRR: max(1, floor(ratio * n)), always leaving at least one round."""
    return min(max(1, math.floor(ratio * n)), n - 1)


def n_duplicated(n: int, ratio: float) -> int:
    """Rounds repeated by DRD: max(1, floor(ratio * n))."""
    return min(max(1, math.floor(ratio * n)), n)


def drs(order: tuple[int, ...], rng: random.Random) -> tuple[int, ...]:
    """Dialogue round shuffle: a random permutation of all rounds."""
    shuffled = list(order)
    rng.shuffle(shuffled)
    return tuple(shuffled)


def drr(order: tuple[int, ...], rng: random.Random, ratio: float = 0.3) -> tuple[int, ...]:
    """Dialogue round reduction: drop k random rounds, the rest keep their order."""
    dropped = set(rng.sample(range(len(order)), n_reduced(len(order), ratio)))
    return tuple(t for i, t in enumerate(order) if i not in dropped)


def drd(order: tuple[int, ...], rng: random.Random, ratio: float = 0.2) -> tuple[int, ...]:
    """Dialogue round duplication: insert a second copy of k random rounds at random gaps.

    Gaps include the head and the tail; the original rounds keep their relative order.
    """
    result = list(order)
    for i in sorted(rng.sample(range(len(order)), n_duplicated(len(order), ratio))):
        result.insert(rng.randint(0, len(result)), order[i])
    return tuple(result)


def dsr(order: tuple[int, ...], rng: random.Random, ratio: float = 0.3) -> tuple[int, ...]:
    """Shuffle of a reduction: DRS(DRR(Q))."""
    return drs(drr(order, rng, ratio), rng)


def dsd(order: tuple[int, ...], rng: random.Random, ratio: float = 0.2) -> tuple[int, ...]:
    """Shuffle of a duplication: DRS(DRD(Q))."""
    return drs(drd(order, rng, ratio), rng)


def perturb(name: str, order: tuple[int, ...], rng: random.Random, settings: PerturbationSettings) -> tuple[int, ...]:
    if name == DRS:
        return drs(order, rng)
    if name in (DRR, DSR):
        return (drr if name == DRR else dsr)(order, rng, settings.reduce_ratio)
    if name in (DRD, DSD):
        return (drd if name == DRD else dsd)(order, rng, settings.duplicate_ratio)
    raise ValueError(f"unknown perturbation {name!r}; choose from {', '.join(DIALOGUE_PERTURBATIONS)}")


def case_rng(run_seed: int, seed_id: str, perturbation: str, replicate: int) -> random.Random:
    """One generator per (run seed, dialogue, perturbation, replicate), independent of PYTHONHASHSEED."""
    key = f"{run_seed}\x1f{seed_id}\x1f{perturbation}\x1f{replicate}".encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def original_case(seed: Seed) -> TestCase:
    """The seed as it is (ORIG): the test case of reference-based testing."""
    return TestCase(seed.id, ORIG, 1, tuple(r.turn_id for r in seed.rounds))


def perturbed_cases(seed: Seed, run_seed: int, settings: PerturbationSettings) -> list[TestCase]:
    """``replicates`` cases of each perturbation, in a fixed order."""
    order = tuple(r.turn_id for r in seed.rounds)
    cases = []
    for name in settings.perturbations:
        if name in REDUCING and len(order) < 2:
            continue  # nothing can be dropped from a one-round dialogue
        for rep in range(1, settings.replicates + 1):
            new_order = perturb(name, order, case_rng(run_seed, seed.id, name, rep), settings)
            cases.append(TestCase(seed.id, name, rep, new_order))
    return cases


def test_cases_for(seed: Seed, run_seed: int, settings: PerturbationSettings) -> list[TestCase]:
    """ORIG plus ``replicates`` cases of each perturbation, in a fixed order."""
    return [original_case(seed)] + perturbed_cases(seed, run_seed, settings)


test_cases_for.__test__ = False  # not a pytest test
