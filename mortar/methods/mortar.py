"""MORTAR (multi-turn metamorphic testing): dialogue-level perturbations, the equivalent context check,
and four metamorphic relations on the answers.

    seed ─► DRS / DRR / DRD / DSR / DSD (whole rounds moved, dropped, repeated)
         ─► EC verdict of every perturbed round (does its question still have the context it needs?)
         ─► MR1 / MR2 per round, MR3 / MR4 per group of versions of a seed question
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from itertools import combinations, product

from mortar.context import check_case, read_questions
from mortar.methods import Made, Making, Table, TestMethod, register_method
from mortar.perturb import PerturbationSettings, perturbed_cases
from mortar.relations import (DIRECTION, GROUP, INVARIANCE, Check, Judging, Relation, compare, differ,
                              register_relation, round_check)
from mortar.story_support import story_answers
from mortar.vocab import DIALOGUE_PERTURBATIONS, MORTAR_METHOD, MORTAR_RELATIONS, MR1, MR2, MR3, MR4, MT
from mortar import metrics


def make_cases(making: Making) -> Made:
    settings = making.settings
    cases, verdicts = [], {}
    with making.timed("context check"):
        read_questions(r.question for seed in making.seeds for r in seed.rounds)
    for seed in making.seeds:
        questions = {r.turn_id: r.question for r in seed.rounds}
        for case in perturbed_cases(seed, making.run_seed, settings):  # the dialogue-level transformation
            cases.append(case)
            # the constraint is no filter here: the EC verdict decides which relation judges each round
            with making.timed("context check"):
                verdicts[case.test_case_id] = check_case(making.graphs[seed.id], case, questions, settings.follow_rule)
    return Made(cases, verdicts)


def _versions(j: Judging):
    """Every answered asking of a seed question in the perturbed cases, with its EC verdict.

    Rounds whose gold answer is "unknown" are left out of the MR checks."""
    for case in j.cases:
        for pos, (source, verdict) in enumerate(zip(case.source_rounds, j.verdicts[case.test_case_id]), start=1):
            out = j.answer(case, pos)
            if out is None or j.seed.round(source).is_unknown or source not in j.references:
                continue
            yield case, pos, source, verdict.equivalent, out


def _story_gives(j: Judging, source: int, *answers: str) -> bool:
    """Every answer is right, and the story alone gives the reference to the question's own words: answering it
    without the lost context is reading the story, no bug (``mortar.story_support``)."""
    if j.settings is not None and not j.settings.story_support:  # the paper's relations as written
        return False
    question, reference = j.question(source), j.references[source]
    return (all(j.oracle.similarity(question, reference, a) >= j.threshold for a in answers)
            and story_answers(question, reference, j.seed.story))


def _per_round(name: str, equivalent: bool, j: Judging) -> list[Check]:
    checks = []
    for case, pos, source, ec, out in _versions(j):
        if ec != equivalent:
            continue
        sim = j.oracle.similarity(j.question(source), j.references[source], out)
        violated = sim < j.threshold if equivalent else sim >= j.threshold and not _story_gives(j, source, out)
        checks.append(round_check(name, j.seed.id, source, case, pos, out, j.references[source], sim, ec, violated))
    return checks


def mr1(j: Judging) -> list[Check]:
    """Context-preserving: an EC-true round should still match the reference (sim ≥ ε)."""
    return _per_round(MR1, True, j)


def mr2(j: Judging) -> list[Check]:
    """Context-altering: an EC-false round should no longer match the reference (sim < ε), unless the story alone
    gives that answer to the question's own words."""
    return _per_round(MR2, False, j)


def _groups(j: Judging) -> dict[int, dict[bool, list[tuple]]]:
    groups: dict[int, dict[bool, list[tuple]]] = defaultdict(lambda: {True: [], False: []})
    for case, pos, source, ec, out in _versions(j):
        groups[source][ec].append((case, pos, out))
    return groups


def _pair_check(name: str, j: Judging, source: int, versions, decided, ec, violated: bool) -> Check:
    """A group's check: the pair that decided it comes first in the test cases and positions, then the others."""
    agreed, a, b = decided
    ordered = [a, b, *(v for v in versions if v is not a and v is not b)]
    return Check(f"{name}/{j.seed.id}/{source}", name, j.seed.id, source,
                 tuple(sorted({case.perturbation for case, _, _ in versions})),
                 tuple(case.test_case_id for case, _, _ in ordered), tuple(pos for _, pos, _ in ordered),
                 a[2], b[2], agreed.score, ec, violated, no_answer=agreed.no_answer)


def _compared(j: Judging, source: int, pairs) -> tuple[list, list]:
    """Each pair of versions compared: (agreement, a, b); and those where some answer answers the question (a
    pair of non-answers is no outcome: it neither agrees nor differs)."""
    compared = [(compare(j.oracle, j.question(source), a[2], b[2]), a, b) for a, b in pairs]
    return compared, [c for c in compared if not c[0].no_answer]


def mr3(j: Judging) -> list[Check]:
    """Inner-group consistency: the EC-true versions of a question agree pairwise (min sim ≥ ε)."""
    checks = []
    for source, group in sorted(_groups(j).items()):
        same = group[True]
        if len(same) >= 2:
            compared, answered = _compared(j, source, combinations(same, 2))
            if answered:  # the least similar pair decides
                decided = min(answered, key=lambda t: t[0].score)
                checks.append(_pair_check(MR3, j, source, same, decided, True, differ(decided[0], j.threshold)))
            else:  # no version answers: reported as a no-answer group, never a violation
                checks.append(_pair_check(MR3, j, source, same, compared[0], True, False))
    return checks


def mr4(j: Judging) -> list[Check]:
    """Inter-group divergence: every EC-true version differs from every EC-false one (max sim < ε), unless both
    answers of the most similar pair are right and the story alone gives them. Two non-answers do not count as
    the same answer."""
    checks = []
    for source, group in sorted(_groups(j).items()):
        same, other = group[True], group[False]
        if same and other:
            compared, answered = _compared(j, source, product(same, other))
            if answered:  # the most similar pair across the groups decides
                decided = max(answered, key=lambda t: t[0].score)
                agreed, a, b = decided
                violated = agreed.score >= j.threshold and not _story_gives(j, source, a[2], b[2])
                checks.append(_pair_check(MR4, j, source, same + other, decided, None, violated))
            else:
                checks.append(_pair_check(MR4, j, source, same + other, compared[0], None, False))
    return checks


register_relation(Relation(
    MR1, MT, DIRECTION, "MR1, context-preserving: the context stayed equivalent (EC true), so the answer should "
    "still match the reference (similarity ≥ ε); a violation is a detection.", mr1))
register_relation(Relation(
    MR2, MT, DIRECTION, "MR2, context-altering: the context lost what the question needs (EC false), so the answer "
    "should no longer match the reference (similarity < ε) — unless the story alone gives that answer to the "
    "question's own words.", mr2))
register_relation(Relation(
    MR3, MT, INVARIANCE, "MR3, inner-group consistency: every EC-true version of a question should get the same "
    "answer (least similar pair ≥ ε); one detection per question.", mr3))
register_relation(Relation(
    MR4, MT, GROUP, "MR4, inter-group divergence: an EC-true and an EC-false version of a question should get "
    "different answers (most similar pair < ε), unless both are right and the story alone gives them; one "
    "detection per question.", mr4))


def tables(checks, cases, verdicts, unknown, record: dict | None = None) -> list[Table]:
    """The paper's Tables VI–IX, and the journal version's similarity per version of the dialogue."""

    mine = [c for c in cases if c.perturbation in DIALOGUE_PERTURBATIONS]
    return [
        Table("table_vi", "Table VI: test cases, questions, unanswerable questions and MR checks per perturbation",
              "Unanswerable: the gold answer is \"unknown\" (left out of the MR checks). MR1/MR2: checks of questions "
              "whose context stayed (EC true) or was lost (EC false). MR3/MR4: groups of one seed question's versions, "
              "counted for every perturbation among them; the Sum row counts each group once.",
              metrics.table_vi(mine, verdicts, checks, unknown)),
        Table("table_vii", "Table VII: bugs per perturbation",
              "An MR3/MR4 group bug counts for every perturbation in its group.",
              metrics.bugs_per_perturbation(checks, MORTAR_RELATIONS)),
        Table("table_viii", "Table VIII: bugs per metamorphic relation", "Rate+ = bugs / checks of the relation.",
              metrics.bugs_per_relation(checks, MORTAR_RELATIONS)),
        Table("table_ix", "Table IX: bug levels per metamorphic relation",
              "L1: also wrong in RBT; L2: right in RBT, in a seed with an RBT bug; L3: in a seed RBT found clean.",
              metrics.levels_per_relation(checks, MORTAR_RELATIONS)),
        Table("similarity_per_version", "Similarity and MR1 bugs per version of the dialogue (journal Table 6)",
              "Mean similarity of the answers to the reference, mean similarity of the buggy answers, and the share "
              "of checks with a bug; ORIG is judged by RBT, the perturbations by MR1.",
              metrics.similarity_per_version(checks)),
    ]


def run_key(settings: PerturbationSettings, chosen: bool) -> dict:
    """The perturbation settings are in every run key (with no perturbations when MORTAR does not run), as they
    were before methods were registered: the run ids of earlier runs stay valid."""
    return {"perturbations": (settings if chosen else replace(settings, perturbations=())).key()}


MORTAR = register_method(TestMethod(
    name=MORTAR_METHOD, label=MT, perturbations=DIALOGUE_PERTURBATIONS, relations=MORTAR_RELATIONS,
    text="Metamorphic testing with MR1–MR4 on dialogue-level perturbations (" + ", ".join(DIALOGUE_PERTURBATIONS)
         + "), judged by the equivalent context check.",
    make_cases=make_cases, tables=tables, settings=PerturbationSettings, config_key="perturbation",
    run_key=run_key))
