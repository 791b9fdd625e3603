"""The Inspector's permutation-aware diff: a perturbed dialogue aligned to its seed by source round, and the
earlier rounds a question needs."""

import random

import pandas as pd
import pytest

from mortar.alignment import align, needed_rounds
from mortar.kg.model import DialogueGraph, Entity, Graph, RoundGraph
from mortar.perturb import drd, drr, drs, dsd, n_duplicated, n_reduced
from mortar.ui.inspector import aligned_rounds

SEED = (1, 2, 3, 4, 5)


def by_round(aligned):
    return {a.source_round: a for a in aligned}


def test_a_shuffle_moves_the_round_asked_out_of_order_and_says_where_it_went():
    rounds = by_round(align(SEED, (4, 1, 2, 3, 5)))
    assert rounds[4].moved and rounds[4].positions == (1,) and rounds[4].label == "round 4 → 1"
    # the others keep the seed's relative order; they are shifted, not moved
    assert [r for r, a in rounds.items() if a.moved] == [4]
    assert rounds[1].label == "round 1 → 2" and rounds[1].in_order == 2
    assert rounds[5].label == "round 5 → 5"
    assert not any(a.dropped or a.duplicated for a in rounds.values())


def test_a_swap_moves_exactly_one_of_the_two_rounds():
    rounds = by_round(align(SEED, (1, 3, 2, 4, 5)))
    assert sum(a.moved for a in rounds.values()) == 1
    assert rounds[2].positions == (3,) and rounds[3].positions == (2,)


def test_a_reduction_drops_rounds_in_place_and_moves_none():
    aligned = align(SEED, (1, 3, 5))
    assert [a.source_round for a in aligned] == list(SEED)  # the seed's order, dropped rounds included
    rounds = by_round(aligned)
    assert [r for r, a in rounds.items() if a.dropped] == [2, 4]
    assert rounds[2].label == "round 2 dropped" and rounds[2].positions == () and not rounds[2].moved
    assert rounds[5].label == "round 5 → 3" and not any(a.moved for a in aligned)


def test_a_duplication_marks_the_round_asked_twice_and_its_copy():
    rounds = by_round(align(SEED, (1, 4, 2, 3, 4, 5)))
    four = rounds[4]
    assert four.duplicated and four.positions == (2, 5) and four.label == "round 4 → 2, 5"
    assert four.in_order == 5 and four.copies == (2,) and not four.moved
    assert not any(a.moved for a in rounds.values())
    # two adjacent copies: the first counts as the original
    assert by_round(align(SEED, (1, 2, 2, 3, 4, 5)))[2].copies == (3,)


def test_a_shuffled_duplication_is_both_moved_and_duplicated():
    rounds = by_round(align((1, 2, 3), (3, 2, 1, 2)))
    assert sum(a.duplicated for a in rounds.values()) == 1 and rounds[2].positions == (2, 4)
    assert sum(a.moved for a in rounds.values()) == 1  # the longest run in the seed's order is two rounds long


@pytest.mark.parametrize("replicate", range(20))
def test_the_perturbations_align_back_to_their_seed(replicate):
    seed = tuple(range(1, 13))
    rng = random.Random(replicate)
    reduced = align(seed, drr(seed, rng))
    assert sum(a.dropped for a in reduced) == n_reduced(len(seed), 0.3) and not any(a.moved for a in reduced)
    duplicated = align(seed, drd(seed, rng))
    assert sum(a.duplicated for a in duplicated) == n_duplicated(len(seed), 0.2)
    assert not any(a.moved for a in duplicated)  # the originals keep their order
    for order in (drs(seed, rng), dsd(seed, rng)):
        aligned = align(seed, order)
        assert sorted(p for a in aligned for p in a.positions) == list(range(1, len(order) + 1))
        assert all(order[p - 1] == a.source_round for a in aligned for p in a.positions)
        kept = sorted((a.in_order, a.seed_position) for a in aligned if a.in_order)
        assert [s for _, s in kept] == sorted(s for _, s in kept)  # what is not moved is in the seed's order


def test_a_round_the_seed_does_not_have_is_refused():
    with pytest.raises(ValueError, match="does not have"):
        align(SEED, (1, 9))


def graph_of(rounds) -> DialogueGraph:
    def g(*names):
        return Graph(tuple(Entity(n) for n in names))

    return DialogueGraph("s", "spacy", "test", Graph(), tuple(
        RoundGraph(turn_id=t, question=g(), answer=g(*gives), decontextualised_question="", decontextualised=g(),
                   needed=frozenset(needs), continues=continues) for t, gives, needs, continues in rounds))


def test_the_rounds_a_question_needs_are_the_earlier_ones_that_give_its_entities():
    graph = graph_of([(1, ["ann", "kite"], [], None), (2, ["hill"], [], None), (3, ["wind"], [], None),
                      (4, [], ["kite", "hill"], 3), (5, ["kite"], [], None)])
    assert needed_rounds(graph, 4, (1, 2, 3, 4, 5)) == {1: {"kite"}, 2: {"hill"}, 3: frozenset()}
    assert needed_rounds(graph, 1, (1, 2, 3, 4, 5)) == {}  # a later round that gives kite does not count


def case_rounds(source_rounds, answers):
    return pd.DataFrame({"position": range(1, len(source_rounds) + 1), "source_round": source_rounds,
                         "question": [f"Question {r}?" for r in source_rounds], "sut_answer": answers})


def test_the_aligned_view_strikes_dropped_rounds_marks_moves_and_diffs_changed_answers():
    original = case_rounds([1, 2, 3, 4, 5], ["Ann", "the red kite", "Sunday", "on the hill", "Tom"])
    perturbed = case_rounds([4, 1, 2, 5], ["on the big hill", "Ann", "the red kite", None])
    text = aligned_rounds(original, perturbed, {1: frozenset({"ann"})}, source_round=4, position=1)
    assert len(text) == 5  # one paragraph per seed round
    one, _, three, four, five = text
    assert one.startswith("**round 1 → 2**") and "needed: ann" in one and ":blue-background[" in one
    assert "(as in ORIG)" in one
    assert three.startswith("~~**round 3**~~") and "dropped" in three and "~~Question 3?~~" in three
    assert four.startswith("**round 4 → 1** :orange-badge[moved]") and "the detection" in four
    assert ":green-background[big]" in four  # the word the perturbed answer added
    assert "no answer" in five and ":red-background[Tom]" in five
