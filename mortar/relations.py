"""Reference-based testing, the four metamorphic relations of MORTAR, and bug levels.

Every comparison the relations make is a *check*; a violated check is a *detection* (a bug).
- RBT: ORIG round j is a bug when sim(o_j, a_j) < ε.
- MR1 (context-preserving, EC true): expect sim(o'_i, a_j) ≥ ε.
- MR2 (context-altering, EC false): expect sim(o'_i, a_j) < ε.
- MR3 (inner-group consistency): the EC-true versions of question j agree pairwise, min sim ≥ ε.
- MR4 (inter-group divergence): every EC-true version differs from every EC-false one, max sim < ε.
Rounds whose gold answer is "unknown" are left out of the MR checks; without gold answers the
reference is the SUT's own RBT output o_j. An errored round is never compared, so never a bug.
Bug levels relative to RBT: L1 = the question is also wrong in RBT; L2 = right in RBT, in a seed
where RBT found some bug; L3 = in a seed where RBT found no bug.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations, product

from mortar.context import ECVerdict
from mortar.dataset import Seed, TestCase
from mortar.perturb import ORIG, PERTURBATIONS

RELATIONS = ("RBT", "MR1", "MR2", "MR3", "MR4")


@dataclass(frozen=True)
class Version:
    """One asking of seed question j in a test case."""

    test_case_id: str
    perturbation: str
    position: int
    output: str


@dataclass(frozen=True)
class Check:
    check_id: str
    relation: str
    seed_id: str
    source_round: int
    perturbations: tuple[str, ...]
    test_case_ids: tuple[str, ...]
    positions: tuple[int, ...]
    text_a: str  # what was compared: the SUT output (or the first output of a pair)
    text_b: str  # … and the reference (or the second output)
    similarity: float
    ec_equivalent: bool | None
    violated: bool
    bug_level: str | None = None


def judge(seeds: list[Seed], cases: list[TestCase], verdicts: dict[str, list[ECVerdict]],
          outputs: dict, oracle, threshold: float) -> list[Check]:
    """All checks of a run, in a deterministic order, with bug levels on the MR detections.

    ``outputs`` maps (test_case_id, position) to the executor's answer (``.text`` is None when errored).
    """
    oracle.prepare({o.text for o in outputs.values() if not o.text is None}
                   | {r.answer for s in seeds for r in s.rounds if r.answer})
    checks: list[Check] = []
    for seed in seeds:
        seed_cases = [c for c in cases if c.seed_id == seed.id]
        rbt = _rbt(seed, seed_cases, outputs, oracle, threshold)
        checks += rbt
        references = _references(seed, seed_cases, outputs)
        groups: dict[int, dict[bool, list[Version]]] = defaultdict(lambda: {True: [], False: []})
        mr_checks: list[Check] = []
        for case in seed_cases:
            if case.perturbation not in PERTURBATIONS:
                continue  # ORIG is RBT's; single-turn baseline cases have their own relation
            for pos, (source, verdict) in enumerate(zip(case.source_rounds, verdicts[case.test_case_id]), start=1):
                out = outputs.get((case.test_case_id, pos))
                if out is None or out.text is None or seed.round(source).is_unknown or source not in references:
                    continue
                groups[source][verdict.equivalent].append(Version(case.test_case_id, case.perturbation, pos, out.text))
                sim = oracle.similarity(out.text, references[source], question=seed.round(source).question)
                relation = "MR1" if verdict.equivalent else "MR2"
                violated = sim < threshold if verdict.equivalent else sim >= threshold
                mr_checks.append(Check(f"{relation}/{case.test_case_id}/{pos}", relation, seed.id, source,
                                       (case.perturbation,), (case.test_case_id,), (pos,), out.text,
                                       references[source], sim, verdict.equivalent, violated))
        for source in sorted(groups):
            mr_checks += _group_checks(seed.id, source, groups[source], oracle, threshold, seed.round(source).question)
        checks += with_levels(mr_checks, {c.source_round for c in rbt if c.violated}, any(c.violated for c in rbt))
    return checks


def _rbt(seed: Seed, cases: list[TestCase], outputs, oracle, threshold: float) -> list[Check]:
    checks = []
    for case in (c for c in cases if c.perturbation == ORIG):
        for pos, source in enumerate(case.source_rounds, start=1):
            out, gold = outputs.get((case.test_case_id, pos)), seed.round(source).answer
            if out is None or out.text is None or gold is None:
                continue
            sim = oracle.similarity(out.text, gold, question=seed.round(source).question)
            checks.append(Check(f"RBT/{case.test_case_id}/{pos}", "RBT", seed.id, source, (ORIG,),
                                (case.test_case_id,), (pos,), out.text, gold, sim, True, sim < threshold))
    return checks


def _references(seed: Seed, cases: list[TestCase], outputs) -> dict[int, str]:
    """Gold answers, or the RBT outputs o_j when the dataset has none (Eq. 18)."""
    refs = {r.turn_id: r.answer for r in seed.rounds if r.answer is not None}
    for case in (c for c in cases if c.perturbation == ORIG):
        for pos, source in enumerate(case.source_rounds, start=1):
            out = outputs.get((case.test_case_id, pos))
            if source not in refs and out is not None and not out.text is None:
                refs[source] = out.text
    return refs


def _group_checks(seed_id: str, source: int, group: dict[bool, list[Version]], oracle, threshold: float,
                  question: str) -> list[Check]:
    checks = []
    same = group[True]
    if len(same) >= 2:  # MR3: the least similar pair of EC-true versions
        sim, a, b = min(((oracle.agreement(a.output, b.output, question), a, b) for a, b in combinations(same, 2)),
                        key=lambda t: t[0])
        checks.append(_pair_check("MR3", seed_id, source, same, a, b, sim, sim < threshold, True))
    if same and group[False]:  # MR4: the most similar pair across the two groups
        sim, a, b = max(((oracle.agreement(a.output, b.output, question), a, b) for a, b in product(same, group[False])),
                        key=lambda t: t[0])
        checks.append(_pair_check("MR4", seed_id, source, same + group[False], a, b, sim, sim >= threshold, None))
    return checks


def _pair_check(relation, seed_id, source, versions, a: Version, b: Version, sim, violated, ec) -> Check:
    return Check(f"{relation}/{seed_id}/{source}", relation, seed_id, source,
                 tuple(sorted({v.perturbation for v in versions})), tuple(v.test_case_id for v in versions),
                 tuple(v.position for v in versions), a.output, b.output, sim, ec, violated)


def with_levels(checks: list[Check], rbt_bug_rounds: set[int], seed_has_rbt_bug: bool) -> list[Check]:
    def level(c: Check) -> str | None:
        if not c.violated:
            return None
        if c.source_round in rbt_bug_rounds:
            return "L1"
        return "L2" if seed_has_rbt_bug else "L3"

    return [Check(**{**c.__dict__, "bug_level": level(c)}) for c in checks]
