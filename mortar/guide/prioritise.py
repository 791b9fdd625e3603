"""Test prioritisation: an order of a run's test cases in which bugs are found early, and how to measure it.

Scores come from the seed conversations only (no test case is executed):

- gri / wali: per seed round j, the sensitivity of the answer to the earlier rounds (their share of the
  GRI or WALI mass, ``mortar.guide.sensitivity``). A dialogue-level test case (MORTAR) scores by the mass
  of the rounds its perturbation takes away from before a question (dropped, or moved after it) and, at
  half weight, of the rounds it moves while keeping them before; its score is that of its most exposed
  question. A single-turn case (METAL, DialTest) scores by the answer's sensitivity to the question itself.
- gini: the Gini impurity of the SUT's answer to the seed question (its ORIG answer), the most
  uncertain first; an intent/slot system's answer carries its intent distribution, so no model is asked.
- random: a shuffle; initial: the order the run made the test cases in; ideal: greedily the case that
  reveals most bugs not revealed yet (needs the run's detections: an upper bound, not a strategy).

The ORIG cases are never ordered: every run asks them (RBT is the reference of the bug levels).

APFD (average percentage of faults detected) = 1 − Σ TF_i / (n·m) + 1 / (2n) for n test cases and m
faults, TF_i the position of the first test case revealing fault i. Here a fault is a detection; a
detection that compares several test cases (MR3, MR4) is revealed once all of them ran.
"""

from __future__ import annotations

import random
import statistics
import time

from mortar.caches import ScoreCache
from mortar.dataset import Seed, TestCase
from mortar.guide import sensitivity
from mortar.guide.gini import answer_gini, carried_gini
from mortar.sut.base import Conversation, Turn
from mortar.vocab import ORIG

from mortar.vocab import GINI as GINI_ORDER
from mortar.vocab import GRI, IDEAL, INITIAL, ORDERS, WALI  # noqa: F401  (ORDERS, IDEAL: this module's words)
from mortar.vocab import RANDOM as RANDOM_ORDER
RANDOM_ORDERS = 20  # random orders the measurement averages over
MOVED_WEIGHT = 0.5  # a round still before the question, but elsewhere, counts half


def exposure(case: TestCase, seed: Seed, shares: dict[int, dict[int, float]], question_share: dict[int, float]
             ) -> float:
    """How much of what the answers lean on this test case disturbs. ``shares[j][k]``: the share of round j's
    sensitivity on earlier round k; ``question_share[j]``: on round j's own question."""
    if case.target_round is not None:
        return question_share.get(case.target_round, 0.0)
    order = [r.turn_id for r in seed.rounds]
    worst = 0.0
    for position, source in enumerate(case.source_rounds, start=1):
        before = case.source_rounds[:position - 1]
        leaned = shares.get(source, {})
        lost = sum(share for k, share in leaned.items() if k not in before)
        moved = sum(share for k, share in leaned.items() if k in before
                    and _distance(before, k) != order.index(source) - order.index(k))
        worst = max(worst, lost + MOVED_WEIGHT * moved)
    return worst


def _distance(before: tuple[int, ...], k: int) -> int:
    """How many rounds back round k was last asked (the question itself is at len(before))."""
    return len(before) - max(i for i, x in enumerate(before) if x == k)


def order_by_scores(cases: list[TestCase], scores: dict[str, float]) -> list[TestCase]:
    """Highest score first; ties keep the initial order."""
    rank = {c.test_case_id: i for i, c in enumerate(cases)}
    return sorted(cases, key=lambda c: (-scores.get(c.test_case_id, 0.0), rank[c.test_case_id]))


def ordered(cases: list[TestCase]) -> list[TestCase]:
    """The test cases a prioritisation orders: all but ORIG."""
    return [c for c in cases if c.perturbation != ORIG]


def random_order(cases: list[TestCase], seed: int) -> list[TestCase]:
    shuffled = list(cases)
    random.Random(seed).shuffle(shuffled)
    return shuffled


def ideal_order(cases: list[TestCase], faults: list[frozenset[str]]) -> list[TestCase]:
    """Greedy: next the test case that completes the most faults not yet revealed."""
    remaining = list(cases)
    ran: set[str] = set()
    open_faults = [f for f in faults if f]
    result = []
    while remaining:
        def gain(case):
            done = ran | {case.test_case_id}
            return sum(f <= done for f in open_faults)
        best = max(remaining, key=lambda c: (gain(c), -remaining.index(c)))
        remaining.remove(best)
        result.append(best)
        ran.add(best.test_case_id)
        open_faults = [f for f in open_faults if not f <= ran]
    return result


def revealed_at(order: list[str], faults: list[frozenset[str]]) -> list[int]:
    """Per fault, the 1-based position after which all its test cases ran (faults outside the order left out)."""
    position = {tcid: i for i, tcid in enumerate(order, start=1)}
    return [max(position[t] for t in f) for f in faults if f and all(t in position for t in f)]


def apfd(order: list[str], faults: list[frozenset[str]]) -> float:
    n, found = len(order), revealed_at(order, faults)
    if not n or not found:
        return float("nan")
    return 1 - sum(found) / (n * len(found)) + 1 / (2 * n)


def curve(order: list[str], faults: list[frozenset[str]]) -> list[tuple[float, float]]:
    """(share of the suite executed, share of the faults found) after each test case, from (0, 0)."""
    found = sorted(revealed_at(order, faults))
    points, k = [(0.0, 0.0)], 0
    for i in range(1, len(order) + 1):
        while k < len(found) and found[k] <= i:
            k += 1
        points.append((i / len(order), k / len(found) if found else 0.0))
    return points


def at_equal_calls(orders: dict[str, list[str]], faults: list[frozenset[str]], calls: dict[str, int] | None = None
                   ) -> tuple[list[dict], dict[str, list[tuple[int, int]]]]:
    """Guided orders against each other at the SUT calls they spent (the white-box thesis' success rate and its
    figure). ``orders``: name → the test cases (or evaluated mutants) it ran, in order; ``calls``: test case → SUT
    calls it cost (one each when not given). Per order a row — test cases, SUT calls, bugs (faults all of whose
    test cases it ran), bugs per test case and per SUT call, APFD over its own test cases — and the curve of bugs
    found against test cases executed, from (0, 0)."""
    rows, curves = [], {}
    for name, order in orders.items():
        found = sorted(revealed_at(order, faults))
        spent = sum((calls or {}).get(t, 1) for t in order)
        rows.append({"order": name, "test_cases": len(order), "sut_calls": spent, "bugs": len(found),
                     "bugs_per_test_case": len(found) / len(order) if order else float("nan"),
                     "bugs_per_sut_call": len(found) / spent if spent else float("nan"),
                     "APFD": apfd(order, faults)})
        curves[name] = [(0, 0)] + [(i, sum(f <= i for f in found)) for i in range(1, len(order) + 1)]
    return rows, curves


def faults_of(checks, cases: list[TestCase]) -> list[frozenset[str]]:
    """The ordered test cases each detection needs (ORIG left out: it always runs)."""
    kept = {c.test_case_id for c in ordered(cases)}
    return [frozenset(t for t in c.test_case_ids if t in kept) for c in checks
            if c.violated and any(t in kept for t in c.test_case_ids)]


def measure(orders: dict[str, list[str]], faults: list[frozenset[str]], cases: list[str], random_orders: int = RANDOM_ORDERS
            ) -> dict[str, dict]:
    """APFD and curve of each named order, and of ``random_orders`` shuffles (mean, sd, the mean curve)."""
    result = {name: {"apfd": apfd(order, faults), "curve": curve(order, faults)} for name, order in orders.items()}
    shuffles = [random_order(cases, k) for k in range(random_orders)]
    values = [apfd(s, faults) for s in shuffles]
    curves = [curve(s, faults) for s in shuffles]
    mean_curve = [(x, statistics.mean(c[i][1] for c in curves)) for i, (x, _) in enumerate(curves[0])] if curves else []
    result[RANDOM_ORDER] = {"apfd": statistics.mean(values) if values else float("nan"),
                            "sd": statistics.stdev(values) if len(values) > 1 else 0.0, "curve": mean_curve}
    return result


def case_scores(by: str, cases: list[TestCase], seeds: list[Seed], sut=None, dataset_id: str = "",
                cache: ScoreCache | None = None,
                run_seed: int = 0, orig_answers: dict[str, list[str | None]] | None = None, target: str = "gold",
                progress=None) -> tuple[dict[str, float], dict[str, float]]:
    """(test_case_id → score, seed_id → seconds the scores took) for the ordered test cases.

    ``orig_answers`` (gini): per seed, the SUT's answers to its rounds in the seed's order."""
    mine = ordered(cases)
    if by == RANDOM_ORDER:
        rng = random.Random(run_seed)
        return {c.test_case_id: rng.random() for c in mine}, {}
    if by in (GRI, WALI):
        found, seconds = sensitivity.dataset_sensitivities(sut, dataset_id, seeds, by, target, cache, progress)
        exposed = {}
        for seed in seeds:
            shares, own = sensitivity.round_shares(seed, {r.turn_id: found[(seed.id, r.turn_id)] for r in seed.rounds})
            exposed.update({c.test_case_id: exposure(c, seed, shares, own) for c in mine if c.seed_id == seed.id})
        return exposed, seconds
    if by == GINI_ORDER:
        gini, seconds = {}, {}
        for seed in seeds:
            start, history, session = time.perf_counter(), [], None
            for r, answer in zip(seed.rounds, (orig_answers or {}).get(seed.id, [])):
                if answer is None:
                    break  # the SUT gave no answer here: the later rounds were never asked
                gini[(seed.id, r.turn_id)] = carried_gini(answer)
                if gini[(seed.id, r.turn_id)] is None:  # a generative answer: the model scores it
                    sensitivity.require_local(sut, "--by gini")
                    session = session or sut.session(lanes=1)  # each round extends the previous one's keys and values
                    conversation = Conversation(seed.story, tuple(history), r.question)
                    gini[(seed.id, r.turn_id)] = answer_gini(sut, conversation, answer, session)
                history.append(Turn(r.question, answer))
            seconds[seed.id] = time.perf_counter() - start
        scores = {}
        for c in mine:
            rounds = [c.target_round] if c.target_round is not None else c.source_rounds
            scores[c.test_case_id] = max((gini.get((c.seed_id, j), 0.0) for j in rounds), default=0.0)
        return scores, seconds
    raise ValueError(f"unknown order {by!r}; choose from {', '.join(ORDERS)}")


def orig_answer_texts(cases: list[TestCase], answers: dict) -> dict[str, list[str | None]]:
    """Per seed, the SUT's answers to its ORIG case's rounds in order (None where it gave none): what the gini
    order scores. ``answers``: (test_case_id, position) → the executor's output."""
    def text(key):
        return answers[key].text if key in answers else None
    return {c.seed_id: [text((c.test_case_id, p)) for p in range(1, len(c.source_rounds) + 1)]
            for c in cases if c.perturbation == ORIG}


def carries_distributions(orig_answers: dict[str, list[str | None]]) -> bool:
    """Whether every seed answer given carries its own distribution (an intent/slot system's), so the gini order
    needs no model."""
    given = [a for rounds in orig_answers.values() for a in rounds if a]
    return bool(given) and all(carried_gini(a) is not None for a in given)


def carried_gini_order(cases: list[TestCase], seeds: list[Seed], answers: dict, kinds: list[str]
                       ) -> list[tuple[str, float]]:
    """The gini order of a run whose answers carry their own distribution (an intent/slot system's), as
    (test_case_id, score), first to run first; [] when any seed answer carries none (scoring it would ask a
    model)."""
    texts = orig_answer_texts(cases, answers)
    if not carries_distributions(texts):
        return []
    scores, _ = case_scores(GINI_ORDER, cases, seeds, orig_answers=texts)
    return [(c.test_case_id, scores[c.test_case_id]) for c in order_by_scores(initial_order(cases, kinds), scores)]


def initial_order(cases: list[TestCase], kinds: list[str]) -> list[TestCase]:
    """The order a run makes its test cases in: seed by seed (by id), each method's in registry order, each
    method's kinds in their order (``kinds``: every registered method's, in registry order), then by replicate
    or round."""
    return sorted(ordered(cases), key=lambda c: (c.seed_id,
                                                 kinds.index(c.perturbation) if c.perturbation in kinds else len(kinds),
                                                 c.target_round or 0, c.guide or "", c.replicate))


def evaluation(orders: dict[str, list[str]], checks, cases: list[TestCase], kinds: list[str]) -> dict[str, dict]:
    """APFD and the bugs-found curve of each stored order, of the initial order, of random orders and of the
    ideal order, on a completed run's detections."""
    faults = faults_of(checks, cases)
    initial = [c.test_case_id for c in initial_order(cases, kinds)]
    ideal = [c.test_case_id for c in ideal_order(initial_order(cases, kinds), faults)]
    return measure({INITIAL: initial, **orders, IDEAL: ideal}, faults, initial)
