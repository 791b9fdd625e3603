"""Relations (model layer): the check, what a relation judges, the registry, and the relations every method can
build on (RBT, matching the reference, agreeing with ORIG). ``mortar.judge`` hands each test case to its
method's relations and sets bug levels.

Every comparison a relation makes is a *check*; a violated check is a *detection* (a bug). A relation
is a small registered object, as CheckList's test types: a **direction** (an answer against the
reference), an **invariance** (versions of a question agree) or a **group** expectation. Each test
method names the relations that judge its test cases (``mortar.methods``); adding a relation is one
module and one :func:`register_relation` call.

RBT (reference-based testing) is the one relation every run has: ORIG round j is a bug when
sim(o_j, a_j) < ε. An errored round is never compared, so never a bug.

A relation that compares two system answers (agreeing with ORIG here; MR3/MR4 in ``mortar.methods.mortar``) asks
the oracle's ``compare``: a pair where neither answer answers the question is *no answer* — its check is marked
``no_answer``, never violated, and counted apart in the report.

The noise floor (``--orig-repeats r``): ORIG is answered r times. A seed question whose ORIG answers disagree
with each other is *unstable*: a detection there may be the SUT's own randomness, not the perturbation, so
it is marked and reported apart (it still counts in no headline metric).

Confirmed detections (``--confirm K``): every detection's conversations are asked K more times, afresh; a detection
that its relation does not find again on every one of them is *flaky*, reported apart as the unstable ones
(``mortar.confirm``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from mortar.verdict import ECVerdict
from mortar.dataset import Seed, TestCase
from mortar.vocab import ORIG, RBT

DIRECTION, INVARIANCE, GROUP = "direction", "invariance", "group"


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
    ec_equivalent: bool | None  # None where no context check applies
    violated: bool
    bug_level: str | None = None
    unstable: bool = False  # on a seed question whose repeated ORIG answers disagree (the noise floor)
    flaky: bool = False  # a detection that did not reproduce when its conversations were asked again (--confirm)
    no_answer: bool = False  # two system answers of which neither answers the question: no outcome, never violated


def reported_apart(check: Check) -> bool:
    """A detection that counts in no headline figure: on an unstable seed question, or flaky."""
    return check.violated and (check.unstable or check.flaky)


def headline_checks(checks: list[Check]) -> list[Check]:
    """The checks as the headline figures (NBugs, Rate+, bug levels, CI budgets) count them: a detection reported
    apart counts as a passed check."""
    return [replace(c, violated=False, bug_level=None) if reported_apart(c) else c for c in checks]


def round_check(name: str, seed_id: str, source_round: int, case: TestCase, position: int, output: str,
                reference: str, similarity: float, ec_equivalent: bool | None, violated: bool,
                perturbation: str | None = None, check_id: str | None = None, no_answer: bool = False) -> Check:
    """The check of one asked round: the SUT's output there against a reference (or another answer)."""
    return Check(check_id or f"{name}/{case.test_case_id}/{position}", name, seed_id, source_round,
                 (perturbation or case.perturbation,), (case.test_case_id,), (position,), output, reference, similarity,
                 ec_equivalent, violated, no_answer=no_answer)


@dataclass(frozen=True)
class Judging:
    """What a relation judges: one seed's test cases of one method, with their answers and the oracle."""

    seed: Seed
    cases: list[TestCase]  # the method's test cases of this seed (ORIG's for RBT)
    verdicts: dict[str, list[ECVerdict | None]]  # test_case_id → EC verdict per position (None: not checked)
    answers: dict  # (test_case_id, position) → the executor's Answer (``.text`` None when errored)
    oracle: object  # similarity(question, reference, candidate), compare(question, a, b) of two answers
    threshold: float
    references: dict[int, str] = field(default_factory=dict)  # source round → gold, else the RBT output
    orig_cases: list[TestCase] = field(default_factory=list)  # the seed as it is, for invariance against ORIG
    selections: dict = field(default_factory=dict)  # (test_case_id, position) → response-selection row
    settings: object = None  # the settings of the method whose test cases these are (None: its defaults)

    def answer(self, case: TestCase, position: int) -> str | None:
        out = self.answers.get((case.test_case_id, position))
        return None if out is None else out.text

    def question(self, source_round: int) -> str:
        return self.seed.round(source_round).question


@dataclass(frozen=True)
class Relation:
    name: str
    method: str  # the report label of the method it belongs to (RBT for reference-based testing)
    kind: str  # DIRECTION, INVARIANCE or GROUP
    text: str  # what it expects, for the glossary and the report
    judge: Callable[[Judging], list[Check]]


RELATIONS: dict[str, Relation] = {}


def register_relation(relation: Relation) -> Relation:
    if relation.name in RELATIONS:
        raise ValueError(f"a relation named {relation.name!r} is already registered")
    RELATIONS[relation.name] = relation
    return relation


def references(seed: Seed, orig_cases: list[TestCase], answers: dict) -> dict[int, str]:
    """Gold answers, or the RBT outputs o_j when the dataset has none (Eq. 18)."""
    refs = {r.turn_id: r.answer for r in seed.rounds if r.answer is not None}
    for case in orig_cases:
        for pos, source in enumerate(case.source_rounds, start=1):
            out = answers.get((case.test_case_id, pos))
            if source not in refs and out is not None and out.text is not None:
                refs[source] = out.text
    return refs


def _rbt(j: Judging) -> list[Check]:
    checks = []
    for case in j.cases:
        for pos, source in enumerate(case.source_rounds, start=1):
            out, gold = j.answer(case, pos), j.seed.round(source).answer
            if out is None or gold is None:
                continue
            sim = j.oracle.similarity(j.question(source), gold, out)
            checks.append(round_check(RBT, j.seed.id, source, case, pos, out, gold, sim, True, sim < j.threshold,
                                      perturbation=ORIG))
    return checks


register_relation(Relation(
    RBT, RBT, DIRECTION,
    "Reference-based testing: the seed's questions asked in their original order; a round is a bug when the "
    "SUT's answer does not match the gold answer (similarity below ε).", _rbt))


def matches_reference(name: str):
    """A direction relation on single-turn cases: the answer to the changed last question still matches the
    reference ("Unknown" for a question whose gold answer is unknown)."""
    def judge(j: Judging) -> list[Check]:
        checks = []
        for case in j.cases:
            pos, source = len(case.source_rounds), case.source_rounds[-1]
            out, gold = j.answer(case, pos), j.seed.round(source).answer
            if out is None or gold is None:
                continue
            reference = "Unknown" if j.seed.round(source).is_unknown else gold
            sim = j.oracle.similarity(j.question(source), reference, out)
            checks.append(round_check(name, j.seed.id, source, case, pos, out, reference, sim, None,
                                      sim < j.threshold, check_id=f"{name}/{case.test_case_id}"))
        return checks
    return judge


def same_as_orig(name: str, kinds: tuple[str, ...]):
    """An invariance relation: in test cases of these kinds, the answer to a round agrees with the SUT's
    answer to that round in the seed as it is (ORIG). Whole-dialogue cases (a new story) are judged at
    every round, single-turn cases at their last round."""
    def judge(j: Judging) -> list[Check]:
        if not j.orig_cases:
            return []
        orig = j.orig_cases[0]
        orig_answers = {src: j.answer(orig, p) for p, src in enumerate(orig.source_rounds, start=1)}
        checks = []
        for case in (c for c in j.cases if c.perturbation in kinds):
            positions = [len(case.source_rounds)] if case.target_round is not None else \
                range(1, len(case.source_rounds) + 1)
            for pos in positions:
                source = case.source_rounds[pos - 1]
                out, before = j.answer(case, pos), orig_answers.get(source)
                if out is None or before is None:
                    continue
                agreed = compare(j.oracle, j.question(source), before, out)  # two non-answers: no outcome
                checks.append(round_check(name, j.seed.id, source, case, pos, out, before, agreed.score, None,
                                          differ(agreed, j.threshold), no_answer=agreed.no_answer))
        return checks
    return judge


def unstable_rounds(seed: Seed, orig_cases: list[TestCase], answers: dict, orig_samples: list[dict], oracle,
                    threshold: float) -> set[int]:
    """The seed's source rounds where any two of ORIG's answers (the run's and each repeat's) disagree (two
    non-answers do not: neither answers, so neither disagrees)."""
    found = set()
    for case in orig_cases:
        for pos, source in enumerate(case.source_rounds, start=1):
            texts = [a.text for a in (answers.get((case.test_case_id, pos)),
                                      *(s.get((case.test_case_id, pos)) for s in orig_samples))
                     if a is not None and a.text is not None]
            question = seed.round(source).question
            if any(differ(compare(oracle, question, a, b), threshold)
                   for i, a in enumerate(texts) for b in texts[i + 1:] if a != b):
                found.add(source)
    return found


@dataclass(frozen=True)
class Scored:
    """Two answers compared by an oracle that gives only a score (no ``compare``): never "no answer"."""

    score: float
    no_answer: bool = False


def compare(oracle, question: str, a: str, b: str):
    """Two system answers compared: the oracle's ``compare`` (score and ``no_answer``: neither answers the
    question), or for an oracle with only ``agreement`` its score."""
    return oracle.compare(question, a, b) if hasattr(oracle, "compare") else Scored(oracle.agreement(question, a, b))


def differ(agreement, threshold: float) -> bool:
    """They give different answers: below the threshold, and not a pair of non-answers (no outcome)."""
    return not agreement.no_answer and agreement.score < threshold
