"""How a perturbed dialogue lines up with its seed, for the Inspector's diff: where each seed round went
(moved, dropped, asked twice) and which earlier seed rounds a question takes its context from.

Pure functions of question orders (tuples of seed ``turn_id``s, as :mod:`mortar.perturb` makes them)
and of the seed's knowledge graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from mortar.kg.model import DialogueGraph


@dataclass(frozen=True)
class AlignedRound:
    """One seed round and where the perturbed dialogue asks it."""

    source_round: int  # the seed's turn_id
    seed_position: int  # 1-based position in the seed
    positions: tuple[int, ...]  # 1-based positions in the perturbed dialogue: none when dropped, 2+ when duplicated
    in_order: int | None  # the position that keeps the seed's relative order; None when moved (or dropped)

    @property
    def dropped(self) -> bool:
        return not self.positions

    @property
    def duplicated(self) -> bool:
        return len(self.positions) > 1

    @property
    def moved(self) -> bool:
        """Asked out of the seed's relative order (not merely shifted by rounds dropped or inserted before it)."""
        return bool(self.positions) and self.in_order is None

    @property
    def copies(self) -> tuple[int, ...]:
        """Positions of the extra copies of a duplicated round that kept its order (all of them when moved)."""
        return tuple(p for p in self.positions if p != self.in_order) if self.duplicated else ()

    @property
    def label(self) -> str:
        """``round 3 → 1``, ``round 2 → 2, 5``, ``round 4 dropped``; the seed position on the left."""
        if self.dropped:
            return f"round {self.seed_position} dropped"
        return f"round {self.seed_position} → {', '.join(map(str, self.positions))}"


def _in_order_positions(ranks: list[int]) -> set[int]:
    """Indexes of a longest strictly increasing subsequence of ``ranks``: the most rounds the perturbed dialogue
    asks in the seed's relative order (the rest were moved). Ties go to the earliest occurrence, so of two
    adjacent copies the first counts as the original."""
    length = [1] * len(ranks)
    for i in range(len(ranks)):
        for k in range(i):
            if ranks[k] < ranks[i] and length[k] + 1 > length[i]:
                length[i] = length[k] + 1
    if not ranks:
        return set()
    need = max(length)
    i = length.index(need)
    chosen = {i}
    while need > 1:
        need -= 1
        i = next(k for k in range(i) if length[k] == need and ranks[k] < ranks[i])
        chosen.add(i)
    return chosen


def align(seed_order: Sequence[int], perturbed_order: Sequence[int]) -> list[AlignedRound]:
    """Every seed round, in the seed's order, with the positions the perturbed dialogue asks it at."""
    rank = {turn: i for i, turn in enumerate(seed_order, start=1)}
    unknown = [t for t in perturbed_order if t not in rank]
    if unknown:
        raise ValueError(f"the perturbed dialogue asks rounds the seed does not have: {unknown}")
    ranks = [rank[t] for t in perturbed_order]
    kept = _in_order_positions(ranks)
    rounds = []
    for turn, seed_position in rank.items():
        positions = tuple(p for p, t in enumerate(perturbed_order, start=1) if t == turn)
        in_order = next((p for p in positions if p - 1 in kept), None)
        rounds.append(AlignedRound(turn, seed_position, positions, in_order))
    return rounds


def needed_rounds(graph: DialogueGraph, turn_id: int, seed_order: Sequence[int]) -> dict[int, frozenset[str]]:
    """The seed rounds before ``turn_id`` that its question takes context from, with what each gives it: the
    rounds whose information holds an entity of Ḡ_j (what the question needs), as the equivalent context check
    accumulates them, and the round an elliptical question continues (it may give no entity)."""
    rg = graph.round(turn_id)
    earlier = seed_order[:list(seed_order).index(turn_id)] if turn_id in seed_order else ()
    found = {}
    for turn in earlier:
        gives = rg.needed & graph.round(turn).given.names
        if gives:
            found[turn] = frozenset(gives)
    if rg.continues is not None:
        found.setdefault(rg.continues, frozenset())
    return found
