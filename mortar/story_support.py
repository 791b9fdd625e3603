"""Does the story alone answer a question, without the conversation's context?

MR2 expects the answer to a question that lost its context to change, and MR4 expects it to differ from the
answers it gets in context. A SUT is grounded on the story, though: when the question's own words lead to one
place in the story and that place holds the reference answer ("Where did he go after school?" with one
sentence about going somewhere after school), answering right without the context is reading, not a bug.
When the question's words lead nowhere in particular ("What was his name?" in a story of three men), a right
answer is a guess at the lost referent, and the relations stand.

Judge-free and deterministic: spaCy lemmas of the question's content words against the story's sentences.
"""

from __future__ import annotations

from functools import lru_cache

from mortar.answers import is_unknown, same_word
from mortar.nlp import load_nlp, parsed_story

_WH = {"what", "who", "whom", "whose", "which", "where", "when", "why", "how"}
_CONTENT_POS = {"NOUN", "PROPN", "VERB", "ADJ", "ADV"}
_LIGHT = {"be", "have", "do"}  # verbs that say nothing of where to look


def _nlp():

    return load_nlp().nlp


def _content(doc) -> set[str]:
    # by part of speech, not spaCy's stop list, which holds content words such as 'name', 'part' or 'front'
    return {t.lemma_.lower() for t in doc
            if t.like_num or (t.is_alpha and t.pos_ in _CONTENT_POS and t.lemma_.lower() not in _LIGHT
                              and t.lower_ not in _WH and not (t.pos_ == "ADV" and t.is_stop))}


@lru_cache(maxsize=64)
def _sentences(story: str) -> tuple[frozenset[str], ...]:
    """Each sentence of the story as the lemmas and lower-cased forms of its words."""
    doc = parsed_story(story)
    return tuple(frozenset({t.lemma_.lower() for t in s if t.is_alpha or t.like_num}
                           | {t.lower_ for t in s if t.is_alpha or t.like_num}) for s in doc.sents)


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    return frozenset(_content(_nlp()(text)))


def _holds(sentence: frozenset[str], words) -> bool:
    return all(any(same_word(w, x) for x in sentence) for w in words)


def story_answers(question: str, reference: str, story: str) -> bool:
    """True when the question's content words pick out the story's sentences unambiguously and every one of
    those holds the reference's content words. A yes/no or "unknown" reference is never located this way."""
    if not question or not reference or is_unknown(reference):
        return False
    asked, answer = _words(question), _words(reference)
    if not asked or not answer or answer <= asked:  # nothing to find, or the answer only echoes the question
        return False
    scores = [sum(1 for w in asked if any(same_word(w, x) for x in sentence)) for sentence in _sentences(story)]
    best = max(scores, default=0)
    if best == 0 or 2 * best < len(asked):  # the question's words lead to no sentence in particular
        return False
    picked = [s for s, score in zip(_sentences(story), scores) if score == best]
    return all(_holds(s, answer - asked) for s in picked)


def pointed_sentences(question: str, story: str) -> tuple[int, ...]:
    """The story's sentences the question's content words lead to (indices; none when they lead nowhere in
    particular), by the rule ``story_answers`` uses."""
    asked = _words(question)
    if not asked or not story:
        return ()
    scores = [sum(1 for w in asked if any(same_word(w, x) for x in sentence)) for sentence in _sentences(story)]
    best = max(scores, default=0)
    if best == 0 or 2 * best < len(asked):
        return ()
    return tuple(i for i, score in enumerate(scores) if score == best)


def sentence_words(story: str, i: int) -> frozenset[str]:
    """The lemmas and lower-cased forms of the story's sentence ``i``."""
    return _sentences(story)[i]
