"""The story alone answers a question (MR2/MR4 reconsidered): real spaCy, hand-written stories."""

import pytest

from mortar.story_support import story_answers

STORY = ("Tom Reed was a boy of ten who lived by the sea with his father and his dog Max. After school, Tom went to "
         "the harbour to watch the boats. His father worked at the fish market. One day a storm came and the boats "
         "stayed in. Tom found a small crab under a rock. He named it Pinch and took it home in a bucket.")


@pytest.mark.parametrize("question, reference", [
    ("Where did he go after school?", "to the harbour"),
    ("Where did his father work?", "the fish market"),
    ("What did he find under a rock?", "a small crab"),
    ("What did he name it?", "Pinch"),
])
def test_a_question_whose_words_lead_to_the_answer_is_answered_by_the_story(question, reference):
    assert story_answers(question, reference, STORY)


@pytest.mark.parametrize("question, reference", [
    ("What was his name?", "Tom Reed"),  # 'name' leads to Pinch's sentence, not to Tom
    ("Did he take it home?", "yes"),  # a yes/no answer is never located
    ("Who?", "Tom"),  # no words to look with
    ("What did he do?", "watched the boats"),  # light verbs lead nowhere
    ("Where did he go after school?", "to the beach"),  # the sentence it leads to says otherwise
    ("What did he find?", "unknown"),
])
def test_a_question_that_needs_its_lost_context_is_not(question, reference):
    assert not story_answers(question, reference, STORY)


def test_two_sentences_the_question_leads_to_must_both_hold_the_answer():
    story = "Ann bought a kite at the fair. Later Ann bought a hat at the shop. She flew the kite."
    assert not story_answers("What did she buy?", "a kite", story)
    assert story_answers("What did she buy at the fair?", "a kite", story)
