"""The ``answer`` oracle: is the answer acceptable for the question, given the reference?

It first finds what the answer says — unknown or not, yes/no polarity, numbers with units, names,
closed-class terms, negation (``mortar.answers``) — and compares those; only what no rule settles
goes to the embeddings, of the whole answer and of the answer without the question's own words.
No LLM judge: spaCy and MiniLM, both shipped offline. Each judgement comes with a short reason
("polarity matches (no)", "contains the reference entity").
"""

from __future__ import annotations

import re

from mortar.answers import PROFORMS, analyse, analyse_question, normalize_word, same_word
from mortar.oracle.embeddings import Embeddings

# the answer oracle's fixed points on its [0, 1] scale (default threshold 0.5)
SURE_PASS, PASS, SURE_FAIL, FAIL = 1.0, 0.9, 0.0, 0.1
EMB_LOW, EMB_HIGH = 0.40, 0.80  # embedding cosine mapped linearly: 0.40 → 0, 0.80 → 1 (so 0.60 ↔ 0.5)
SAME_PHRASE = 0.80  # two short phrases this close are synonyms ('washing basket', 'laundry basket')


def _texts(quantities) -> str:
    return ", ".join(dict.fromkeys(x.text for x in quantities if x.text))


class _Wanting(Exception):
    """A judgement needs embeddings that are not computed yet."""


class AnswerJudge:
    """The ``answer`` oracle: rules on what the answer says first, embeddings for the rest."""

    def __init__(self, embeddings: Embeddings, nlp=None):
        self.embeddings = embeddings
        self._nlp = nlp
        self._texts: dict[str, object] = {}
        self._questions: dict[str, object] = {}
        self._wanted: set[str] = set()
        self._results: dict[tuple, tuple[float, str]] = {}  # (question, reference, candidate) → (score, reason)

    @property
    def nlp(self):
        if self._nlp is None:
            from mortar.nlp import load_nlp

            self._nlp = load_nlp().nlp
        return self._nlp

    # ---- reading, in batches
    def analyse_texts(self, texts) -> None:
        new = sorted({t for t in texts if t not in self._texts})
        for text, doc in zip(new, self.nlp.pipe(new, batch_size=256)):
            self._texts[text] = analyse(doc, text)

    def analyse_questions(self, questions) -> None:
        new = sorted({q for q in questions if q and q not in self._questions})
        for text, doc in zip(new, self.nlp.pipe(new, batch_size=256)):
            self._questions[text] = analyse_question(doc, text)

    def prepare(self, triples) -> None:
        """Read every question, reference and answer in one batch."""
        triples = list(triples)
        self.analyse_questions(q for q, _, _ in triples)
        self.analyse_texts(t for _, r, c in triples for t in (r, c))

    def _cos(self, a: str, b: str) -> float:
        """Cosine of two embedded texts; a text not embedded yet is wanted, and the judgement waits for it."""
        vectors = self.embeddings.vectors
        if a in vectors and b in vectors:
            return self.embeddings.cosine(a, b)
        self._wanted.update(t for t in (a, b) if t not in vectors)
        raise _Wanting

    def _answer_part(self, question, candidate) -> str:
        """The answer without the words it repeats from the question ('Cotton was white.' → 'white')."""
        q = self._questions.get(question) if question else None
        doc_words = re.findall(r"[\w'’.-]+|[^\w\s]", candidate)
        if q is None:
            return candidate
        keep = [w for w in doc_words if normalize_word(w.strip(".")) not in q.lemmas or w[:1].isdigit()]
        part = " ".join(w for w in keep if re.search(r"\w", w))
        return part if part.strip() else candidate

    # ---- judging
    def judge(self, question: str | None, reference: str, candidate: str) -> tuple[float, str]:
        return self.judge_many([(question, reference, candidate)])[0]

    def judge_many(self, triples) -> list[tuple[float, str]]:
        """Rules first for all; the embeddings the undecided ones want are computed in one batch, then they finish."""
        triples = [(q or None, r, c) for q, r, c in triples]
        self.prepare(t for t in triples if t not in self._results)
        results: list[tuple[float, str] | None] = [self._results.get(t) for t in triples]
        pending = [i for i, res in enumerate(results) if res is None]
        while pending:
            self._wanted = set()
            waiting = []
            for i in pending:
                try:
                    results[i] = self._decide(*triples[i])
                except _Wanting:
                    waiting.append(i)
            if waiting and not self._wanted:  # cannot happen: a wait always names what it wants
                raise RuntimeError("answer oracle waiting for nothing")
            self.embeddings.add(self._wanted)
            pending = waiting
        self._results.update(zip(triples, results))
        return results

    def _decide(self, question, reference, candidate) -> tuple[float, str]:
        q = self._questions.get(question) if question else None
        r, c = self._texts[reference], self._texts[candidate]
        if r.norm and r.norm == c.norm:
            return SURE_PASS, "same answer as the reference"
        # "Unknown" is right exactly when the reference is unknown
        if r.unknown or r.norm in ("unknown",):
            if c.unknown:
                return SURE_PASS, "both say the story does not tell"
            return SURE_FAIL, "gives an answer, but the story does not tell"
        if c.unknown:
            return SURE_FAIL, "says the story does not tell, but the question has an answer"
        # yes/no: compare polarity
        ref_polarity = r.lead or (r.norm if r.norm in ("yes", "no") else None)
        if ref_polarity:
            got = self._polarity(c, q)
            if got == ref_polarity:
                return 0.95, f"polarity matches ({ref_polarity})"
            if got:
                return 0.05, f"polarity differs: {got}, the reference says {ref_polarity}"
            if not r.content:
                return 0.2, f"no yes/no answer found (the reference says {ref_polarity})"
        # numbers, times, dates
        number = self._compare_quantities(r, c, q)
        conflict = self._conflict(q, r, c)
        if number is not None:
            kind, detail = number
            if kind == "conflict":
                return FAIL, detail
            if kind == "match":
                if conflict:
                    return 0.15, conflict
                return PASS, detail
            if kind == "partial":
                return 0.35, detail
            # a missing number settles it when the question asks for one, or the reference is mostly numbers
            if kind == "missing" and (q is not None and q.numeric or not self._ref_words(q, r)
                                      or len(r.quantities) >= len(self._ref_words(q, r))):
                return 0.15, detail
        # spans: the reference's informative words, names, and meaning
        ref_words = self._ref_words(q, r)
        cand_words = set(c.lemmas)
        matched = [w for w in ref_words if any(same_word(w, x) for x in cand_words)]
        recall = sum(ref_words[w] for w in matched) / sum(ref_words.values()) if ref_words else 0.0
        cosine = max(self._cos(candidate, reference), self._cos(self._answer_part(question, candidate), reference))
        meaning = min(1.0, max(0.0, (cosine - EMB_LOW) / (EMB_HIGH - EMB_LOW)))
        entities = self._entities(q, r, c)
        if conflict:
            return min(0.15, max(recall, meaning)), conflict
        if entities and entities[0] == "missing":
            return min(0.15, meaning), entities[1]
        if entities and entities[0] == "absent":  # only the meaning can vouch for an answer without the name
            return meaning, (f"close in meaning to the reference (cosine {cosine:.2f})" if meaning >= 0.5
                             else entities[1])
        if entities and entities[0] == "found" and recall >= 0.3:
            return max(0.85, recall, meaning), entities[1]
        if recall >= meaning:
            score = recall
            reason = (f"contains the reference answer ({len(matched)} of {len(ref_words)} key words)"
                      if recall >= 0.5 else f"shares {len(matched)} of {len(ref_words)} key words with the reference")
        else:
            score, reason = meaning, f"close in meaning to the reference (cosine {cosine:.2f})"
            if score < 0.5:
                reason = f"different from the reference (cosine {cosine:.2f})"
        if score < 0.5 and q is not None and self._evasive(q, c, recall):
            reason = "repeats the question without giving the answer"
        return score, reason

    # ---- pieces
    @staticmethod
    def _ref_words(q, r) -> dict[str, float]:
        """The reference's content words that the question does not already say."""
        if q is None:
            return dict(r.content)
        own = {w: wt for w, wt in r.content.items() if not any(same_word(w, x) for x in q.lemmas)}
        return own or dict(r.content)

    @staticmethod
    def _polarity(c, q) -> str | None:
        if c.lead:
            return c.lead
        verbs = q.verbs if q is not None else set()
        if c.root_negated or c.first_clause_negated or any(v in c.negated for v in verbs) \
                or {"never", "nobody", "nothing", "neither", "none"} & set(c.lemmas):
            return "no"
        for w in c.lemmas:  # a negative prefix on the question's verb: 'unopened', 'unpaid', 'disliked'
            for prefix in ("un", "in", "dis", "non"):
                if w.startswith(prefix) and len(w) > len(prefix) + 3 and \
                        any(same_word(w[len(prefix):], v) for v in verbs):
                    return "no"
        if c.root in PROFORMS and c.n_tokens <= 6:
            return "yes"  # an echo: 'He did.', 'She was.'
        if q is not None and any(same_word(c.root, v) for v in verbs) and not c.has_negation:
            return "yes"
        return None

    @staticmethod
    def _compare_quantities(r, c, q):
        if not r.quantities:
            return None
        if not c.quantities:
            shown = _texts(r.quantities) or "a number"
            return "missing", f"gives no number (the reference says {shown})"
        found = [x for x in r.quantities if any(x.matches(y) for y in c.quantities)]
        # the same noun counted differently: 'six parents' for 'fourteen parents'
        for x in r.quantities:
            if x.noun and not any(x.matches(y) and (y.noun in (None, x.noun)) for y in c.quantities):
                other = next((y for y in c.quantities if y.noun == x.noun and not x.matches(y)), None)
                if other is not None:
                    return "conflict", f"different number: {other.text}, the reference says {x.text}"
        if len(found) == len(r.quantities):
            return "match", f"the number matches ({_texts(r.quantities)})"
        missing = [x for x in r.quantities if x not in found]
        if found:
            return "partial", f"only part of the numbers match (missing {_texts(missing)})"
        return "conflict", f"different number: {_texts(c.quantities)}, the reference says {_texts(r.quantities)}"

    def _conflict(self, q, r, c) -> str | None:
        """A closed-class term or a negation that contradicts the reference."""
        echo = q.lemmas if q is not None else set()
        for cls, terms in r.closed.items():
            theirs = c.closed.get(cls, set()) - echo
            if theirs and not (c.closed.get(cls, set()) & terms):
                return f"says {', '.join(sorted(theirs))}, the reference says {', '.join(sorted(terms))}"
        cand_words = set(c.lemmas)
        for h in r.negated & set(r.content):
            if h in cand_words and h not in c.negated:
                return f"drops the reference's negation (not {h})"
        if not (q is not None and q.negated):  # 'What couldn't he do?' → 'He couldn't breathe fire.'
            for h in c.negated_scope:
                if h in r.content and h not in r.negated_scope:
                    return f"negates the reference ({h})"
        # the same thing with another specific modifier: 'a chocolate cake' for 'a lemon cake'
        ref_words = set(r.lemmas)
        for head, kinds in r.modifiers.items():
            for kind, mods in kinds.items():
                theirs = {m for m in c.modifiers.get(head, {}).get(kind, set()) - echo
                          if not any(same_word(m, x) for x in ref_words)}
                if not theirs or any(same_word(m, x) for m in mods for x in cand_words):
                    continue
                said, ref = f"{' '.join(sorted(theirs))} {head}", f"{' '.join(sorted(mods))} {head}"
                if self._cos(said, ref) < SAME_PHRASE:  # 'washing basket' is a 'laundry basket'
                    return f"says {said}, the reference says {ref}"
        return None

    @staticmethod
    def _entities(q, r, c):
        """Is the reference's name in the answer ('Quispe' for 'Marta Quispe'), or another name instead?"""
        echo = q.lemmas if q is not None else set()
        ref_names = [e for e in r.entities if not e <= echo]
        if not ref_names:
            return None
        text_words = set(c.lemmas)
        for ref in ref_names:
            for name in c.entities:
                if name & ref and not (name - ref and ref - name):
                    return "found", f"contains the reference entity ({' '.join(sorted(ref))})"
            if all(w in text_words for w in ref):
                return "found", f"contains the reference entity ({' '.join(sorted(ref))})"
        known = set(r.lemmas) | echo
        new = [e for e in c.entities if not e <= known]
        ref_name = " ".join(sorted(ref_names[0]))
        if new:
            return "missing", f"names a different entity ({' '.join(sorted(new[0]))}), the reference says {ref_name}"
        return "absent", f"does not contain the reference entity ({ref_name})"

    @staticmethod
    def _evasive(q, c, recall: float) -> bool:
        if recall > 0 or not q.content:
            return False
        repeated = sum(1 for w in q.content if w in set(c.lemmas))
        return repeated >= max(1, len(q.content) // 2) and c.n_tokens >= 5
