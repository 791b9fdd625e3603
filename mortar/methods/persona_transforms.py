"""The three transformations of the persona-centric metamorphic relations, adapted to story-grounded dialogues.

The paper (shared/papers/persona-mr.txt) tests a dialogue model on the grounding it is given, a persona
there and the story here, under three relations whose answers must not change:

- P1 synonymous sentences: the grounding rewritten sentence by sentence with synonyms;
- P2 interference: an unrelated grounding (the partner's persona there, a passage of another story here);
- P3 character-level noise: Aspillaga et al.'s swap noise, one pair of adjacent characters swapped per word.

Pure functions of their inputs plus an explicit ``random.Random``; the spaCy pipeline and the
embeddings (``mortar.oracle.Embeddings``) are passed in, so each transformation can be tested alone.
"""

from __future__ import annotations

import random
from itertools import groupby

from mortar.wordnet import synonyms

CONTENT = ("NOUN", "VERB", "ADJ", "ADV")
NAME_LABELS = ("PERSON", "ORG", "GPE")
# A reply depends on a persona sentence when their cosine is at least the floor and beats the partner's persona by
# the margin (set on tests/data/persona_dependence_dev.jsonl: benchmarks/persona_dependence.py)
PERSONA_FACT_FLOOR, PERSONA_FACT_MARGIN = 0.2, 0.06
# Named entities that are names (numbers, dates and quantities are not): what the noise may keep as written
# and what an interfering passage may not share with the story.
NAMED = ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE")


def _runs(text: str) -> list[tuple[bool, str]]:
    """The text cut into maximal runs of letters and of everything else: (is a word, run)."""
    return [(is_word, "".join(chars)) for is_word, chars in groupby(text, key=str.isalpha)]


def _swap_one_pair(word: str, rng: random.Random) -> str:
    # A swap of two equal letters would leave the word unchanged, so prefer a pair that differs.
    visible = [k for k in range(len(word) - 1) if word[k] != word[k + 1]]
    k = rng.choice(visible) if visible else rng.randrange(len(word) - 1)
    return word[:k] + word[k + 1] + word[k] + word[k + 2:]


def swap_noise(text: str, rng: random.Random, protected: frozenset[str] = frozenset()) -> str:
    """The paper's character-level swap noise: in every word of two or more characters, one random pair of
    adjacent characters is swapped. A word is a maximal run of letters, so digits, punctuation and spaces
    stay in place; words in ``protected`` (case-sensitive, as written) are left as they are."""
    return "".join(_swap_one_pair(run, rng) if is_word and len(run) >= 2 and run not in protected else run
                   for is_word, run in _runs(text))


def names_in(doc) -> frozenset[str]:
    """The words (letter runs, as written) of a spaCy Doc's names (people, places, organisations, …; not
    numbers or dates): what swap_noise protects when names are kept out of the noise."""
    return frozenset(run for ent in doc.ents if ent.label_ in NAMED for is_word, run in _runs(ent.text) if is_word)


def _eligible(token) -> bool:
    """A content word P1 may replace: not part of a name, not a number, not a stop word, in its base form
    (WordNet gives base forms: 'liked' would lose its tense), with a synonym of its most frequent sense."""
    return (token.pos_ in CONTENT and token.is_alpha and not token.ent_type_ and not token.like_num
            and not token.is_stop and token.text.lower() == token.lemma_.lower() and bool(_synonyms_of(token)))


def _synonyms_of(token) -> tuple[str, ...]:
    # Synonyms with digits would add numbers the story never stated.
    # Only the most frequent sense: other senses give 'undecomposed friend' for 'best friend'.
    return tuple(s for s in synonyms(token.lemma_, token.pos_, senses=1)
                 if s.lower() != token.text.lower() and not any(ch.isdigit() for ch in s))


def _as_cased(synonym: str, word: str) -> str:
    return synonym[:1].upper() + synonym[1:] if word[:1].isupper() else synonym


def _rewrite_sentence(sent, rng: random.Random, rate: float) -> str:
    eligible = [i for i, token in enumerate(sent) if _eligible(token)]
    chosen = set(rng.sample(eligible, max(1, round(rate * len(eligible))))) if eligible else set()
    words = [_as_cased(rng.choice(_synonyms_of(token)), token.text) if i in chosen else token.text
             for i, token in enumerate(sent)]
    return "".join(word + token.whitespace_ for word, token in zip(words, sent)).strip()


def synonymous_sentences(story: str, rng: random.Random, nlp, embeddings, threshold: float = 0.85,
                         rate: float = 0.3) -> list[tuple[str, str]]:
    """P1's rewrite of a story, sentence by sentence: (original sentence, rewritten sentence) for every
    non-blank sentence of spaCy's split, in order. A share ``rate`` (at least one) of a sentence's eligible
    words is replaced by a WordNet synonym of the same part of speech; the rewrite is kept only when its
    embedding cosine to the original is at least ``threshold``, else the pair is (s, s)."""
    sentences = [sent for sent in nlp(story).sents if sent.text.strip()]
    originals = [story[sent.start_char:sent.end_char].strip() for sent in sentences]
    rewrites = [_rewrite_sentence(sent, rng, rate) for sent in sentences]
    embeddings.add(originals + rewrites)  # one batch instead of a model call per sentence
    # The paper's synonymous sentence must keep the meaning: a rewrite that drifts is undone.
    return [(s, r) if r != s and embeddings.cosine(s, r) >= threshold else (s, s)
            for s, r in zip(originals, rewrites)]


def rewrite_story(story: str, pairs: list[tuple[str, str]]) -> str:
    """The story with each original sentence replaced by its rewrite (in order, separators kept)."""
    parts, cursor = [], 0
    for original, rewritten in pairs:
        start = story.find(original, cursor)
        if start < 0:
            raise ValueError(f"sentence not found in the story after character {cursor}: {original[:60]!r}")
        parts += [story[cursor:start], rewritten]
        cursor = start + len(original)
    return "".join(parts) + story[cursor:]


def _entity_texts(doc) -> set[str]:
    return {ent.text.lower() for ent in doc.ents if ent.label_ in NAMED}


def _name_words(doc, stop_words) -> set[str]:
    """Multi-letter words of people, organisations and places ("Okafor" of "Nina Okafor"): a passage that
    mentions one of them may be about the same thing even when its entity reads differently."""
    return {run.lower() for ent in doc.ents if ent.label_ in NAME_LABELS
            for is_word, run in _runs(ent.text) if is_word and len(run) >= 2 and run.lower() not in stop_words}


def _opening(text: str, nlp, sentences: int) -> str:
    opening = [sent for sent in nlp(text).sents if sent.text.strip()][:sentences]
    return text[opening[0].start_char:opening[-1].end_char].strip() if opening else ""


def unrelated_passage(story: str, candidates: list[str], rng: random.Random, nlp, embeddings,
                      max_similarity: float = 0.3, sentences: int = 3) -> str | None:
    """P2's interfering grounding, as the paper swaps in the partner's persona: the first ``sentences``
    sentences of a candidate story (other seeds) that is unrelated to ``story``: no named entity in common
    (texts compared case-insensitively, and no common name word of a person, organisation or place), and
    an embedding cosine with the story below ``max_similarity``. Candidates are tried in an order drawn
    from ``rng``; None when none qualifies."""
    stop_words = nlp.Defaults.stop_words
    story_doc = nlp(story)
    story_entities, story_names = _entity_texts(story_doc), _name_words(story_doc, stop_words)
    order = list(range(len(candidates)))
    rng.shuffle(order)
    for k in order:
        passage = _opening(candidates[k], nlp, sentences)
        if not passage:
            continue
        # The passage is parsed alone, as it will be read beside the story.
        doc = nlp(passage)
        if _entity_texts(doc) & story_entities or _name_words(doc, stop_words) & story_names:
            continue
        if embeddings.cosine(passage, story) < max_similarity:
            return passage
    return None


def persona_fact(reply: str, persona: tuple[str, ...], partner: tuple[str, ...], embeddings,
                 floor: float = PERSONA_FACT_FLOOR, margin: float = PERSONA_FACT_MARGIN) -> int | None:
    """Whether a reply depends on a fact of the speaker's persona: the index of the persona sentence it is closest
    to (embedding cosine), when that is at least ``floor`` and closer by ``margin`` than any sentence of the
    partner's persona; else None. The comparison with the partner's persona is what decides: small talk is about
    as far from both, a reply that states (or contradicts) a persona fact is nearer its own persona, and one that
    states a fact both personas share is as near the partner's. With the partner's persona swapped in (P2), a
    reply that depends on the persona should change; any other reply should stay."""
    if not persona or not reply.strip():
        return None
    embeddings.add([reply, *persona, *partner])
    own = [embeddings.cosine(reply, sentence) for sentence in persona]
    theirs = max((embeddings.cosine(reply, sentence) for sentence in partner), default=0.0)
    best = max(range(len(own)), key=own.__getitem__)
    return best if own[best] >= floor and own[best] - theirs >= margin else None
