"""Property tests of the persona-centric transformations (P1 synonyms, P2 interference, P3 swap noise),
with the real spaCy pipeline, the real embedding model and WordNet."""

import random
import re
from collections import Counter
from itertools import groupby

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mortar.formats import load_dataset
from mortar.methods.persona_transforms import (NAMED, names_in, rewrite_story, swap_noise, synonymous_sentences,
                                               unrelated_passage)
from tests.conftest import SAMPLE

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
MODEL_TEST = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def nlp():
    from mortar.nlp import load_nlp

    return load_nlp().nlp


@pytest.fixture(scope="module")
def embeddings():
    from mortar.oracle import Embeddings

    return Embeddings()


@pytest.fixture(scope="module")
def stories():
    return Stories(seed.story for seed in load_dataset(SAMPLE).seeds)


class Stories(list):
    def __repr__(self):  # hypothesis reports the fixtures of a failing example: keep that report short
        return f"<{len(self)} sample stories>"


# --- P3: swap noise (no model) -------------------------------------------------------------------------------

# Letters (with runs of one repeated letter and non-ASCII ones), digits, punctuation, whitespace, and any character.
CHARACTERS = st.one_of(st.sampled_from(list("aaabcdeoOTZzßéñİ'’-.,!?0123456789 \n\t")), st.characters())


def words_with_spans(text):
    """Maximal runs of letters with their start index, found independently of the module under test."""
    spans, i = [], 0
    for is_letter, group in groupby(text, key=str.isalpha):
        run = "".join(group)
        if is_letter:
            spans.append((i, run))
        i += len(run)
    return spans


def is_one_adjacent_swap(before, after):
    if Counter(before) != Counter(after):
        return False
    changed = [k for k in range(len(before)) if before[k] != after[k]]
    if not changed:
        return len(set(before)) == 1  # only a word of one repeated letter may look unchanged
    return (len(changed) == 2 and changed[1] == changed[0] + 1
            and after[changed[0]] == before[changed[1]] and after[changed[1]] == before[changed[0]])


@settings(max_examples=200, deadline=None)
@given(text=st.text(CHARACTERS, max_size=80), seed=SEEDS, data=st.data())
def test_swap_noise_swaps_one_adjacent_pair_per_unprotected_word(text, seed, data):
    words = words_with_spans(text)
    protected = frozenset(data.draw(st.sets(st.sampled_from([w for _, w in words])))) if words else frozenset()
    out = swap_noise(text, random.Random(seed), protected)

    assert len(out) == len(text)
    # every non-letter character stays where it was, so the words sit at the same places
    assert [(i, ch) for i, ch in enumerate(out) if not ch.isalpha()] == \
           [(i, ch) for i, ch in enumerate(text) if not ch.isalpha()]
    for start, word in words:
        noisy = out[start:start + len(word)]
        if len(word) < 2 or word in protected:
            assert noisy == word
        else:
            assert is_one_adjacent_swap(word, noisy), (word, noisy)
    assert swap_noise(text, random.Random(seed), protected) == out


def test_swap_noise_examples():
    rng = random.Random(3)
    assert swap_noise("a I 42 -- !", rng) == "a I 42 -- !"
    assert swap_noise("aa", rng) == "aa"
    assert swap_noise("ab", rng) == "ba"
    out = swap_noise("Otto met otto.", random.Random(0), frozenset({"Otto"}))
    assert out.startswith("Otto ") and out[9:13] != "otto" and out.endswith(".")  # protection is case-sensitive


def test_names_in_are_the_words_of_entities(nlp):
    doc = nlp("Nina Okafor met Rosa Delgado in New York on Tuesday.")
    names = names_in(doc)
    assert {"Nina", "Okafor", "Rosa", "Delgado"} <= names
    assert "met" not in names and "in" not in names
    noisy = swap_noise(doc.text, random.Random(1), names)
    assert "Nina Okafor" in noisy and "Rosa Delgado" in noisy and "met" not in noisy


# --- P1: synonymous sentences ---------------------------------------------------------------------------------

def kept_tokens(sentence_doc_tokens):
    """Texts of the tokens P1 must never touch: those inside a named entity and numbers."""
    return [t.text for t in sentence_doc_tokens if t.ent_type_ or t.like_num]


def appear_in_order(pieces, text):
    cursor = 0
    for piece in pieces:
        # whole words only where the piece has a word character at its edge ("-" of "forty-two" has none)
        before = r"(?<!\w)" if piece[:1].isalnum() else ""
        after = r"(?!\w)" if piece[-1:].isalnum() else ""
        found = re.compile(before + re.escape(piece) + after).search(text, cursor)
        if not found:
            return False
        cursor = found.end()
    return True


@MODEL_TEST
@given(story_index=st.sampled_from([0, 1, 2]), seed=SEEDS)
def test_synonymous_sentences_keep_names_numbers_and_meaning(nlp, embeddings, stories, story_index, seed):
    story = stories[story_index]
    pairs = synonymous_sentences(story, random.Random(seed), nlp, embeddings)

    assert pairs == synonymous_sentences(story, random.Random(seed), nlp, embeddings)
    assert rewrite_story(story, [(s, s) for s, _ in pairs]) == story
    doc, cursor = nlp(story), 0
    for original, rewritten in pairs:
        start = story.index(original, cursor)
        cursor = start + len(original)
        tokens = [t for t in doc if start <= t.idx < cursor]
        assert appear_in_order(kept_tokens(tokens), rewritten), (original, rewritten)
        if rewritten != original:
            assert embeddings.cosine(original, rewritten) >= 0.85


def test_synonymous_sentences_rewrite_some_sentences_and_rebuild_the_story(nlp, embeddings, stories):
    story = stories[1]
    pairs = synonymous_sentences(story, random.Random(7), nlp, embeddings)
    changed = [(s, r) for s, r in pairs if s != r]
    assert changed, "no sentence rewritten at all"
    rebuilt = rewrite_story(story, pairs)
    assert story.count("\n\n") == rebuilt.count("\n\n")  # paragraph breaks survive
    assert all(r in rebuilt for _, r in changed)
    # an impossible threshold keeps every original sentence
    assert all(s == r for s, r in synonymous_sentences(story, random.Random(7), nlp, embeddings, threshold=1.01))


# --- P2: interference ------------------------------------------------------------------------------------------

@MODEL_TEST
@given(story_index=st.integers(0, 29), seed=SEEDS)
def test_unrelated_passage_shares_no_entity_and_is_dissimilar(nlp, embeddings, stories, story_index, seed):
    story = stories[story_index % len(stories)]
    candidates = [s for s in stories if s != story]
    passage = unrelated_passage(story, candidates, random.Random(seed), nlp, embeddings)

    assert passage is not None
    assert passage == unrelated_passage(story, candidates, random.Random(seed), nlp, embeddings)
    assert any(c.startswith(passage) for c in candidates)
    names = {e.text.lower() for e in nlp(story).ents if e.label_ in NAMED}  # names, not numbers or dates
    assert not names & {e.text.lower() for e in nlp(passage).ents if e.label_ in NAMED}
    assert embeddings.cosine(passage, story) < 0.3


def test_unrelated_passage_is_none_when_every_candidate_shares_an_entity(nlp, embeddings, stories):
    story = stories[0]
    named = next(s for s in nlp(story).sents if any(e.label_ == "PERSON" for e in s.ents)).text.strip()
    candidates = [named + " " + other for other in stories[1:6]]
    story_entities = {e.text.lower() for e in nlp(story).ents if e.label_ in NAMED}
    for candidate in candidates:  # the premise: each candidate's passage names someone of the story
        passage_doc = nlp(" ".join(s.text.strip() for s in list(nlp(candidate).sents)[:3]))
        assert story_entities & {e.text.lower() for e in passage_doc.ents}
    assert unrelated_passage(story, candidates, random.Random(0), nlp, embeddings, max_similarity=1.1) is None
    assert unrelated_passage(story, [], random.Random(0), nlp, embeddings) is None
