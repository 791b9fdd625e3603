"""Prioritising a stored run (`mortar prioritise`): its test cases ordered by white-box or uncertainty guidance
(``mortar.guide.prioritise``) without executing them, the order stored and measured against the run's detections."""

from __future__ import annotations

from mortar import store
from mortar.config import RunConfig, dataset_of, make_run_sut
from mortar.dataset import DatasetError, limited
from mortar.errors import InputError
from mortar.guide.prioritise import GINI_ORDER, RANDOM_ORDER, carries_distributions, case_scores, evaluation, initial_order, order_by_scores
from mortar.guide.sensitivity import require_local
from mortar.methods import method_kinds
from mortar.sut import SutError
from mortar.vocab import ORIG


def prioritise_run(run_id: str, by: str, db=None, target: str = "gold", progress=None) -> dict:
    """`mortar prioritise`: order a stored run's test cases by ``by`` without executing them, store the order,
    and measure it (and the other stored orders) against the run's detections when it has finished.

    Returns order (test case ids), seconds (per seed, for the scores), answer_seconds (the SUT's mean answer
    time), evaluation (APFD and curves; empty for a run without results)."""
    with store.connect(db, read_only=True) as con:
        run_id = store.resolve_run_id(con, run_id)
        stored = store.stored_config(con, run_id)
        cases, _ = store.read_cases_and_verdicts(con, run_id)
        checks = store.read_checks(con, run_id)
        orig = {c.seed_id: c.test_case_id for c in cases if c.perturbation == ORIG}
        answers = {seed: list(store.case_rounds(con, run_id, tcid)["sut_answer"]) for seed, tcid in orig.items()} \
            if by == GINI_ORDER else {}
    config = RunConfig.from_json(stored.run_config) if stored.run_config else None
    if config is None or config.dataset is None:
        raise InputError(f"run {run_id} was made before runs stored their configuration; run it again to prioritise")
    sut = None
    carried = by == GINI_ORDER and carries_distributions(answers)
    if by != RANDOM_ORDER and not carried:  # gradients, attention, token probabilities: the SUT must be a local model
        try:
            sut = make_run_sut(config)
        except SutError as e:
            raise InputError(f"run {run_id}: {e}") from None
        require_local(sut, f"--by {by}")
    try:
        dataset = limited(dataset_of(config), config.limit)
    except DatasetError as e:
        raise InputError(f"run {run_id}: its dataset cannot be read: {e}") from None
    seeds = [s for s in dataset.seeds if s.id in orig]
    answers = {seed: [a if isinstance(a, str) else None for a in rounds] for seed, rounds in answers.items()}
    scores, seconds = case_scores(by, cases, seeds, sut, dataset.sha256, store.StoreCache(db), config.run_seed, answers, target,
                                  progress)
    order = [c.test_case_id for c in order_by_scores(initial_order(cases, method_kinds()), scores)]
    with store.connect(db) as con:
        store.write_priorities(con, run_id, by, [(t, scores.get(t)) for t in order])
        orders = store.read_priorities(con, run_id)
        answer_seconds = store.mean_answer_seconds(con, stored.sut_fingerprint)
    return {"run_id": run_id, "order": order, "seconds": seconds, "answer_seconds": answer_seconds,
            "rounds_per_seed": sum(len(s.rounds) for s in seeds) / max(1, len(seeds)),
            "evaluation": evaluation(orders, checks, cases, method_kinds()) if checks else {}}
