"""Response selection with the real SmolLM2 SUT: KV-reused scores, ranking metrics, candidate drawing."""

import math
import random

import pytest

from mortar.formats import load_dataset
from mortar.selection import (candidates_for, full_pass_scores, gold_rank, hits_at_1, mrr, rank,
                              score_candidates)
from mortar.sut import Conversation, SutError, Turn, make_sut
from tests.conftest import SAMPLE, coqa_record


@pytest.fixture(scope="session")
def smollm2():
    sut = make_sut("smollm2", lanes=2)
    sut.loaded  # noqa: B018 - the one expensive load
    return sut


@pytest.fixture(scope="session")
def seeds():
    return load_dataset(SAMPLE).seeds


def test_scores_with_the_reused_prefix_equal_a_full_forward_pass(smollm2, seeds):
    seed = seeds[1]  # Nina's lost cat Biscuit
    r1, r2, r3 = seed.rounds[:3]
    conversation = Conversation(seed.story, (Turn(r1.question, r1.answer), Turn(r2.question, r2.answer)),
                                r3.question)
    candidates = ["on the windowsill", "grey", "under the beds, in the laundry basket and behind the oven",
                  "Rosa Delgado"]
    reused = score_candidates(smollm2, conversation, candidates)
    full = full_pass_scores(smollm2, conversation, candidates)
    assert len(reused) == 4
    assert max(abs(a - b) for a, b in zip(reused, full)) < 1e-4
    assert all(s < 0 for s in reused)


def test_rounds_scored_in_order_extend_one_lane_cache_and_keep_the_scores(smollm2, seeds):
    """The executor's lane cache carries the story and history from one round to the next: the second round
    runs only its new tokens through the model, and its scores still equal a full forward pass."""
    seed = seeds[1]
    r1, r2 = seed.rounds[:2]
    first = Conversation(seed.story, (), r1.question)
    second = Conversation(seed.story, (Turn(r1.question, r1.answer),), r2.question)
    candidates = [r2.answer, "Rosa Delgado", "in the garage"]
    session = smollm2.session(lanes=1)
    score_candidates(smollm2, first, candidates, session)
    before = session.prefilled_tokens
    reused = score_candidates(smollm2, second, candidates, session)
    assert session.prefilled_tokens - before < len(smollm2.prompt_ids(second)) / 4  # the story was not re-read
    full = full_pass_scores(smollm2, second, candidates)
    assert max(abs(a - b) for a, b in zip(reused, full)) < 1e-4


def test_the_gold_answer_beats_an_unrelated_distractor(smollm2, seeds):
    seed = seeds[1]
    conversation = Conversation(seed.story, (), seed.rounds[0].question)  # What was the name of Nina's cat?
    scores = score_candidates(smollm2, conversation, ["Biscuit", "$8.6 million in federal road repairs"])
    assert scores[0] > scores[1]
    assert rank(scores) == [0, 1] and gold_rank(scores) == 1


def test_rank_and_the_metrics_on_hand_made_ranks():
    assert rank([-1.5, -0.2, -0.2, -3.0]) == [1, 2, 0, 3]  # the tie keeps the candidates' order
    assert gold_rank([-1.5, -0.2, -0.2, -3.0]) == 3
    ranks = [1, 2, 1, 4]
    assert hits_at_1(ranks) == 0.5
    assert mrr(ranks) == pytest.approx((1 + 0.5 + 1 + 0.25) / 4)
    assert math.isnan(hits_at_1([])) and math.isnan(mrr([]))  # no rounds, no figure


def test_candidates_gold_first_then_distinct_distractors(seeds):
    seed, others = seeds[1], list(seeds)
    gold = seed.round(2).answer
    picked = candidates_for(seed, 2, others, 9, random.Random(7))
    assert picked[0] == gold and len(picked) == 10
    keys = [" ".join(c.lower().split()) for c in picked]
    assert len(set(keys)) == len(keys)
    assert all(k != "unknown" for k in keys)
    assert picked == candidates_for(seed, 2, others, 9, random.Random(7))
    assert picked != candidates_for(seed, 2, others, 9, random.Random(8))


def test_candidates_leave_out_unknown_answers_copies_of_the_gold_and_repeats(write_coqa):
    one = coqa_record("a", n=4)
    answers = ["Ann", "unknown", " ann ", "the hill"]
    for a, text in zip(one["answers"], answers):
        a["input_text"] = text
    two = coqa_record("b", n=2)
    two["answers"][0]["input_text"] = "The  Hill"
    two["answers"][1]["input_text"] = "Unknown"
    a, b = load_dataset(write_coqa([one, two])).seeds
    picked = candidates_for(a, 1, [a, b], 5, random.Random(0))
    assert picked == ["Ann", "the hill"]  # fewer than k when not enough exist


def test_a_sut_that_cannot_score_a_given_reply_is_refused():
    sut = make_sut("tests.echo_bot:reply")  # a Python function: neither weights nor prompt log-probabilities
    with pytest.raises(SutError, match="needs the likelihood of a given reply"):
        score_candidates(sut, Conversation("A story.", (), "Who?"), ["Ann", "Bob"])


def test_the_selection_stage_feeds_the_sel_relation_and_the_report(smollm2, seeds):
    """Selection in a run's flow: every version of a round gets the same candidates; a changed top candidate is
    a SEL detection; the report gives hits@1/MRR per version and the agreement with the answer oracle."""
    from mortar.dataset import Seed, TestCase
    from mortar.execute import Answer
    from mortar.reports import report
    from mortar.oracle import Oracle
    from mortar.perturb import original_case
    from mortar.judge import judge
    from mortar.selection import select

    seed = Seed(seeds[1].id, seeds[1].story, seeds[1].rounds[:3])
    orig = original_case(seed)
    noisy = TestCase(seed.id, "P3-question", 1, (1, 2), replaced=((2, "Waht was teh dgo's anme?"),), target_round=2)
    answers = {(orig.test_case_id, p): Answer(seed.round(p).answer) for p in (1, 2, 3)}
    answers[(noisy.test_case_id, 1)] = Answer(seed.round(1).answer)
    answers[(noisy.test_case_id, 2)] = Answer("I do not know.")
    oracle = Oracle("cosine")
    rows = select([seed], [orig, noisy], answers, smollm2, list(seeds), 4, 0, oracle, 0.6)
    assert set(rows) == {(orig.test_case_id, 1), (orig.test_case_id, 2), (orig.test_case_id, 3),
                         (noisy.test_case_id, 2)}  # a per-round case is selected at its own round only
    assert rows[(noisy.test_case_id, 2)]["candidates"] == rows[(orig.test_case_id, 2)]["candidates"] == 5
    assert rows[(noisy.test_case_id, 2)]["oracle_pass"] is False and rows[(orig.test_case_id, 2)]["oracle_pass"]
    checks = judge([seed], [orig, noisy], {}, answers, oracle, 0.6, rows)
    sel = [c for c in checks if c.relation == "SEL"]
    assert len(sel) == 1 and sel[0].violated == (rows[(noisy.test_case_id, 2)]["top"] != rows[(orig.test_case_id, 2)]["top"])
    summary = {r["version"]: r for r in report(checks, [orig, noisy], {}, rows)["selection"]}
    assert list(summary) == ["ORIG", "P3-question"] and summary["ORIG"]["rounds"] == 3
    assert summary["ORIG"]["MRR"] == pytest.approx(sum(1 / rows[(orig.test_case_id, p)]["gold_rank"] for p in (1, 2, 3)) / 3)
