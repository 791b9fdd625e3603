import math
import random
import subprocess
import sys
from collections import Counter

from hypothesis import given, strategies as st

from mortar.dataset import Round, Seed
from mortar.vocab import DIALOGUE_PERTURBATIONS as PERTURBATIONS
from mortar.perturb import (PerturbationSettings, case_rng, drd, drr, drs, dsd, dsr, n_duplicated,
                            n_reduced, test_cases_for)

orders = st.integers(min_value=2, max_value=30).map(lambda n: tuple(range(1, n + 1)))
rngs = st.integers(min_value=0, max_value=2**32).map(random.Random)


def is_subsequence(small, big):
    it = iter(big)
    return all(x in it for x in small)


@given(orders, rngs)
def test_drs_is_a_permutation(order, rng):
    assert sorted(drs(order, rng)) == list(order)


@given(orders, rngs)
def test_drr_drops_k_rounds_and_keeps_order(order, rng):
    out = drr(order, rng, 0.3)
    n = len(order)
    assert len(out) == n - min(max(1, math.floor(0.3 * n)), n - 1)
    assert is_subsequence(out, order) and len(set(out)) == len(out)


@given(orders, rngs)
def test_drd_adds_k_second_copies_and_originals_keep_order(order, rng):
    out = drd(order, rng, 0.2)
    k = max(1, math.floor(0.2 * len(order)))
    counts = Counter(out)
    assert len(out) == len(order) + k
    assert set(counts.values()) <= {1, 2} and sum(c == 2 for c in counts.values()) == k
    # some choice of one copy of each duplicated round leaves the original order intact
    assert is_subsequence(order, out)


@given(orders, rngs)
def test_dsr_is_a_shuffle_of_a_reduction(order, rng):
    out = dsr(order, rng, 0.3)
    assert len(out) == len(order) - n_reduced(len(order), 0.3)
    assert len(set(out)) == len(out) and set(out) <= set(order)


@given(orders, rngs)
def test_dsd_is_a_shuffle_of_a_duplication(order, rng):
    out = dsd(order, rng, 0.2)
    counts = Counter(out)
    assert set(counts) == set(order)
    assert sum(c == 2 for c in counts.values()) == n_duplicated(len(order), 0.2)


@given(orders, st.integers(0, 1000))
def test_same_seed_same_cases(order, run_seed):
    for name, fn in [("DRS", drs), ("DRR", drr), ("DRD", drd), ("DSR", dsr), ("DSD", dsd)]:
        assert fn(order, case_rng(run_seed, "s", name, 1)) == fn(order, case_rng(run_seed, "s", name, 1))


def test_one_round_dialogue_is_never_reduced_to_nothing():
    seed = Seed("one", "", (Round(1, "Who is the main character?", "Ann"),))
    cases = test_cases_for(seed, 0, PerturbationSettings())
    assert [c.perturbation for c in cases] == ["ORIG", "DRS", "DRD", "DSD"]
    assert all(c.source_rounds for c in cases)


def test_orig_plus_replicates_of_each_perturbation():
    seed = Seed("s", "", tuple(Round(k, f"q{k}", "a") for k in range(1, 11)))
    cases = test_cases_for(seed, 3, PerturbationSettings(replicates=2))
    assert [(c.perturbation, c.replicate) for c in cases] == [("ORIG", 1)] + [
        (p, r) for p in PERTURBATIONS for r in (1, 2)]
    assert cases[0].source_rounds == tuple(range(1, 11))
    assert len({c.source_rounds for c in cases if c.perturbation == "DRS"}) == 2


def test_generator_is_independent_of_python_hash_seed():
    code = ("from mortar.perturb import case_rng, dsd;"
            "print(dsd(tuple(range(1, 15)), case_rng(7, 'seed-a', 'DSD', 1)))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": h, "PATH": ""}).stdout for h in ("1", "2", "random")}
    assert len(outs) == 1
