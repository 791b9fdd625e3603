"""Each relation, bug level and metric pinned on small hand-made cases (a scripted SUT and oracle)."""

import math

import pytest

from mortar.verdict import ECVerdict
from mortar.dataset import Round, Seed, TestCase
from mortar.metrics import bugs_per_perturbation, bugs_per_relation, cohen_kappa, coefficient_of_variation, levels_per_relation, method_summary, overlap, ppd, table_vi, unique_bugs, uniqueness, similarity_per_version, similarity_distribution, critical_bugs
from mortar.reports import run_metrics
from mortar.oracle import Oracle, exact_match, f1_score, mss
from mortar.execute import Answer as Output
from mortar.methods import methods
from mortar.judge import judge
from mortar.vocab import METAL_METHOD, MORTAR_METHOD, MORTAR_RELATIONS


class ExactOracle:
    """1.0 when the texts match ignoring case, else 0.0."""

    def prepare(self, texts, questions=()):
        pass

    def similarity(self, question, reference, candidate):
        return float(reference.strip().lower() == candidate.strip().lower())

    agreement = similarity


def ec(equivalent):
    return ECVerdict(equivalent, equivalent, equivalent, False, frozenset(), frozenset(), None)


SEED = Seed("s", "Ann had a red kite.", (Round(1, "Who had a kite?", "Ann"), Round(2, "What colour?", "red"),
                                         Round(3, "How old was she?", "unknown")))
ORIG_CASE = TestCase("s", "ORIG", 1, (1, 2, 3))


def run(cases, verdicts, outputs, seed=SEED):
    return judge([seed], cases, verdicts, outputs, ExactOracle(), 0.6)


def outs(case, *texts):
    return {(case.test_case_id, i): (Output(t) if isinstance(t, str) else t) for i, t in enumerate(texts, start=1)}


def by_id(checks):
    return {c.check_id: c for c in checks}


def test_rbt_flags_wrong_orig_answers_including_unknown_gold():
    checks = by_id(run([ORIG_CASE], {ORIG_CASE.test_case_id: [ec(True)] * 3}, outs(ORIG_CASE, "Ann", "blue", "Unknown")))
    assert not checks["RBT/s/ORIG/1/1"].violated
    assert checks["RBT/s/ORIG/1/2"].violated
    assert not checks["RBT/s/ORIG/1/3"].violated  # "Unknown" matches the gold "unknown"


def test_mr1_and_mr2_follow_the_ec_verdict_and_skip_unknown_gold():
    drs = TestCase("s", "DRS", 1, (2, 1, 3))
    verdicts = {ORIG_CASE.test_case_id: [ec(True)] * 3, drs.test_case_id: [ec(False), ec(True), ec(False)]}
    checks = by_id(run([ORIG_CASE, drs], verdicts, {**outs(ORIG_CASE, "Ann", "red", "x"), **outs(drs, "red", "Bob", "y")}))
    mr2 = checks["MR2/s/DRS/1/1"]
    assert mr2.relation == "MR2" and mr2.violated and mr2.text_b == "red"  # answered as if context were there
    mr1 = checks["MR1/s/DRS/1/2"]
    assert mr1.violated and mr1.similarity == 0.0 and mr1.ec_equivalent
    assert not any(c.source_round == 3 and c.relation != "RBT" for c in checks.values())


def test_mr2_leaves_a_right_answer_that_the_story_alone_gives():
    drs = TestCase("s", "DRS", 1, (2, 1, 3))
    verdicts = {ORIG_CASE.test_case_id: [ec(True)] * 3, drs.test_case_id: [ec(False), ec(False), ec(False)]}
    checks = by_id(run([ORIG_CASE, drs], verdicts, {**outs(ORIG_CASE, "Ann", "red", "x"), **outs(drs, "red", "Ann", "y")}))
    assert checks["MR2/s/DRS/1/1"].violated  # "What colour?": its words lead nowhere in the story
    assert not checks["MR2/s/DRS/1/2"].violated  # "Who had a kite?": the story's kite sentence says Ann


def test_errored_rounds_are_never_compared():
    drs = TestCase("s", "DRS", 1, (2, 1, 3))
    verdicts = {ORIG_CASE.test_case_id: [ec(True)] * 3, drs.test_case_id: [ec(True)] * 3}
    outputs = {**outs(ORIG_CASE, Output(None, "HTTP 500"), "red", "x"), **outs(drs, Output(None, "timeout"), "Bob", "y")}
    checks = run([ORIG_CASE, drs], verdicts, outputs)
    assert {(c.relation, c.source_round) for c in checks} == {("RBT", 2), ("RBT", 3), ("MR1", 1)}


def test_mr3_needs_two_ec_true_versions_and_flags_disagreement_once():
    a, b, c = (TestCase("s", p, 1, (1, 2)) for p in ("DRS", "DRD", "DSD"))
    verdicts = {ORIG_CASE.test_case_id: [ec(True)] * 3, a.test_case_id: [ec(True)] * 2,
                b.test_case_id: [ec(True), ec(False)], c.test_case_id: [ec(True), ec(False)]}
    outputs = {**outs(ORIG_CASE, "Ann", "red", "x"), **outs(a, "Ann", "red"), **outs(b, "Ann", "blue"),
               **outs(c, "Bob", "green")}
    checks = run([ORIG_CASE, a, b, c], verdicts, outputs)
    mr3 = [x for x in checks if x.relation == "MR3"]
    assert len(mr3) == 1 and mr3[0].source_round == 1 and mr3[0].violated  # Ann vs Bob
    assert set(mr3[0].test_case_ids) == {a.test_case_id, b.test_case_id, c.test_case_id}
    # round 2 has a single EC-true version: no MR3 check for it
    assert not any(x.relation == "MR3" and x.source_round == 2 for x in checks)
    mr4 = [x for x in checks if x.relation == "MR4"]
    assert [x.source_round for x in mr4] == [2] and not mr4[0].violated  # red vs blue/green differ


def test_mr4_flags_an_ec_false_version_that_answers_like_an_ec_true_one_and_skips_all_false_groups():
    a, b = TestCase("s", "DRS", 1, (2, 1)), TestCase("s", "DRR", 1, (1, 2))
    verdicts = {ORIG_CASE.test_case_id: [ec(True)] * 3, a.test_case_id: [ec(False), ec(False)],
                b.test_case_id: [ec(True), ec(True)]}
    outputs = {**outs(ORIG_CASE, "Ann", "red", "x"), **outs(a, "red", "Ann"), **outs(b, "Ann", "red")}
    checks = by_id(run([ORIG_CASE, a, b], verdicts, outputs))
    assert checks["MR4/s/2"].violated  # "What colour?" without its context: a right "red" is a guess
    # "Who had a kite?" leads to the one sentence about a kite, which says Ann: right in both is no bug
    assert not checks["MR4/s/1"].violated and checks["MR4/s/1"].similarity == 1.0
    wrong = {**outputs, **outs(a, "red", "Bob"), **outs(b, "Bob", "red")}
    assert by_id(run([ORIG_CASE, a, b], verdicts, wrong))["MR4/s/1"].violated  # agreeing on a wrong answer: still a bug
    only_false = {ORIG_CASE.test_case_id: [ec(True)] * 3, a.test_case_id: [ec(False), ec(False)]}
    assert not any(c.relation in ("MR3", "MR4") for c in run([ORIG_CASE, a], only_false, outputs))


def test_bug_levels_relative_to_rbt():
    seed2 = Seed("t", "", (Round(1, "q1?", "a"), Round(2, "q2?", "b")))
    o1, o2 = TestCase("s", "ORIG", 1, (1, 2, 3)), TestCase("t", "ORIG", 1, (1, 2))
    p1, p2 = TestCase("s", "DRS", 1, (2, 1)), TestCase("t", "DRS", 1, (2, 1))
    verdicts = {o1.test_case_id: [ec(True)] * 3, o2.test_case_id: [ec(True)] * 2,
                p1.test_case_id: [ec(True)] * 2, p2.test_case_id: [ec(True)] * 2}
    outputs = {**outs(o1, "Ann", "blue", "u"), **outs(o2, "a", "b"), **outs(p1, "blue", "Bob"), **outs(p2, "x", "y")}
    checks = judge([SEED, seed2], [o1, p1, o2, p2], verdicts, outputs, ExactOracle(), 0.6)
    levels = {(c.seed_id, c.source_round): c.bug_level for c in checks if c.relation == "MR1"}
    assert levels == {("s", 2): "L1", ("s", 1): "L2", ("t", 2): "L3", ("t", 1): "L3"}
    assert all(c.bug_level is None for c in checks if c.relation == "RBT")


def test_without_gold_answers_the_reference_is_the_rbt_output():
    seed = Seed("n", "", (Round(1, "Who?", None), Round(2, "Why?", None)))
    orig, drs = TestCase("n", "ORIG", 1, (1, 2)), TestCase("n", "DRS", 1, (2, 1))
    checks = judge([seed], [orig, drs], {orig.test_case_id: [ec(True)] * 2, drs.test_case_id: [ec(True)] * 2},
                   {**outs(orig, "Ann", "rain"), **outs(drs, "sun", "Ann")}, ExactOracle(), 0.6)
    assert not any(c.relation == "RBT" for c in checks)
    mr1 = {c.source_round: c for c in checks if c.relation == "MR1"}
    assert mr1[2].violated and mr1[2].text_b == "rain" and not mr1[1].violated


def test_metrics_on_a_hand_made_run():
    drs = TestCase("s", "DRS", 1, (2, 1, 3))
    drr = TestCase("s", "DRR", 1, (1, 2))
    verdicts = {ORIG_CASE.test_case_id: [ec(True)] * 3, drs.test_case_id: [ec(False), ec(True), ec(False)],
                drr.test_case_id: [ec(True), ec(True)]}
    outputs = {**outs(ORIG_CASE, "Ann", "blue", "u"), **outs(drs, "red", "Bob", "y"), **outs(drr, "Ann", "red")}
    cases = [ORIG_CASE, drs, drr]
    checks = run(cases, verdicts, outputs)
    m = run_metrics(checks, cases)
    assert m["RBT"] == {"test_cases": 1, "detections": 3, "NBugs": 2, "Rate+": 2 / 3, "RETC": 1.0, "BPTC": 2.0}
    # MR2 s/2 (red = gold), MR1 s/1 (Bob), MR3 s/1 (Bob vs Ann), MR4 s/2 (red vs red)
    assert m["MT"]["NBugs"] == 4 and m["MT"]["test_cases"] == 2 and m["MT"]["BPTC"] == 2.0 and m["MT"]["RETC"] == 1.0
    assert m["MT"]["detections"] == 4 + 2  # MR1/MR2 on rounds 1, 2 of both cases, MR3 and MR4 on their groups
    assert (m["MT"]["L1"], m["MT"]["L2"], m["MT"]["L3"]) == (2, 2, 0)
    assert m["MT"]["CV"] == pytest.approx(coefficient_of_variation([2, 2, 0]))
    # Table VI by hand: DRS asks rounds 2, 1, 3 (EC false, true, false; round 3's gold is "unknown", so no MR
    # check), DRR asks 1, 2 (both EC true). Round 1 has two EC-true versions (DRS, DRR): one MR3 group; round 2 has
    # an EC-true (DRR) and an EC-false (DRS) version: one MR4 group. Each group counts for both perturbations and
    # once in the Sum row.
    vi = {r["perturbation"]: r for r in table_vi(cases, verdicts, checks, {("s", 3)})}
    assert vi["DRS"] == {"perturbation": "DRS", "test_cases": 1, "questions": 3, "unanswerable_questions": 1,
                         "MR1_checks": 1, "MR2_checks": 1, "MR3_groups": 1, "MR4_groups": 1}
    assert vi["DRR"] == {"perturbation": "DRR", "test_cases": 1, "questions": 2, "unanswerable_questions": 0,
                         "MR1_checks": 2, "MR2_checks": 0, "MR3_groups": 1, "MR4_groups": 1}
    assert vi["Sum"] == {"perturbation": "Sum", "test_cases": 2, "questions": 5, "unanswerable_questions": 1,
                         "MR1_checks": 3, "MR2_checks": 1, "MR3_groups": 1, "MR4_groups": 1}
    assert list(vi) == ["DRR", "DRS", "Sum"]
    per_version = {r["version"]: r for r in similarity_per_version(checks)}
    # RBT on ORIG: Ann ✓, blue ✗ (similarity 0), u vs unknown ✗; MR1: DRS round 1 (Bob ✗), DRR rounds 1, 2 (✓ ✓)
    assert per_version["ORIG"]["checks"] == 3 and per_version["ORIG"]["bugs"] == 2
    assert per_version["DRS"] == {"version": "DRS", "relation": "MR1", "checks": 1, "mean_similarity": 0.0,
                                  "mean_similarity_of_bugs": 0.0, "bugs": 1, "Rate+": 1.0}
    assert per_version["DRR"]["mean_similarity"] == 1.0 and math.isnan(per_version["DRR"]["mean_similarity_of_bugs"])
    spread = {r["relation"]: r for r in similarity_distribution(checks, ["RBT", *MORTAR_RELATIONS])}
    assert spread["MR1"]["checks"] == 3 and spread["MR1"]["median"] == 1.0 and spread["MR1"]["critical_bugs"] == 1
    # RBT's two bugs, MR1's Bob and MR3's Bob vs Ann are at similarity 0; MR2's and MR4's bugs are answers that agree
    assert spread["RBT"]["critical_bugs"] == 2 and critical_bugs(checks) == 4 and spread["MR2"]["critical_bugs"] == 0
    vii = {r["perturbation"]: r["bugs"] for r in bugs_per_perturbation(checks, MORTAR_RELATIONS)}
    assert vii == {"DRS": 4, "DRR": 2}  # group bugs count for each perturbation in their group
    viii = {r["relation"]: r for r in bugs_per_relation(checks, MORTAR_RELATIONS)}
    assert viii["MR2"]["bugs"] == 1 and viii["MR2"]["detections"] == 1 and viii["MR1"]["detections"] == 3
    ix = {r["relation"]: r for r in levels_per_relation(checks, MORTAR_RELATIONS)}
    assert ix["MR1"] == {"relation": "MR1", "L1": 0, "L2": 1, "L3": 0}


def test_small_metric_functions():
    assert coefficient_of_variation([1, 1, 1]) == 0.0
    assert coefficient_of_variation([0, 0, 3]) == pytest.approx(math.sqrt(2))
    assert method_summary([], 0)["NBugs"] == 0
    assert ppd([0, 5, 6, 10]) == 0.5
    assert cohen_kappa([1, 1, 0, 0], [1, 1, 0, 0]) == 1.0
    assert cohen_kappa([1, 0, 1, 0], [1, 1, 0, 0]) == 0.0


def test_uniqueness_is_by_seed_question():
    from mortar.relations import Check

    def bug(seed, j, rel="MR1"):
        return Check(f"{rel}/{seed}/{j}", rel, seed, j, ("DRS",), ("x",), (1,), "a", "b", 0.1, True, True, "L3")

    mine, theirs = [bug("s", 1), bug("s", 2), bug("t", 1)], [bug("s", 2, "MET"), bug("u", 1, "MET")]
    assert [(c.seed_id, c.source_round) for c in unique_bugs(mine, theirs)] == [("s", 1), ("t", 1)]
    passed = Check("METAL/t/1", "METAL", "t", 1, ("TYPO",), ("x",), (1,), "a", "b", 0.9, True, False, None)
    metal = [bug("s", 2, "METAL"), bug("u", 1, "METAL"), bug("u", 1, "METAL"), passed]
    both = [methods()[MORTAR_METHOD], methods()[METAL_METHOD]]
    assert overlap(mine + metal, both) == {"MT only": 2, "both": 1, "METAL only": 1}
    rows = {r["method"]: r for r in uniqueness(mine + metal, both)}
    assert rows["MT"]["bugs"] == 3 and rows["MT"]["unique"] == rows["MT"]["unique_L3"] == 2
    assert rows["METAL"]["bugs"] == 3 and rows["METAL"]["unique"] == 2  # both bugs on u/1


def test_squad_em_f1_and_mss():
    assert exact_match("The Red kite!", "red kite") == 1.0
    assert f1_score("a red kite on the hill", "red kite") == pytest.approx(2 * (2 / 4) * 1 / (2 / 4 + 1))
    assert mss(0.0, 0.0, 0.0) == 0.0
    assert mss(1.0, 1.0, 1.0) == 1.0
    assert mss(0.9, 0.0, 0.5) == pytest.approx((0.81 + 0.25) / 1.4)


def test_real_cosine_oracle_ranks_answers():
    oracle = Oracle("cosine")
    oracle.prepare(["a red kite", "the kite was red", "seventeen tractors"])
    assert oracle.similarity(None, "the kite was red", "a red kite") > 0.6 > oracle.similarity(
        None, "seventeen tractors", "a red kite")
    wordy = Oracle("mss", oracle.embeddings)
    assert wordy.similarity(None, "Ann", "Ann") == pytest.approx(1.0, abs=1e-5)
    assert wordy.similarity(None, "Ann", "It was Ann who had the kite all along") < oracle.similarity(
        None, "Ann", "It was Ann who had the kite all along")
