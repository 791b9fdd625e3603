"""The validity gate for word mutations: which mutated questions still ask what the original asked.

METAL (SYN, ADD, TYPO, LEET), DialTest (SR, WI, BT) and targeted mutation keep a mutated question only when
every constraint that applies to its operator accepts it. Each constraint, in TextAttack's manner, is a small
class with one method, ``check(reading) -> bool``, where a reading is the mutation with both questions parsed
by spaCy and their tokens aligned; the gate reports the first constraint that rejected each mutation.

- ``unchanged``: the mutation changed nothing.
- ``protected word``: names and other entities, numbers, wh-words, negations and the head noun of the
  question's focus ("which colour", "how many dogs", "what was the name of …") are all still there.
- ``part of speech``: a swap replaces one word by a word of the same part of speech; an insertion adds an
  adverb; the words around keep their parts of speech (a mutation that re-parses the question changed it;
  proper and common nouns, auxiliaries and verbs count as one).
- ``word sense``: a swapped word is replaced, in its own form, by a lemma of its sense in context, chosen by a
  simplified Lesk (the overlap of each WordNet sense's gloss, examples, words and hypernyms with the question's
  words and the story sentences the question points to; the more frequent sense on a tie). With no word in
  common, the most frequent sense is taken only when it covers 60% of the word's tagged uses in WordNet's
  concordance (``cntlist.rev``); a sense with words in common but under 10% of the uses is not trusted either:
  such a word is not swapped. The new word must read that way on its own (the sense is its most frequent, at
  least half its tagged uses) and be common (``wordfreq``: a Zipf frequency of 3, once per million words).
  Light verbs ("do", "make", "get" …) and the words of a phrasal verb, compound noun or hyphenated word are never
  swapped, nor is a word after "a" or "an" for one that would need the other article.
- ``inserted word``: an insertion adds only an emphasis adverb ("actually", "really"), right before the main
  verb of a wh-question without negation (``emphasis_gap``): an inserted adjective or noun restricts the
  referent ("his older brother"), an adverb before an adjective changes it ("precisely red"), an adverb of
  manner says how the thing was done ("precisely cool", "exactly repeat"), and under a negation it changes
  what is denied ("what couldn't he truly do").
- ``word in context``: a swapped-in word reads in the new question as the old word read in the original: the
  cosine of the two words' contextual vectors (MiniLM's fourth layer), less ``WORSE_FIT_COST`` per nat of the LM's
  misfit (below), is at least ``SAME_WORD_IN_CONTEXT``.
- ``story sentences``: the question does not lead to other story sentences than the original led to
  (``mortar.story_support.pointed_sentences``).
- ``cosine``: the sentence-embedding cosine to the original stays at the method's bar (the paper's filter).
- ``language model``: the local LM (SmolLM2) finds the new question at most ``LM_MAX_DROP`` nats less likely
  than the original, scored in batches: an insertion 20; a swap 3 once the new word's rarity is taken off
  (``rarity_cost``), so that what is left measures how badly the word fits the question.

Which apply: word swaps (SYN, SR) and insertions (ADD, WI) get all of them (``word sense`` and ``word in context``
only the swaps, ``inserted word`` only the insertions). Typos and leet (TYPO, LEET) are
character noise meant to be read through: the words stay in place but are misspelt, so part of speech, sense,
the language model and the story's words would reject every one of them; only ``unchanged`` and ``cosine``
apply. Back translation (BT) rewrites the whole question: ``protected word``, ``story sentences`` and
``cosine`` apply. With the gate off, only ``unchanged`` and ``cosine`` apply to every operator: the paper's
cosine-only filter.
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from mortar.nlp import stop_words
from mortar.story_support import pointed_sentences, sentence_words
from mortar.vocab import ADD, BT, LEET, SR, SYN, TYPO, WI
from mortar.wordnet import Sense, irregular_forms, pos_share, sense_rank, sense_share, senses, verb_frames

GATE_ON, GATE_OFF = "on", "off"
GATE_CHOICES = (GATE_ON, GATE_OFF)
SWAPS = frozenset({SYN, SR})
INSERTIONS = frozenset({ADD, WI})
NOISE = frozenset({TYPO, LEET})
WORD_OPERATORS = SWAPS | INSERTIONS
ALL_OPERATORS = WORD_OPERATORS | NOISE | {BT}

WH_TAGS = {"WDT", "WP", "WP$", "WRB"}
WH_WORDS = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "whether", "whatever"}
NEGATIONS = {"not", "no", "never", "nothing", "nobody", "none", "neither", "nor", "nowhere", "without", "cannot",
             "n't", "hardly", "barely", "scarcely"}
LIGHT_VERBS = {"be", "have", "do", "get", "make", "go", "say", "take", "let", "come", "give", "put", "keep", "set"}
SWAPPABLE = {"NOUN", "VERB", "ADJ", "ADV"}
# Adverbs that add emphasis without narrowing what is asked: the only words an insertion may add
NEUTRAL_WORDS = ("actually", "really")
DOMINANT = 0.6  # with no word in common with any gloss, the most frequent sense counts when it covers this share
ONE_WORD_SHARE = 0.5  # … and with a single word in common, below this share ('move' as travel, 'hold' as keep)
MIN_SHARE = 0.1  # a sense chosen by the words in common is still too rare below this share of the word's uses
SENSE_RANK = 1  # the in-context sense must be one of the new word's own SENSE_RANK most frequent senses
POS_SHARE = 0.25  # … and be this part of speech in at least this share of its tagged uses
NEW_WORD_SHARE = 0.5  # … and cover at least this share of the new word's tagged uses
COMMON_ZIPF = 3.0  # a swap's new word is used at least once per million words
# The new question may be at most this many nats less likely than the original under the LM (set on the dev sets).
# For a swap, the part of the drop that the new word's rarity explains is taken off first (ln 10 nats a Zipf
# step): a word of the same sense then costs -6–3 nats, a wrong-sense one ("tribunal" for a court one leaves,
# "nutrient" for food, "detect" for find) 4–14. An added adverb costs 4–20 wherever it stands, so for
# insertions the LM only stops garbled word order.
LM_MAX_DROP = {"swap": 3.0, "insertion": 20.0}
# set on the development swaps of dev–dev4 (SYN): with the LM's misfit read beside it, the bar keeps 39 of their 118
# at 39 valid (the cosine alone at 0.78: 37 at 36 valid)
SAME_WORD_IN_CONTEXT = 0.74
WORSE_FIT_COST = 0.03  # of contextual cosine, per nat the LM finds the new word a worse fit
POS_GROUP = {"PROPN": "NOUN", "AUX": "VERB"}  # spaCy's tags that a harmless change of word can swap between


@dataclass(frozen=True)
class Mutation:
    operator: str
    original: str
    mutated: str
    story: str = ""


@dataclass
class Reading:
    """A mutation with both questions parsed and aligned: ``edits`` are difflib's non-equal opcodes over the
    lower-cased tokens, (tag, i1, i2, j1, j2)."""

    mutation: Mutation
    before: object
    after: object
    edits: list[tuple[str, int, int, int, int]]
    same: list[tuple[int, int]]  # (i, j) of the tokens left as they were


def _stem(word: str) -> str:
    word = word.lower()
    word = word[:-1] if word.endswith("s") and len(word) > 3 else word
    return word[:5]


def _content_stems(words, stop) -> set[str]:
    return {_stem(w) for w in words if w.isalpha() and len(w) > 2 and w.lower() not in stop}


def focus_noun(doc) -> int | None:
    """The head noun of what the question asks for: the noun a wh-word determines ("which colour", "whose
    bicycle", "how many dogs") or the subject or attribute of a copular question ("what was the name of …")."""
    for t in doc:
        if t.lower_ in WH_WORDS or t.tag_ in WH_TAGS:
            if t.dep_ in ("det", "poss") and t.head.pos_ == "NOUN":
                return t.head.i
            if t.lower_ == "how" and t.head.lower_ in ("many", "much") and t.head.head.pos_ == "NOUN":
                return t.head.head.i
            break
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is not None and root.lemma_ == "be":
        for c in root.children:
            if c.dep_ in ("nsubj", "attr") and c.pos_ == "NOUN":
                return c.i
    return None


def protected_words(doc) -> Counter:
    """The lower-cased words of the question no mutation may change."""
    focus = focus_noun(doc)
    return Counter(t.lower_ for t in doc
                   if t.ent_type_ or t.pos_ in ("PROPN", "NUM") or t.like_num or t.tag_ in WH_TAGS
                   or t.lower_ in WH_WORDS or t.lower_ in NEGATIONS or t.i == focus)


def lesk_sense(doc, i: int, story: str = "") -> Sense | None:
    """The WordNet sense of token ``i`` in its question (and the story sentences the question points to)."""
    found = _lesk(doc, i, story)
    return found[0] if found else None


def sure_sense(doc, i: int, story: str = "") -> Sense | None:
    """The sense of token ``i`` when it can be trusted: Lesk found words in common with it and the sense is not
    a rare one (at least MIN_SHARE of the word's tagged uses; ONE_WORD_SHARE with one word in common), or, with
    nothing in common, the word's most frequent sense when it covers DOMINANT of its tagged uses (or is its only
    sense). None otherwise."""
    found = _lesk(doc, i, story)
    if found is None:
        return None
    sense, rank, score = found
    count = len(senses(doc[i].lemma_.lower(), doc[i].pos_))
    share = sense_share(doc[i].lemma_.lower(), doc[i].pos_, rank)
    if count == 1:
        return sense
    if score == 0:
        return sense if share is not None and share >= DOMINANT else None
    if score == 1:  # one word in common is thin evidence: the sense must also be the word's usual one
        return sense if share is None or share >= ONE_WORD_SHARE else None
    return sense if share is None or share >= MIN_SHARE else None


def _lesk(doc, i: int, story: str = "") -> tuple[Sense, int, int] | None:
    """(sense, its rank among the word's senses, its overlap with the context) by a simplified Lesk."""
    token = doc[i]
    options = senses(token.lemma_.lower(), token.pos_)
    if not options:
        return None
    stop = stop_words()
    words = [t.lemma_ for t in doc if t.i != i and t.pos_ in SWAPPABLE | {"PROPN"}]
    if story:
        for k in pointed_sentences(doc.text, story):
            words += list(sentence_words(story, k))
    context = _content_stems(words, stop) - {_stem(token.lemma_)}
    best, best_score = 0, -1
    for rank, sense in enumerate(options):  # most frequent first: a tie keeps the more frequent sense
        signature = _content_stems(sense.gloss.replace('"', " ").replace(";", " ").split(), stop)
        signature |= _content_stems((w for x in sense.words + sense.above for w in x.split()), stop)
        score = len(signature & context)
        if score > best_score:
            best, best_score = rank, score
    return options[best], best, best_score


def in_context_synonyms(doc, i: int, story: str = "") -> tuple[str, ...]:
    """Single words of token ``i``'s sense in context that read that way on their own (the sense is one of their
    SENSE_RANK most frequent; a noun's synonym is no '-ing' form unless the noun is one): what a swap may put in
    its place."""
    token = doc[i]
    if token.pos_ not in SWAPPABLE or token.lemma_.lower() in LIGHT_VERBS:
        return ()
    sense = sure_sense(doc, i, story)
    if sense is None or sense_rank(token.lemma_.lower(), token.pos_, sense.offset) != 0:
        return ()  # a word read in one of its rarer senses is where Lesk errs most: it is not swapped
    gerund_ok = token.pos_ != "NOUN" or token.lemma_.lower().endswith("ing")
    return tuple(w for w in sense.words if w.isalpha() and w.lower() != token.lemma_.lower()
                 and (w.islower() or not token.lemma_.islower())  # 'Sn' for 'tin': a symbol or a name
                 and reads_as(w, token.pos_, sense.offset)
                 and (gerund_ok or not w.lower().endswith("ing"))  # 'the fixing contract' reads as a verb
                 and takes_the_clause(token, w, sense.offset))


BARE_INFINITIVE_FRAMES = frozenset({25, 32})  # WordNet's 'Somebody ----s (somebody) INFINITIVE'


def takes_the_clause(token, word: str, offset: int) -> bool:
    """A verb followed by a bare infinitive here ('refuse to help dig') is swapped only for a word WordNet builds with
    one ('assist dig' is no English)."""
    bare = any(c.dep_ in ("xcomp", "ccomp") and c.tag_ == "VB" and not any(g.lower_ == "to" for g in c.children)
               for c in token.children)
    return token.pos_ != "VERB" or not bare or bool(BARE_INFINITIVE_FRAMES & verb_frames(word, offset))


def reads_as(word: str, pos: str, offset: int) -> bool:
    """A reader knows ``word`` and takes it on its own in this sense: it is a common word (``common``), the sense
    is its most frequent one, and at least half of its tagged uses in WordNet's concordance when they were
    counted ("stone" is a rock in under half)."""
    rank = sense_rank(word, pos, offset)
    if rank is None or rank >= SENSE_RANK or not common(word):
        return False
    in_pos = pos_share(word, pos)
    if in_pos is not None and in_pos < POS_SHARE:
        return False  # 'minor' for 'child': the word is read as an adjective
    share = sense_share(word, pos, rank)
    return share is None or share >= NEW_WORD_SHARE


def common(word: str) -> bool:
    """The word is at least COMMON_ZIPF on the Zipf scale: a rarer synonym is one an ordinary reader may not know
    ("larceny", "motorcoach", "forenoon", "visitant")."""
    return zipf(word) >= COMMON_ZIPF


@lru_cache(maxsize=20000)
def zipf(word: str) -> float:
    """How common an English word is, by ``wordfreq``: log10 of its uses per billion words (0: unknown)."""
    from wordfreq import zipf_frequency  # its import takes a tenth of a second: only when a swap is judged

    return zipf_frequency(word, "en")


SWAP_TAGS = {"NN", "NNS", "VB", "VBP", "VBZ", "JJ", "RB"}  # forms a synonym can be put in


def protected(token) -> bool:
    """A token no swap may change: part of a named entity, a number, a wh-word, a negation."""
    return bool(token.ent_type_) or token.like_num or token.pos_ in ("NUM", "PROPN") or token.tag_ in WH_TAGS \
        or token.lower_ in WH_WORDS or token.lower_ in NEGATIONS


def inflect(word: str, tag: str) -> str | None:
    """The synonym in the form of the replaced word: plural nouns and third-person verbs get an -s, or the irregular
    form WordNet lists ('children')."""
    if tag not in ("NNS", "VBZ"):
        return word
    if " " in word:
        return None  # "look into" → "looks into": too easy to get wrong
    if tag == "NNS" and word in irregular_forms("NOUN"):
        return next(iter(irregular_forms("NOUN")[word]))  # 'children', not 'childs'
    if word.endswith("s") and not word.endswith("ss"):
        return None  # 'sis', 'bus', 'lens': whether the s doubles is the dictionary's to say
    if word.endswith(("ss", "x", "z", "ch", "sh")) or (tag == "VBZ" and word.endswith("o")):
        return word + "es"  # 'boxes', 'goes'
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def in_a_unit(token) -> bool:
    """The token is part of a phrasal verb ("pick up", "set off"), a compound noun ("repair contract", "bus
    stop") or a hyphenated word ("check-in", "single-use"): the unit means what its words alone do not, so
    swapping one word renames it."""
    doc, i = token.doc, token.i
    hyphened = (i > 0 and doc[i - 1].text == "-" and not doc[i - 1].whitespace_) or (
        i + 1 < len(doc) and doc[i + 1].text == "-" and not token.whitespace_)
    return hyphened or token.dep_ in ("compound", "prt") or any(c.dep_ in ("compound", "prt") for c in token.children)


def fits_the_article(token, word: str) -> bool:
    """After "a" or "an" the new word starts with a vowel letter where the old one did ("a single cone", not "a
    individual cone"): the article is not changed with it."""
    before = token.doc[token.i - 1].lower_ if token.i > 0 else ""
    return before not in ("a", "an") or (token.lower_[:1] in "aeiou") == (word.lower()[:1] in "aeiou")


def swap_options(doc, i: int, story: str = "") -> tuple[str, ...]:
    """What a swap may put in token ``i``'s place: its in-context synonyms in its form (none for a protected
    word, the question's focus, part of a phrasal verb or compound, or a form the lemma does not give back, such
    as "built")."""
    t = doc[i]
    if protected(t) or not t.is_alpha or t.tag_ not in SWAP_TAGS or i == focus_noun(doc) or in_a_unit(t):
        return ()
    if t.tag_ not in ("NNS", "VBZ") and t.lower_ != t.lemma_.lower():
        return ()
    forms = [inflect(w, t.tag_) for w in in_context_synonyms(doc, i, story) if fits_the_article(t, w)]
    # the form too must be one a reader knows: 'foliages', 'equipments' are no English
    forms = [f for f in forms if f and (t.tag_ not in ("NNS", "VBZ") or common(f))]
    return tuple(f[:1].upper() + f[1:] if t.text[:1].isupper() else f for f in forms)


def emphasis_gap(doc) -> int | None:
    """Where an emphasis adverb may go (None: nowhere): in a wh-question without negation, right before its main
    verb in the base form that follows "did", "does", "will", "should" … ("What did she actually find?"), not
    after another adverb. Elsewhere it reads otherwise: as the manner or degree of an action in an infinitive,
    a subordinate clause or before a participle ("refuse to really help", "when the water really rises", "be
    really heated"), as doubt in a yes/no question ("Did he really comment?"), or garbled ("nearly actually
    miss")."""
    if not doc or doc[0].lower_ not in WH_WORDS or any(t.lower_ in NEGATIONS for t in doc):
        return None
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.tag_ != "VB" or root.i < 2 or doc[root.i - 1].pos_ in ("ADV", "PART"):
        return None
    return root.i if any(c.dep_ == "aux" and c.i < root.i for c in root.children) else None


# -- the constraints -------------------------------------------------------------------------------

class Unchanged:
    name = "unchanged"
    operators = ALL_OPERATORS

    def check(self, r: Reading) -> bool:
        return r.mutation.mutated.strip().lower() != r.mutation.original.strip().lower()


class ProtectedWords:
    name = "protected word"
    operators = WORD_OPERATORS | {BT}

    def check(self, r: Reading) -> bool:
        kept = Counter(t.lower_ for t in r.after)
        return all(kept[w] >= n for w, n in protected_words(r.before).items())


class PartOfSpeech:
    name = "part of speech"
    operators = WORD_OPERATORS

    def check(self, r: Reading) -> bool:
        if any(_group(r.before[i]) != _group(r.after[j]) for i, j in r.same if r.before[i].is_alpha):
            return False
        for tag, i1, i2, j1, j2 in r.edits:
            new = r.after[j1:j2]
            if r.mutation.operator in INSERTIONS:
                if tag != "insert" or any(t.pos_ != "ADV" for t in new):
                    return False
            elif i2 - i1 != 1 or _group(r.before[i1]) not in {_group(t) for t in new}:
                return False
        return True


def _group(token) -> str:
    return POS_GROUP.get(token.pos_, token.pos_)


class WordSense:
    name = "word sense"
    operators = SWAPS

    def check(self, r: Reading) -> bool:
        for tag, i1, i2, j1, j2 in r.edits:
            if tag != "replace" or i2 - i1 != 1:
                return False
            allowed = {w.lower() for w in swap_options(r.before, i1, r.mutation.story)}
            if " ".join(t.lower_ for t in r.after[j1:j2]) not in allowed:  # the synonym, in the replaced word's form
                return False
        return True


class InsertedWord:
    name = "inserted word"
    operators = INSERTIONS

    def check(self, r: Reading) -> bool:
        gap = emphasis_gap(r.before)
        return all(tag == "insert" and i1 == gap and all(t.lower_ in NEUTRAL_WORDS for t in r.after[j1:j2])
                   for tag, i1, i2, j1, j2 in r.edits)


class StorySentences:
    name = "story sentences"
    operators = WORD_OPERATORS | {BT}

    def check(self, r: Reading) -> bool:
        m = r.mutation
        if not m.story:
            return True
        new = set(pointed_sentences(m.mutated, m.story))
        return not new or bool(new & set(pointed_sentences(m.original, m.story)))


class WordInContext:
    """The swapped-in word reads, in the new question, as the old word read in the original: the cosine of their
    contextual vectors (``Embeddings.add_words``) stays at ``SAME_WORD_IN_CONTEXT``, less ``WORSE_FIT_COST`` for
    each nat by which the local LM finds the new word a worse fit than the old (``LanguageModel.misfit``): the two
    witnesses are read together, so a near miss of one is taken where the other is sure. It tells a synonym of the
    sense meant from a near-synonym WordNet lists in the same sense ('tribunal' for the 'court' one leaves,
    'parkland' for a town's 'park', 'occupations' for a child's 'jobs')."""
    name = "word in context"
    operators = SWAPS

    def __init__(self, embeddings, language_model: "LanguageModel", bar: float = SAME_WORD_IN_CONTEXT):
        self.embeddings, self.language_model, self.bar = embeddings, language_model, bar

    @staticmethod
    def spans(r: Reading) -> list[tuple[tuple[str, int, int], tuple[str, int, int]]]:
        def span(doc, i, j) -> tuple[str, int, int]:
            return doc.text, doc[i].idx, doc[j - 1].idx + len(doc[j - 1].text)

        return [(span(r.before, i1, i2), span(r.after, j1, j2)) for _, i1, i2, j1, j2 in r.edits]

    def prepare(self, readings: list[Reading]) -> None:
        self.embeddings.add_words([s for r in readings for pair in self.spans(r) for s in pair])
        self.language_model.prepare(readings)

    def check(self, r: Reading) -> bool:
        penalty = WORSE_FIT_COST * max(0.0, self.language_model.misfit(r))
        return all(self.embeddings.word_cosine(a, b) - penalty >= self.bar for a, b in self.spans(r))


class Cosine:
    name = "cosine"
    operators = ALL_OPERATORS

    def __init__(self, embeddings, bar: float):
        self.embeddings, self.bar = embeddings, bar

    def prepare(self, readings: list[Reading]) -> None:
        self.embeddings.add([x for r in readings for x in (r.mutation.original, r.mutation.mutated)])

    def check(self, r: Reading) -> bool:
        return self.embeddings.cosine(r.mutation.original, r.mutation.mutated) >= self.bar


class LanguageModel:
    name = "language model"
    operators = WORD_OPERATORS

    def __init__(self, scorer=None, max_drop: dict[str, float] | None = None):
        self._scorer, self.max_drop = scorer, max_drop or LM_MAX_DROP

    @property
    def scorer(self) -> "LikelihoodScorer":
        if self._scorer is None:  # the model loads when a mutation first reaches this constraint
            self._scorer = LikelihoodScorer.local()
        return self._scorer

    def prepare(self, readings: list[Reading]) -> None:
        self.scorer.score([x for r in readings for x in (r.mutation.original, r.mutation.mutated)])

    def drop(self, r: Reading) -> float:
        a, b = self.scorer.score([r.mutation.original, r.mutation.mutated])
        return a - b

    def misfit(self, r: Reading) -> float:
        """A swap's drop with the new word's rarity taken off: how badly the word fits the question (nats)."""
        return self.drop(r) - rarity_cost(r)

    def check(self, r: Reading) -> bool:
        if r.mutation.operator in INSERTIONS:
            return self.drop(r) <= self.max_drop["insertion"]
        return self.misfit(r) <= self.max_drop["swap"]


def rarity_cost(r: Reading) -> float:
    """How many nats less likely the swapped-in words are than the words they replace, by their frequency alone
    (``wordfreq``'s Zipf scale is log10 of uses per billion): the part of an LM's drop that is no sign of a
    wrong sense or frame."""
    def zipfs(tokens) -> float:
        return sum(zipf(t.text) for t in tokens)

    return sum(math.log(10) * (zipfs(r.before[i1:i2]) - zipfs(r.after[j1:j2])) for _, i1, i2, j1, j2 in r.edits)


class LikelihoodScorer:
    """A causal LM's log-likelihood of whole sentences (nats), in batches, kept per text."""

    def __init__(self, model, tokenizer, batch_size: int = 32):
        self.model, self.tokenizer, self.batch_size = model, tokenizer, batch_size
        self._done: dict[str, float] = {}

    @classmethod
    def local(cls) -> "LikelihoodScorer":
        return _local_scorer()

    def score(self, texts: list[str]) -> list[float]:
        todo = list(dict.fromkeys(t for t in texts if t not in self._done))
        for k in range(0, len(todo), self.batch_size):
            self._score(todo[k:k + self.batch_size])
        return [self._done[t] for t in texts]

    def _score(self, texts: list[str]) -> None:
        import torch

        start = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
        ids = [[start] + self.tokenizer(t).input_ids for t in texts]
        width = max(len(x) for x in ids)
        batch = torch.tensor([x + [start] * (width - len(x)) for x in ids])  # right padding, never read
        with torch.inference_mode():
            logprobs = torch.log_softmax(self.model(input_ids=batch).logits.float(), dim=-1)
        for row, (text, x) in enumerate(zip(texts, ids)):
            self._done[text] = sum(logprobs[row, t - 1, x[t]].item() for t in range(1, len(x)))


@lru_cache(maxsize=1)
def _local_scorer() -> LikelihoodScorer:
    from mortar.sut.local import PRESETS, load_model  # torch and the weights: loaded only when the gate scores

    return LikelihoodScorer(*load_model(PRESETS["smollm2"]()))


# -- the gate --------------------------------------------------------------------------------------

@dataclass
class Gate:
    """Constraints in order; ``counts[operator]`` counts the proposed, the kept and each constraint's rejections."""

    constraints: list
    nlp: object
    counts: dict[str, Counter] = field(default_factory=dict)

    def read(self, m: Mutation) -> Reading:
        before, after = self.nlp(m.original), self.nlp(m.mutated)
        matcher = difflib.SequenceMatcher(a=[t.lower_ for t in before], b=[t.lower_ for t in after], autojunk=False)
        edits, same = [], []
        for op in matcher.get_opcodes():
            if op[0] == "equal":
                same += [(op[1] + k, op[3] + k) for k in range(op[2] - op[1])]
            else:
                edits.append(op)
        return Reading(m, before, after, edits, same)

    def reasons(self, mutations: list[Mutation]) -> list[str | None]:
        """Per mutation, the name of the first constraint that rejected it (None: kept); counted per operator."""
        readings = [self.read(m) for m in mutations]
        reason: list[str | None] = [None] * len(mutations)
        for c in self.constraints:
            alive = [k for k, r in enumerate(readings) if reason[k] is None and r.mutation.operator in c.operators]
            if alive and hasattr(c, "prepare"):
                c.prepare([readings[k] for k in alive])
            for k in alive:
                if not c.check(readings[k]):
                    reason[k] = c.name
        for m, why in zip(mutations, reason):
            counted = self.counts.setdefault(m.operator, Counter())
            counted["proposed"] += 1
            counted["kept" if why is None else why] += 1
        return reason

    def keeps(self, m: Mutation) -> bool:
        return self.reasons([m])[0] is None

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.constraints]

    def rows(self) -> list[dict]:
        """One row per operator: how many mutations were proposed, kept, and rejected by each constraint."""
        return [{"operator": op, "proposed": n["proposed"], "kept": n["kept"],
                 **{f"rejected: {name}": n[name] for name in self.names}} for op, n in sorted(self.counts.items())]

    def summary(self) -> str:
        parts = []
        for op, n in sorted(self.counts.items()):
            why = ", ".join(f"{name} {n[name]}" for name in self.names if n[name])
            parts.append(f"{op} kept {n['kept']} of {n['proposed']}" + (f" (rejected: {why})" if why else ""))
        return "; ".join(parts)


def make_gate(nlp, embeddings, cosine_bar: float, mode: str = GATE_ON, scorer=None) -> Gate:
    """The gate: every constraint, or with ``mode`` off the paper's filter (unchanged and cosine only)."""
    if mode == GATE_OFF:
        return Gate([Unchanged(), Cosine(embeddings, cosine_bar)], nlp)
    language_model = LanguageModel(scorer)
    return Gate([Unchanged(), ProtectedWords(), PartOfSpeech(), WordSense(), InsertedWord(), StorySentences(),
                 WordInContext(embeddings, language_model), Cosine(embeddings, cosine_bar), language_model], nlp)
