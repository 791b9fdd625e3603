"""Judging: each test case of a run goes to the relations of the method that made it; RBT judges the seeds
as they are; every detection but RBT's gets its bug level.

Bug levels relative to RBT: L1 = the question is also wrong in RBT; L2 = right in RBT, in a seed where RBT
found some bug; L3 = in a seed where RBT found no bug.
"""

from __future__ import annotations

from dataclasses import replace

from mortar.dataset import Seed, TestCase
from mortar.methods import method_of_case
from mortar.nlp import STORIES_KEPT
from mortar.oracle import Oracle, embedding_model
from mortar.parallel import Workers, shares, spread
from mortar.methods.dialtest_nlu import is_nlu, reference_checks
from mortar.relations import RELATIONS, Check, Judging, references, unstable_rounds
from mortar.verdict import ECVerdict
from mortar.vocab import L1, L2, L3, ORIG, RBT


def judge(seeds: list[Seed], cases: list[TestCase], verdicts: dict[str, list[ECVerdict | None]],
          answers: dict, oracle, threshold: float, selections: dict | None = None,
          orig_samples: list[dict] | None = None, settings: dict | None = None) -> list[Check]:
    """All checks of a run: RBT on the ORIG cases, and each method's relations on the test cases it made,
    with bug levels on every detection but RBT's.

    ``answers`` maps (test_case_id, position) to the executor's answer (``.text`` is None when errored);
    ``orig_samples``: the repeated answers of the ORIG cases, same keys (the noise floor, :func:`unstable_rounds`);
    ``settings``: method name → its settings in this run (``RunConfig.settings``; a method not given: its defaults).
    """
    by_id = {s.id: s for s in seeds}
    oracle.prepare({a.text for a in answers.values() if a.text is not None}
                   | {r.answer for s in seeds for r in s.rounds if r.answer},
                   {c.question_at(by_id[c.seed_id], p) for c in cases if c.seed_id in by_id
                    for p in range(1, len(c.source_rounds) + 1)})
    checks: list[Check] = []
    by_seed: dict[str, list[TestCase]] = {}
    for c in cases:
        by_seed.setdefault(c.seed_id, []).append(c)
    orig_of = {s.id: [c for c in by_seed.get(s.id, []) if c.perturbation == ORIG] for s in seeds}
    refs_of = {s.id: references(s, orig_of[s.id], answers) for s in seeds}
    asks_ahead = hasattr(oracle, "compare_many")
    for i, seed in enumerate(seeds):
        if asks_ahead and i % STORIES_KEPT == 0:  # the stories read ahead are still parsed
            ask_ahead(oracle, seeds[i:i + STORIES_KEPT], by_seed, refs_of, answers)
        seed_cases = by_seed.get(seed.id, [])
        orig, refs = orig_of[seed.id], refs_of[seed.id]
        # an oracle that reads the story gets this seed's ('the younger brother' is the gold 'Tom' when it says so)
        seed_oracle = oracle.for_story(seed.story) if hasattr(oracle, "for_story") else oracle
        # an intent/slot seed has labels, not answers: its reference-based testing reads the predictions
        rbt_judge = reference_checks if is_nlu(seed) else RELATIONS[RBT].judge
        rbt = rbt_judge(Judging(seed, orig, verdicts, answers, seed_oracle, threshold, refs))
        judged: list[Check] = []
        by_method: dict = {}
        for case in seed_cases:
            method = method_of_case(case)
            if method is not None:
                by_method.setdefault(method, []).append(case)
        for method, mine in by_method.items():
            judging = Judging(seed, mine, verdicts, answers, seed_oracle, threshold, refs, orig, selections or {},
                              (settings or {}).get(method.name))
            for name in method.relations:
                judged += RELATIONS[name].judge(judging)
        mine = rbt + with_levels(judged, {c.source_round for c in rbt if c.violated}, any(c.violated for c in rbt))
        if orig_samples:
            unstable = unstable_rounds(seed, orig, answers, orig_samples, seed_oracle, threshold)
            mine = [replace(c, unstable=True) if c.violated and c.source_round in unstable else c for c in mine]
        checks += mine
    return checks


def ask_ahead(oracle, seeds: list[Seed], by_seed: dict[str, list[TestCase]], refs_of: dict[str, dict[int, str]],
              answers: dict) -> None:
    """Ask the oracle, in one batch for these seeds, what the relations will ask it one comparison at a time:
    every answer against its round's reference, and every two answers to one seed question against each other.
    The oracle keeps its judgements, so the relations find them made; the embeddings those judgements want are
    computed together instead of a few texts at a time (the cost of judging at scale)."""
    triples, pairs = [], []
    for seed in seeds:
        if is_nlu(seed):  # predictions are judged against labels, not by the oracle
            continue
        refs = refs_of[seed.id]
        said: dict[int, set[str]] = {}
        for case in by_seed.get(seed.id, []):
            for pos, source in enumerate(case.source_rounds, start=1):
                out = answers.get((case.test_case_id, pos))
                if out is not None and out.text is not None and source in refs:
                    said.setdefault(source, set()).add(out.text)
        for source, texts in said.items():
            question, ordered = seed.round(source).question, sorted(texts)
            triples += [(question, refs[source], text, seed.story) for text in ordered]
            pairs += [(question, a, b, seed.story) for i, a in enumerate(ordered) for b in ordered[i + 1:]]
    oracle.judge_many(triples)
    oracle.compare_many(pairs)


def with_levels(checks: list[Check], rbt_bug_rounds: set[int], seed_has_rbt_bug: bool) -> list[Check]:
    def level(c: Check) -> str | None:
        if not c.violated:
            return None
        if c.source_round in rbt_bug_rounds:
            return L1
        return L2 if seed_has_rbt_bug else L3

    return [replace(c, bug_level=level(c)) for c in checks]


def judge_in_parallel(workers: int | Workers, oracle_name: str, seeds: list[Seed], cases: list[TestCase],
                      verdicts: dict, answers: dict, threshold: float, selections: dict | None = None,
                      orig_samples: list[dict] | None = None, settings: dict | None = None) -> list[Check]:
    """:func:`judge` over ``workers`` processes (``mortar.parallel``; a number, or the run's kept workers), each
    judging a contiguous share of the seeds with its own ``oracle_name`` oracle; the checks come back in the seeds'
    order, as :func:`judge` gives them."""
    kept = workers if isinstance(workers, Workers) else None
    jobs = []
    for share in shares(seeds, len(kept) if kept else workers):
        ids = {s.id for s in share}
        mine = [c for c in cases if c.seed_id in ids]
        tcids = {c.test_case_id for c in mine}

        def own(rows: dict) -> dict:
            return {k: v for k, v in rows.items() if k[0] in tcids}
        jobs.append((oracle_name, share, mine, {k: v for k, v in verdicts.items() if k in tcids}, own(answers),
                     threshold, own(selections) if selections else selections,
                     [own(sample) for sample in orig_samples] if orig_samples else orig_samples, settings))
    return [c for checks in spread(_judge_share, jobs, kept) for c in checks]


_worker_oracles: dict[str, object] = {}  # a worker's oracles, loaded once


def load_oracle(oracle_name: str) -> None:
    """This worker's oracle of that name and the embedding model it reads with, loaded now (a run's workers do it
    while the system answers: ``Workers.start_ahead``)."""
    if oracle_name not in _worker_oracles:
        _worker_oracles[oracle_name] = Oracle(oracle_name)
        embedding_model()


def _judge_share(oracle_name, seeds, cases, verdicts, answers, threshold, selections, orig_samples,
                 settings) -> list[Check]:
    load_oracle(oracle_name)
    return judge(seeds, cases, verdicts, answers, _worker_oracles[oracle_name], threshold, selections, orig_samples,
                 settings)
