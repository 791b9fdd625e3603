"""The ``answer`` oracle (issue 8): each robustness case pinned on concrete answers, and its interface."""

import pytest

from mortar.oracle import ORACLES, Oracle, Verdict, default_threshold


@pytest.fixture(scope="module")
def oracle():
    return Oracle("answer")


ACCEPTED = [
    # wordy: the part that answers the question is found first
    ("What colour was the cotton?", "white", "Cotton was white.", "contains the reference answer"),
    ("Did they win?", "yes", "Yes, they did.", "polarity matches (yes)"),
    ("What did she carry?", "a paper bag of oats", "She carried a paper bag full of oats to the pond.", ""),
    ("Who found the rock?", "Anders Bakke, a sheep farmer", "The rock was found by a farmer called Bakke.",
     "contains the reference entity"),
    # yes/no: polarity, negated verbs, echoes, negative prefixes
    ("Did she open the letter?", "no", "No, she didn't.", "polarity matches (no)"),
    ("Did she open the letter?", "no", "She didn't open it.", "polarity matches (no)"),
    ("Did he lock the shed?", "no", "He left it unlocked.", "polarity matches (no)"),
    ("Did she expect the train to be late?", "yes", "She did.", "polarity matches (yes)"),
    ("Did it win?", "no, it came second", "It didn't; it was second.", "polarity matches (no)"),
    # a phrasal verb of refusing, or 'played no part', says no
    ("Did the fête go ahead?", "no", "The vicar called it off because of the storm.", "polarity matches (no)"),
    ("Did they finish the walk?", "no", "They gave up at the second stile.", "polarity matches (no)"),
    ("Did the loose tile cause the leak?", "no", "It played no part in the leak.", "polarity matches (no)"),
    ("Did she give up the choir?", "yes", "She gave up last spring.", "polarity matches (yes)"),
    # 'too heavy to lift': what it is too much for does not happen
    ("Could they lift the crate?", "no", "It was too heavy to lift.", "polarity matches (no)"),
    # a year left off a date, and what the reference adds in brackets, are not missing
    ("By when must she reply?", "4 March 2025", "By Tuesday the fourth of March.", "the number matches"),
    ("How long did the count last?", "2 hours 10 minutes (20:05 to 22:15)", "Two hours and ten minutes.",
     "the number matches"),
    ("How much is a ticket?", "£6 (£4 for children)", "Six pounds.", "the number matches"),
    # 'parts' counts whatever the reference counts
    ("How is the fee paid?", "in two instalments", "It comes in two parts.", "the number matches"),
    ("Why did they stop?", "it was too dark to see", "They couldn't see in the dark.", ""),
    # numbers in digits or words, units, times, dates
    ("How many kites did they fly?", "34", "thirty-four kites", "the number matches"),
    ("How long did the eclipse last?", "about four minutes", "roughly 4 minutes", "the number matches"),
    ("How high?", "3,800 meters", "3.8 km", "the number matches"),
    ("What time did she arrive?", "half past eight", "She got there at 8:30.", "the number matches"),
    ("How much did it raise?", "3,150 dollars", "$3,150", "the number matches"),
    ("When is the open day?", "14 June", "June 14th", "the number matches"),
    ("When did the bridge open?", "in 1931", "It opened to traffic in 1931.", "the number matches"),
    # a number the question says is no answer: 'three' is the question's, 'two' the answer's
    ("How many of the three girls went?", "two of the three", "two girls went", "the number matches (two)"),
    # paraphrases and other words for the same thing
    ("Where did the dog sleep?", "on the sofa", "on the couch", "contains the reference answer"),
    ("What was the building before?", "a cinema", "a movie theater", "close in meaning"),
    ("What colour was he?", "grey", "He was gray.", ""),
    # unknown is right when the reference is unknown
    ("What colour was the basket?", "unknown", "The story doesn't say.", "both say the story does not tell"),
    ("What colour was the basket?", "unknown", "I don't know.", "both say the story does not tell"),
    # said in words no pattern lists, close in meaning to 'the text does not say'
    ("What colour was the basket?", "unknown", "She never mentions it.", "in its own words"),
]

REJECTED = [
    ("Did she open the letter?", "no", "Yes, she opened it at once.", "polarity differs"),
    ("Did she open the letter?", "no", "She opened it at once.", "polarity differs"),
    ("How many kites did they fly?", "34", "They flew four kites.", "different number"),
    ("How long did the eclipse last?", "about four minutes", "about four hours", "different number"),
    ("How long did the eclipse last?", "about four minutes", "It lasted a long time, long enough to watch it.",
     "gives no number"),
    ("What time did she arrive?", "half past eight", "at noon", "different number"),
    ("When did the bridge open?", "in 1931", "in 1913", "different number"),
    ("When is the open day?", "14 June", "14 July", "says july"),
    ("How many helped?", "twelve nurses and three doctors", "three nurses and twelve doctors",
     "different number"),
    ("Who finished first?", "Rosa came first", "Mia came first", "names a different entity"),  # 'first' is asked
    # a wrong entity, a wrong member of a closed class, a substituted modifier, a dropped negation
    ("Who found the rock?", "Anders Bakke", "Jonas Eide", "names a different entity"),
    ("What colour was he?", "grey", "He was a black cat.", "says black"),
    ("What did he bake for her?", "a lemon cake", "a chocolate cake", "says chocolate cake"),
    ("What had he promised his mother?", "never to sell the farm", "He promised he would sell the farm.",
     "negation"),
    # unknown is wrong for an answerable question, and an answer is wrong when the story does not tell
    ("Who won the match?", "Nikhil", "I don't know.", "says the story does not tell"),
    ("Who won the match?", "Nikhil", "Unknown", "says the story does not tell"),
    ("What colour was the basket?", "unknown", "It was brown.", "the story does not tell"),
    ("What did she do with the basket?", "unknown", "She never went back for it.", "the story does not tell"),
    # long and evasive: repeats the question's words without the answer
    ("What did Oliver write about for homework?", "the moon rock",
     "He wrote about the exhibit that he liked the most for his homework.", "repeats the question"),
]


@pytest.fixture(scope="module")
def verdicts(oracle):
    """All cases judged in one batch (as score-answers and the relations do)."""
    triples = [(q, r, c) for q, r, c, _ in ACCEPTED + REJECTED]
    return dict(zip(triples, oracle.judge_many(triples)))


@pytest.mark.parametrize("question, reference, candidate, reason", ACCEPTED)
def test_acceptable_answers_pass(verdicts, question, reference, candidate, reason):
    verdict = verdicts[question, reference, candidate]
    assert verdict.passed and verdict.score >= 0.5, verdict
    assert reason in verdict.reason


@pytest.mark.parametrize("question, reference, candidate, reason", REJECTED)
def test_wrong_answers_fail(verdicts, question, reference, candidate, reason):
    verdict = verdicts[question, reference, candidate]
    assert not verdict.passed and verdict.score < 0.5, verdict
    assert reason in verdict.reason


def test_one_by_one_equals_batch(oracle, verdicts):
    fresh = Oracle("answer", oracle.embeddings)
    for triple in list(verdicts)[::5]:
        assert fresh.judge(*triple) == verdicts[triple]


def test_oracle_interface(oracle):
    assert "answer" in ORACLES and default_threshold("answer") == 0.5 == oracle.threshold
    assert default_threshold("cosine") == default_threshold("mss") == 0.6
    oracle.prepare(["No, she didn't.", "no"], questions=["Did she open it?"])
    # one argument order everywhere: (question, reference, candidate); the question may be None
    with_q = oracle.similarity("Did she open it?", "no", "No, she didn't.")
    without_q = oracle.similarity(None, "no", "No, she didn't.")
    assert 0.5 <= with_q <= 1 and 0.5 <= without_q <= 1
    assert 0 <= oracle.similarity(None, "red", "It was blue.") < 0.5
    verdict = oracle.judge("Did she open it?", "no", "Yes.")
    assert isinstance(verdict, Verdict) and not verdict.passed and verdict.reason
    # a stricter threshold changes the decision, not the score
    strict = oracle.judge("Where did the dog sleep?", "on the sofa", "on the couch", threshold=1.01)
    assert not strict.passed and strict.score == oracle.judge("Where did the dog sleep?", "on the sofa",
                                                               "on the couch").score
    # agreement of two outputs is symmetric (MR3/MR4 compare outputs, neither is a reference)
    a, b = "They studied 26 birds.", "twenty-six"
    assert oracle.agreement(None, a, b) == oracle.agreement(None, b, a)


def test_paper_oracles_unchanged():
    cosine = Oracle("cosine")
    a, b = "a red kite", "the kite was red"
    assert cosine.similarity(None, b, a) == pytest.approx(cosine.embeddings.cosine(a, b))
    verdict = cosine.judge("What kite?", b, a)
    assert verdict.score == pytest.approx(cosine.similarity("What kite?", b, a)) and verdict.passed == (verdict.score >= 0.6)
    with pytest.raises(ValueError):
        Oracle("llm-judge")
