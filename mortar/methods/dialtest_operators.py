"""DialTest's sentence transformation operators, on one question of a dialogue.

- SR, synonym replacement: one noun, verb or adjective (spaCy's part of speech) replaced by a WordNet
  synonym of the same part of speech from its most frequent sense, inflected like the word it replaces.
  Named entities, numbers, wh-words, auxiliaries and light verbs are never touched.
- BT, back translation: into Chinese, French or Spanish and back, by the configured chat endpoint (the
  paper used a translation API; there is no offline translation model here).
- WI, word insertion: 1–3 words inserted at a random gap. The paper fills a masked slot with BERT; no
  masked language model is available offline, so the local causal LM (SmolLM2) proposes the next word at
  the gap, and its candidates are ranked by the likelihood of the whole question with the word in place,
  which stands in for the masked LM's view of the right-hand context. Wh-words, negations, capitalised
  words (entities), numbers and words WordNet does not know are never inserted.

With the mutation gate on (``mortar.mutation_gate``), SR draws its synonym from the word's sense in context
(a simplified Lesk over WordNet) instead of the most frequent sense, and WI inserts the emphasis adverb ("actually",
"really") the LM finds likeliest before the main verb of a wh-question (``mortar.mutation_gate.emphasis_gap``): an
inserted adjective or noun narrows what is asked ("his older brother").

Every operator returns the question unchanged when it has nothing to do; the method's gate decides what is
kept.
"""

from __future__ import annotations

import logging
import random
from functools import lru_cache

from mortar.mutation_gate import NEGATIONS, NEUTRAL_WORDS, WH_TAGS, WH_WORDS, emphasis_gap, inflect, swap_options
from mortar.wordnet import POS_FILES, synonyms
from mortar.wordnet import wordnet_dir
from mortar.sut.local import PRESETS, load_model
from mortar.chat import ChatClient, ChatConfig

log = logging.getLogger(__name__)

LIGHT_VERBS = {"be", "have", "do", "get", "make", "go", "say", "take", "let", "come"}
SR_POS = {"NOUN": {"NN", "NNS"}, "VERB": {"VB", "VBP", "VBZ"}, "ADJ": {"JJ"}}
LANGUAGES = ("Chinese", "French", "Spanish")  # the paper's intermediate languages
GAP_BEFORE = {"NOUN", "ADJ", "VERB", "PROPN"}  # words are inserted before these (modifiers fit there)
INSERT_CANDIDATES = 12  # next-word proposals of the LM ranked by the whole question's likelihood
INSERT_CHOICE = 3  # one of the best few is drawn, so different run seeds insert different words
# An inserted word may cost the question at most this much log-likelihood under the LM (nats). Set on the
# sample's questions: "actually", "young", "last" cost 4–6.3; "more older", "let there go", "first ever
# lost" cost 7–16.
WI_MAX_COST = 6.5


def protected(token) -> bool:
    """A token SR must never change: part of a named entity, a number, a wh-word."""
    return bool(token.ent_type_) or token.like_num or token.pos_ == "NUM" or token.tag_ in WH_TAGS \
        or token.lower_ in WH_WORDS


def _replacement(token) -> list[str]:
    tags = SR_POS.get(token.pos_)
    if not tags or token.tag_ not in tags or protected(token) or not token.is_alpha \
            or token.lemma_.lower() in LIGHT_VERBS:
        return []
    if token.tag_ in ("VB", "VBP", "JJ", "NN") and token.lower_ != token.lemma_.lower():
        return []  # an irregular form the lemma does not give back
    found = []
    for word in synonyms(token.lemma_.lower(), token.pos_, senses=1):
        if not word.replace(" ", "").replace("-", "").isalpha() or word.lower() == token.lower_:
            continue
        form = inflect(word, token.tag_)
        if form:
            found.append(form)
    return found


def synonym_replacement(doc, rng: random.Random, ranking: list[int] | None = None, story: str | None = None) -> str:
    """SR on a parsed question: one eligible word replaced by a synonym (the question itself when none is);
    given the ``story`` (the gate on), a synonym of the word's sense in context."""
    choice = choose_replacement(doc, rng, ranking, story)
    if choice is None:
        return doc.text
    i, word = choice
    return "".join((word if k == i else t.text) + t.whitespace_ for k, t in enumerate(doc)).strip()


def choose_replacement(doc, rng: random.Random, ranking: list[int] | None = None, story: str | None = None
                       ) -> tuple[int, str] | None:
    """Which token SR replaces, and by what (None when no token is eligible): a random eligible one, or with a
    ranking of the tokens (most sensitive first) the first eligible one. Given the ``story`` (the gate on), the
    synonyms come from each word's sense in context (``mortar.mutation_gate.swap_options``)."""
    if story is None:
        options = [(i, _replacement(t)) for i, t in enumerate(doc)]
    else:
        options = [(i, list(swap_options(doc, i, story))) for i in range(len(doc))]
    options = [(i, words) for i, words in options if words]
    if not options:
        return None
    if ranking is None:
        i, words = rng.choice(options)
    else:
        first = {t: r for r, t in enumerate(ranking)}
        i, words = min(options, key=lambda o: first.get(o[0], len(first)))
    word = rng.choice(words)
    return i, word[:1].upper() + word[1:] if doc[i].text[:1].isupper() else word


# -- word insertion ---------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _modifiers() -> frozenset[str]:
    """Adjectives and adverbs WordNet knows: what an insertion before a content word keeps grammatical."""

    words = set()
    for pos in (POS_FILES["ADJ"], POS_FILES["ADV"]):
        with open(wordnet_dir() / f"index.{pos}", encoding="utf-8") as f:
            words.update(line.split(" ", 1)[0] for line in f if not line.startswith(" "))
    return frozenset(words)


def insertable(word: str) -> bool:
    return word.isalpha() and word.islower() and len(word) > 1 and word not in WH_WORDS \
        and word not in NEGATIONS and word in _modifiers()


class WordInserter:
    """WI with a local causal LM (its tokenizer and model from ``mortar.sut.local``)."""

    def __init__(self, model, tokenizer, neutral: bool = False):
        self.model, self.tokenizer = model, tokenizer
        self.neutral = neutral  # the gate on: one emphasis adverb (NEUTRAL_WORDS) before the main verb
        self._words = None  # token id → the word it writes after a space, for single-token words

    @classmethod
    def local(cls, neutral: bool = False) -> "WordInserter":

        return cls(*load_model(PRESETS["smollm2"]()), neutral=neutral)

    def _vocabulary(self) -> dict[int, str]:
        if self._words is None:
            words = {}
            for token_id in range(len(self.tokenizer)):
                text = self.tokenizer.decode([token_id])
                if text.startswith(" ") and insertable(text[1:]) and (not self.neutral or text[1:] in NEUTRAL_WORDS):
                    words[token_id] = text[1:]
            self._words = words
        return self._words

    def insert(self, doc, rng: random.Random, count: int | None = None, ranking: list[int] | None = None) -> str:
        """1–3 words (``count``, else drawn, one word most often) inserted before a content word of the
        question that is not inside a named entity or right after the wh-word: a random one, or with a ranking
        of the tokens (most sensitive first) the first such word."""
        entity_inside = {t.i for e in doc.ents for t in e[1:]}  # a gap before these splits an entity
        if self.neutral:
            gaps = [g for g in [emphasis_gap(doc)] if g is not None]
        else:
            gaps = [t.i for t in doc if t.i > 0 and t.pos_ in GAP_BEFORE and t.i not in entity_inside
                    and not protected(doc[t.i - 1]) | (t.i == 1)]
        if not gaps:
            return doc.text
        if ranking is None:
            gap = rng.choice(gaps)
        else:
            first = {t: r for r, t in enumerate(ranking)}
            gap = min(gaps, key=lambda g: first.get(g, len(first)))
        left = doc[:gap].text
        right = doc[gap:].text
        inserted: list[str] = []
        for _ in range(count or (1 if self.neutral else rng.choices((1, 2, 3), weights=(6, 3, 1))[0])):
            word = self._next_word(f"{left} {' '.join(inserted)}".rstrip(), right, rng,
                                   {t.lower_ for t in doc} | set(inserted))
            if word is None:
                break  # no word fits here well enough: fewer words are inserted
            inserted.append(word)
        return f"{left} {' '.join(inserted)} {right}" if inserted else doc.text

    def _next_word(self, left: str, right: str, rng: random.Random, used: set[str]) -> str | None:
        """One of the few words the LM finds likeliest in the whole question at this place, provided the
        question loses at most WI_MAX_COST nats of log-likelihood by it."""
        import torch

        vocabulary = self._vocabulary()
        ids = self.tokenizer(left).input_ids
        with torch.inference_mode():
            out = self.model(input_ids=torch.tensor([ids]), use_cache=True)
            logits = out.logits[0, -1]
            proposals = []
            for token_id in torch.argsort(logits, descending=True)[:2000].tolist():
                if token_id in vocabulary and vocabulary[token_id] not in used:
                    proposals.append(vocabulary[token_id])
                    if len(proposals) == INSERT_CANDIDATES:
                        break
            if not proposals:
                return None
            # the question without and with each word: only what follows ``left`` differs, so only that is scored,
            # on the keys and values of ``left`` computed once
            suffixes = [self.tokenizer(f"{left} {text}").input_ids[len(ids):]
                        for text in [right] + [f"{w} {right}" for w in proposals]]
            before, *scores = self._continuations(out.cache, torch.log_softmax(logits.float(), -1), suffixes)
        best = sorted(range(len(proposals)), key=lambda i: -scores[i])[:INSERT_CHOICE]
        best = [i for i in best if before - scores[i] <= WI_MAX_COST]
        return proposals[rng.choice(best)] if best else None

    def _continuations(self, cache, first, suffixes: list[list[int]]) -> list[float]:
        """The log-likelihood of each token sequence as the continuation of the cached text (``first``: the
        next-token log-probabilities after it)."""
        import torch

        cache.batch_repeat_interleave(len(suffixes))
        width = max(len(x) for x in suffixes)
        # right padding: a real token never attends to the padding after it
        batch = torch.tensor([x + [x[-1]] * (width - len(x)) for x in suffixes])
        logprobs = torch.log_softmax(self.model(input_ids=batch, cache=cache).logits.float(), dim=-1)
        return [first[x[0]].item() + sum(logprobs[i, t - 1, x[t]].item() for t in range(1, len(x)))
                for i, x in enumerate(suffixes)]


# -- back translation -------------------------------------------------------------------------------

class BackTranslator:
    """BT through a chat endpoint (``mortar.chat``); translations are kept for the process, so a question
    translated once is not sent again."""

    def __init__(self, client):
        self.client = client
        self._done: dict[tuple[str, str], str] = {}

    @classmethod
    def from_env(cls) -> "BackTranslator":
        """Raises ChatConfigError (one line saying what to set) when no endpoint is configured."""

        return cls(ChatClient(ChatConfig.from_env(json_mode=False)))

    @property
    def model(self) -> str:
        return self.client.model

    def translate(self, text: str, language: str) -> str:
        key = (text, language)
        if key not in self._done:
            reply = self.client.complete([
                {"role": "system", "content": f"You are a translator. Translate the user's text into {language}. "
                                              "Reply with the translation only, nothing else."},
                {"role": "user", "content": text}], temperature=0.0)
            self._done[key] = reply.strip().strip('"').strip()
        return self._done[key]

    def back_translate(self, question: str, rng: random.Random) -> str:
        language = rng.choice(LANGUAGES)
        return self.translate(self.translate(question, language), "English")

    def close(self) -> None:
        self.client.close()
