"""The ``answer`` oracle: is the answer acceptable for the question, given the reference?

It first finds what the answer says — unknown or not, yes/no polarity, numbers with units, names,
closed-class terms, negation (``mortar.answers``) — and compares those; only what no rule settles
goes to the embeddings, of the whole answer and of the answer without the question's own words. Shapes that
small chat models give are read too: a looping answer, two answers hedged ("cumin or turmeric"), part of a list,
the question repeated or a placeholder ("something"), and, with the story, a description for the reference's name
or a name for its description.
No LLM judge: spaCy and MiniLM, both shipped offline. Each judgement comes with a short reason
("polarity matches (no)", "contains the reference entity").
"""

from __future__ import annotations

import re

from dataclasses import replace

from mortar.answers import (CLOCK, CLOSED_CLASSES, MONEY, PROFORMS, TITLES, UNITS, analyse, analyse_question,
                            clocks_alike, fold_accents, normalize_word, periods, quantities, rate, same_word)
from mortar.oracle.aliases import canonical_names, countries, with_acronyms
from mortar.oracle.embeddings import Embeddings
from mortar.wordnet import WordNetMissing, antonyms, genus, kind_in_common, names_an_agent, senses, synonyms
from mortar.nlp import load_nlp, parsed_story, stop_words

# the answer oracle's fixed points on its [0, 1] scale (default threshold 0.5)
SURE_PASS, PASS, SURE_FAIL, FAIL = 1.0, 0.9, 0.0, 0.1
NAME_WORDS = 4  # words: a person's name is no longer ('Mary Ann de Souza')
EMB_LOW, EMB_HIGH = 0.40, 0.80  # embedding cosine mapped linearly: 0.40 → 0, 0.80 → 1 (so 0.60 ↔ 0.5)
SAME_PHRASE = 0.80  # two short phrases this close are synonyms ('washing basket', 'laundry basket')
SAME_MEMBER = 0.55  # a list member said in other words ('relatives' for 'family members')
SAME_KIND = 0.65  # two nouns of one kind this close are used as synonyms ('beach', 'shore'); below: 'attic', 'cellar'
# a pronoun and a bare auxiliary say yes: 'He will, after the meeting.', 'She did — two bowls.' (not 'He did not.')
ECHO_YES = re.compile(r"\W*(?:he|she|it|they|we|i|you|there) (?:will|would|did|does|do|is|was|are|were|can|could|has|"
                      r"have|had|should|may|might)\b(?! not\b)\s*(?:[,.;:!—–-]|$)")


def _texts(quantities) -> str:
    return ", ".join(dict.fromkeys(x.text for x in quantities if x.text))


class _Wanting(Exception):
    """A judgement needs embeddings that are not computed yet."""


# ways of saying 'the story does not tell'; an answer this close to one of them (MiniLM cosine) says it too
NOT_TOLD_LIKE = ("I don't know.", "The text does not say.", "It is not mentioned.", "No idea.", "It's not clear.",
                 "I can't tell.")
NOT_TOLD_ALIKE, NOT_TOLD_ALIKE_WORDS = 0.45, 12


class AnswerJudge:
    """The ``answer`` oracle: rules on what the answer says first, embeddings for the rest."""

    def __init__(self, embeddings: Embeddings, nlp=None):
        self.embeddings = embeddings
        self._nlp = nlp
        self._texts: dict[str, object] = {}
        self._questions: dict[str, object] = {}
        self._wanted: set[str] = set()
        self._stories: dict[str, list] = {}  # story → its sentences' words
        self._results: dict[tuple, tuple[float, str]] = {}  # (question, reference, candidate) → (score, reason)

    @property
    def nlp(self):
        if self._nlp is None:

            self._nlp = load_nlp().nlp
        return self._nlp

    # ---- reading, in batches
    def analyse_texts(self, texts) -> None:
        new = sorted({t for t in texts if t not in self._texts})
        folded = [fold_accents(t) for t in new]  # read without accents: 'Castaneda' is 'Castañeda'
        for text, plain, doc in zip(new, folded, self.nlp.pipe(folded, batch_size=256)):
            self._texts[text] = analyse(doc, plain)

    def analyse_questions(self, questions) -> None:
        new = sorted({q for q in questions if q and q not in self._questions})
        folded = [fold_accents(q) for q in new]
        for text, plain, doc in zip(new, folded, self.nlp.pipe(folded, batch_size=256)):
            self._questions[text] = analyse_question(doc, plain)

    def prepare(self, triples) -> None:
        """Read every question, reference and answer in one batch."""
        triples = list(triples)
        self.analyse_questions(q for q, *_ in triples)
        self.analyse_texts(t for _, r, c, *_ in triples for t in (r, c))

    def _not_told_alike(self, c) -> bool:
        """A short answer with no number or name, close in meaning to a way of saying 'the story does not tell'
        ('The diary is silent on that.'), where no pattern of ``is_unknown`` phrases it."""
        if c.quantities or c.entities or c.n_tokens > NOT_TOLD_ALIKE_WORDS:
            return False
        return max(self._cos(c.text, p) for p in NOT_TOLD_LIKE) >= NOT_TOLD_ALIKE

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
    def judge(self, question: str | None, reference: str, candidate: str,
              story: str | None = None) -> tuple[float, str]:
        return self.judge_many([(question, reference, candidate, story)])[0]

    def judge_many(self, triples) -> list[tuple[float, str]]:
        """Rules first for all; the embeddings the undecided ones want are computed in one batch, then they finish."""
        # one name per thing ('Peruvian' → Peru, 'the UN' → the United Nations) in answers, references and stories
        # and one form for a name and its acronym ('the World Wildlife Fund' is 'the WWF')
        triples = [(t[0] or None, canonical_names(with_acronyms(t[2], t[1])),
                    canonical_names(with_acronyms(t[1], t[2])), canonical_names(t[3]) if len(t) > 3 and t[3] else None)
                   for t in triples]
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

    def _decide(self, question, reference, candidate, story=None) -> tuple[float, str]:
        q = self._questions.get(question) if question else None
        r, c = self._texts[reference], self._texts[candidate]
        if r.norm and r.norm == c.norm:
            return SURE_PASS, "same answer as the reference"
        if c.degenerate and not r.degenerate:
            return SURE_FAIL, "repeats one phrase over and over (a degenerate answer)"
        # "Unknown" is right exactly when the reference is unknown
        if r.unknown or r.norm in ("unknown",):
            if c.unknown:
                return SURE_PASS, "both say the story does not tell"
            if self._not_told_alike(c):
                return PASS, "says in its own words that the story does not tell"
            return SURE_FAIL, "gives an answer, but the story does not tell"
        if c.unknown:
            return SURE_FAIL, "says the story does not tell, but the question has an answer"
        other_country = self._other_country(question, reference, candidate)
        if other_country:
            return FAIL, other_country
        if q is not None and PRICE_QUESTION.search(q.text.lower()) and _costs_nothing(r):
            # 'nothing' to 'How much do children pay?' is 'Kids go free.', and no amount
            if _costs_nothing(c):
                return PASS, "both say it costs nothing"
            if any(x.value for x in c.quantities if x.dim in MONEY | {"cent", "penny"}):
                return FAIL, "gives a price, the reference says it costs nothing"
        # yes/no: compare polarity
        ref_polarity = r.lead or (r.norm if r.norm in ("yes", "no") else None)
        if ref_polarity:
            got = self._polarity(c, q)
            number = self._compare_quantities(r, c, q) if got == ref_polarity and r.quantities else None
            if number and number[0] == "conflict":  # 'Yes, in 2022.' for 'yes, in 2021'
                return FAIL, number[1]
            if got == ref_polarity:
                return 0.95, f"polarity matches ({ref_polarity})"
            if got:
                return 0.05, f"polarity differs: {got}, the reference says {ref_polarity}"
            if not r.content:
                return 0.2, f"no yes/no answer found (the reference says {ref_polarity})"
        elif q is not None and q.yes_no and c.lead and c.lead == self._polarity(r, q):
            # the reference says it in words, the answer with a yes or no: 'not fully' and 'No, not completely.'
            return 0.9, f"says {c.lead}, as the reference does"
        hedge = self._hedge(q, r, c)
        if hedge:
            return 0.2, hedge
        rate = _compare_rates(reference, candidate, r)
        if rate:
            return rate
        code = _other_code(reference, candidate)
        if code:
            return FAIL, code
        # numbers, times, dates
        number = self._compare_quantities(r, c, q, self._counted_noun(question))
        conflict = self._conflict(q, r, c)
        if number is not None:
            kind, detail = number
            if kind == "conflict":
                return FAIL, conflict or detail  # '14 July' for '14 June': the month is the reason
            if kind == "match":
                if conflict:
                    return 0.15, conflict
                named = self._entities(q, r, c)
                # the same number of someone else's: "Bramwell's 80th birthday" (a unit is no name: '25 C', 'Celsius')
                if named and named[0] == "missing" and not any(e <= set(UNITS) | {"c", "f"}
                                                               for e in r.entities + c.entities):
                    return 0.15, named[1]
                return PASS, detail
            if kind == "partial" and not (q is not None and q.yes_no):
                return 0.35, detail  # (to a yes/no question the numbers only back the answer)
            # a missing number settles it when the question asks for one, or the reference is mostly numbers
            if kind == "missing" and (q is not None and q.numeric or not self._ref_words(q, r)
                                      or len(r.quantities) >= len(self._ref_words(q, r))):
                return 0.15, detail
        # spans: the reference's informative words, names, and meaning
        ref_words = self._ref_words(q, r)
        cand_words = set(c.lemmas)
        if self._only_the_question(q, r, c):
            return 0.15, "repeats the question without giving the answer"
        placeholder = PLACEHOLDERS & set(c.lemmas)
        if placeholder and not PLACEHOLDERS & set(r.lemmas) and sum(
                wt for w, wt in ref_words.items() if _said(w, cand_words)) < 0.5 * sum(ref_words.values()):
            return 0.15, f"says '{sorted(placeholder)[0]}' where the reference gives the answer"
        part = self._part_of_list(q, r, c)
        if part:
            return 0.3, part
        matched = [w for w in ref_words if _said(w, cand_words) or _synonym_said(w, cand_words)
                   or _defined_said(w, cand_words)]
        recall = sum(ref_words[w] for w in matched) / sum(ref_words.values()) if ref_words else 0.0
        cosine = max(self._cos(candidate, reference), self._cos(self._answer_part(question, candidate), reference),
                     self._cos(_reason_clause(candidate), _reason_clause(reference)))
        meaning = min(1.0, max(0.0, (cosine - EMB_LOW) / (EMB_HIGH - EMB_LOW)))
        entities = self._entities(q, r, c)
        if story and (entities is None or entities[0] != "found") and recall < 0.5 and not conflict:
            link = self._story_link(story, q, r, c) or self._story_names(story, q, r, c) \
                or self._story_event(story, q, r, c)
            if link:
                return max(0.8, recall), link
        if conflict:
            return min(0.15, max(recall, meaning)), conflict
        other_kind = (self._other_kind(q, r, c, named=bool(entities)) if not entities or entities[0] == "found"
                      else None)
        if other_kind:
            return min(0.15, meaning), other_kind
        if story and entities and entities[0] == "found":
            kin = self._story_kin(story, q, r, c)
            if kin:
                return FAIL, kin
        if entities and entities[0] == "missing":
            return min(0.15, meaning), entities[1]
        if entities and entities[0] == "absent":  # only the meaning can vouch for an answer without the name
            if self._description_of_reference(q, r, c, self._told_about(story, r),
                                              _teller(story, c.text) if story else set()):
                return 0.8, "gives the reference's description of the entity, without the name"
            return meaning, (f"close in meaning to the reference (cosine {cosine:.2f})" if meaning >= 0.5
                             else entities[1])
        if entities and entities[0] == "found" and (recall >= 0.3 or _the_one_named(q, r, c)):
            return max(0.85, recall, meaning), entities[1]  # also 'Lucia.' for 'Lucia Ferreira, the supervisor.'
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
        # 'No mites were found.', 'Nothing may go down the sink.' say no, though they echo the verb
        if re.match(r"\W*(?:(?:there(?:'s| is| are| was| were) )?no|none|nothing|nobody|no[- ]one|never|neither)\b",
                    c.text.replace("’", "'"), re.IGNORECASE):
            return "no"  # also 'There's no signal past the bridge.'
        if q is not None and _another_term(q, c):
            return "no"  # 'It's spring there.' to 'Is it autumn where she lives?'
        if ECHO_YES.match(c.text.lower()):
            return "yes"  # 'He will, after the meeting.', 'She did — two bowls.'
        if q is not None and re.search(r"\b(?:cost|charge|pay)\b", q.text.lower()) and _costs_nothing(c):
            return "no"  # 'Does it cost anything to get in?' 'Entry is free.'
        if q is not None and "free" in q.lemmas and _costs_nothing(c) \
                and not re.search(r"n't\b|\bnot\b", NO_COST.sub(" ", c.text.lower().replace("’", "'"))):
            return "yes"  # 'Is entry free?' 'It costs nothing.', "It doesn't cost anything."
        opposite = _opposite_of_question(c, q)  # 'Was anyone injured?' — 'Everyone was unharmed.'
        if opposite:
            return opposite
        if re.search(r"\bno[- ]one\b", c.text.lower()):
            return "no"
        verbs = q.verbs if q is not None else set()
        if c.root_negated or c.first_clause_negated or any(v in c.negated for v in verbs) \
                or {"never", "nobody", "nothing", "neither", "none"} & set(c.lemmas):
            return "no"
        for w in c.lemmas:  # a negative prefix on the question's verb: 'unopened', 'unpaid', 'disliked'
            for prefix in ("un", "in", "dis", "non"):
                if w.startswith(prefix) and len(w) > len(prefix) + 3 and \
                        any(same_word(w[len(prefix):], v) for v in verbs):
                    return "no"
        if q is not None and PERMISSION.search(q.text.lower()) and FORBIDDEN.search(c.text.lower()) \
                and not c.has_negation:
            return "no"  # 'They're banned.' to 'Are headphones allowed?'
        if c.root in REFUSING and not c.has_negation and q is not None and not (q.verbs & REFUSING):
            return "no"  # 'He declined for now.' to 'Did he agree?', 'They lost.' to 'Did they win?'
        if q is not None and not c.has_negation and not (q.verbs & {v for v, _ in REFUSING_PHRASAL}) \
                and any((verb, particle) in REFUSING_PHRASAL for particle, verb in c.particles.items()):
            return "no"  # 'The ground staff called it off.' to 'Did the match go ahead?', 'They gave up.'
        if NO_PART.search(c.text.lower()):
            return "no"  # 'It played no part in the stoppage.' to 'Did the belt cause the breakdown?'
        if q is not None and any(same_word(w, x) for x in q.lemmas - {"be", "have", "do"}
                                 for m in re.findall(r"\bno (?:\w+ )?(\w+)", c.text.lower())
                                 for w in {normalize_word(m), re.sub(r"(?<=[^s])s$", "", m)}):
            return "no"  # 'he has no receipt' to 'Is there a receipt?'
        if q is not None and q.verbs and re.search(r"\bonly\b", c.text.lower()) \
                and not any(_said(v, set(c.lemmas)) or _synonym_said(v, set(c.lemmas)) for v in q.verbs):
            return "no"  # 'It's only splash-resistant.' to 'Is it waterproof?'
        if re.search(r"\binstead\b|\brather than\b|\bruled out\b", c.text.lower()):
            return "no"  # 'They found her ring instead.' to 'Did they find the key?'; 'It's been ruled out.'
        if q is not None and _names_another(q, c):
            return "no"  # 'The alternate is Egilsstadir.' to 'Is Akureyri the alternate?'
        if q is not None and re.search(r"\b(?:before|ever|previously)\b", q.text.lower()) \
                and re.search(r"\b(?:first|never)\b.*\btime\b|\bfirst ever\b", c.text.lower()):
            return "no"  # 'This is his first time.' to 'Has he been here before?'
        if c.root in PROFORMS and c.n_tokens <= 6 and not c.root_complement \
                and not (q is not None and c.nouns - q.lemmas):
            # an echo: 'He did.', 'She was.' (not 'They have to be over 11.', nor 'Lunch is from 12 to 1.')
            return "yes"
        if q is not None and any(same_word(c.root, v) for v in verbs - q.described) and not c.has_negation:
            return "yes"
        return None

    @staticmethod
    def _counted_noun(question) -> str | None:
        """What 'how many …' counts ('How many countries did he visit?' → 'country')."""
        m = re.search(r"\bhow many (\w+)", question.lower()) if question else None
        return m and normalize_word(re.sub(r"(?<=[^aeiou])ies$", "y", m.group(1)).removesuffix("s"))

    @staticmethod
    def _compare_quantities(r, c, q, asked_noun=None):
        # a number the question itself says is no evidence ('first' in an answer to 'Who got there first?')
        asked = quantities(q.text) if q is not None else []
        said = [y for y in c.quantities if not any(y.matches(a) for a in asked)]
        # ':00' adds nothing to an hour said without minutes ('22:00' is '10 pm', '09:00 to 15:30' is 'nine till
        # half past three')
        bare_hours = not any(y.dim == CLOCK[1] for y in said)
        said += [replace(y, dim=CLOCK[1], value=0.0, base=None, meridiem=None) for y in said if y.dim == CLOCK[0]
                 and not any(z.dim == CLOCK[1] and z.text == y.text for z in said)]
        ref_quantities = [x for x in r.quantities if not any(x.matches(a) for a in asked)
                          and not (bare_hours and x.dim == CLOCK[1] and x.value == 0)]
        if not ref_quantities:
            return None
        # '4:52' read as a span where the reference gives one ('4 hours and 52 minutes', '18 minutes 40 seconds')
        units = {round(x.base / x.value) for x in ref_quantities if x.dim == "s" and x.value} & {3600, 60}
        said += [replace(h, dim="s", value=h.value + m.value / 60, base=(h.value + m.value / 60) * unit, meridiem=None)
                 for h in said if h.dim == CLOCK[0] and re.fullmatch(r"\d{1,2}:\d\d", h.text)
                 for m in said if m.dim == CLOCK[1] and m.text == h.text for unit in units]
        ref_quantities, said = clocks_alike(ref_quantities, said)  # '10.30' beside 'half past ten'
        if not said:
            shown = _texts(ref_quantities) or "a number"
            return "missing", f"gives no number (the reference says {shown})"
        # a phone number grouped otherwise: '07700 418552' for '07700 418 552'
        def digits(found) -> str:
            return "".join(re.sub(r"\D", "", x.text) for x in found if x.dim is None)

        if len(digits(ref_quantities)) >= PHONE_DIGITS and digits(ref_quantities) in digits(said):
            return "match", f"the same digits ({digits(ref_quantities)})"
        # a bare gold number counts what the question asks about ('twenty' → twenty countries)
        ref = [_counting(x, asked_noun) if asked_noun and x.noun is None and x.dim is None else x
               for x in ref_quantities]
        stated = {id(x) for x, y in zip(ref, ref_quantities) if y.noun}

        def fits(x, y):
            """The same number in the same role: 'twenty years' is not the answer to 'how many countries'."""
            if not x.matches(y) or (x.noun and y.dim) or (x.dim and not y.dim and y.noun):
                return False
            return not (id(x) in stated and y.noun and not _same_counted(x.noun, y.noun))

        found = [x for x in ref if any(fits(x, y) for y in said)]
        # the same noun counted differently ('six parents' for 'fourteen parents'), the same unit measured differently
        for x in ref:
            if not any(fits(x, y) for y in said) and not (found and _in_brackets(x, r.text)):
                other = next((y for y in said if (x.noun and y.noun and same_word(x.noun, y.noun))
                              or (x.dim and y.dim == x.dim)), None)
                if other is not None:
                    return "conflict", f"different number: {other.text}, the reference says {x.text}"
                if id(x) in stated and any(x.matches(y) and y.noun for y in said):
                    return "conflict", f"counts something else than the reference ({x.text})"
        # 'out of 8' in '6 of 8' says what the answer is counted against, not the answer
        # a year left off a date said ('by Friday the second of August' for '2 August 2024'); what the reference
        # adds in brackets ('1 hour 45 minutes (21:16 to 23:01)', 'Tomorrow (Friday 10 October)') is a gloss
        dated = any(_said_month(y, c.text) for y in found) or any(
            _said_month(z, c.text) for z in said if any(z.matches(y) for y in found))
        missing = [x for x in ref if x not in found and not (found and _out_of(x, r.text))
                   and not (_year_of_a_date(x, r.text) and dated and not any(_year_of_a_date(y, c.text) for y in said))
                   and not (found and _in_brackets(x, r.text))]
        if q is not None and q.numeric and any(x.dim in MONEY for x in found) \
                and all(x.dim not in MONEY for x in missing):
            missing = []  # the price asked for, said without what it buys: 'Five pounds.' for '£5 for six'
        if not missing:
            return "match", f"the number matches ({_texts(ref_quantities)})"
        if found:
            return "partial", f"only part of the numbers match (missing {_texts(missing)})"
        return "conflict", f"different number: {_texts(said)}, the reference says {_texts(ref_quantities)}"

    def _conflict(self, q, r, c) -> str | None:
        """A closed-class term, an opposite word or a negation that contradicts the reference."""
        echo = q.lemmas if q is not None else set()
        opposite = _opposite_word(r, c, echo)
        if opposite:
            return opposite
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
                          if not any(_same_or_clipped(m, x) for x in ref_words)}
                if not theirs or any(_same_or_clipped(m, x) for m in mods for x in cand_words) \
                        or any(_synonym_said(m, theirs) for m in mods) \
                        or any(_synonym_said(f"{m} {head}", {f"{t} {head}" for t in theirs}) for m in mods):
                    continue  # 'the closest port' for 'the nearest port'; 'a grandfather clock' is a 'longcase clock'
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
        known = set(r.lemmas) | echo
        # to 'who', a place the answer names ('Her sibling from Lima.') is where someone is, not another someone,
        # unless the reference names a place too ('restaurants in Glasgow')
        aside = c.places if q is not None and q.wh in ("who", "whom", "whose") and not r.places else []
        if re.search(r"\b(?:his|her|their)\b", r.text.lower()) or (q is not None and q.wh in ("who", "whom")):
            # "Edith Harwood's nephew" for 'her nephew, Dr Samuel Harwood'; to 'who', "Emrys's son" names the son
            aside = aside + c.possessors
        aside = aside + c.described  # 'the tree that Ruth's grandfather planted' is a tree, not Ruth
        new = [e for e in c.entities if not e <= known and e not in aside]
        found, missed = None, []
        for ref in ref_names:
            hit = None
            for name in c.entities:
                if _family(name) & _family(ref) and not (_family(name) - _family(ref) and _family(ref) - _family(name)):
                    if found is None and name in c.possessors and not any(e & ref for e in r.possessors) \
                            and q is not None and q.wh in ("who", "whom"):
                        # "Piet's brother" is someone else than Piet
                        return "missing", f"names someone of {' '.join(sorted(name))}'s, not {' '.join(sorted(ref))}"
                    hit = f"contains the reference entity ({' '.join(sorted(ref))})"
                    break
            if hit is None and all(w in text_words for w in ref):
                hit = f"contains the reference entity ({' '.join(sorted(ref))})"
            if hit is None and any(_other_name(ref, r.text, name, c.text) for name in c.entities):
                hit = f"gives another name of the reference's ({' '.join(sorted(ref))})"  # 'Saigon', 'Bombay'
            if hit is None and _capital_of(ref, r.text, c.text):
                hit = f"names the country whose capital the reference is ({' '.join(sorted(ref))})"
            if hit is None:
                missed.append(ref)
            found = found or hit
        swapped = [e for e in new if not any(e & ref for ref in ref_names) and not countries(" ".join(e))]
        if found and missed and swapped and len(c.entities) == len(r.entities) \
                and not any(countries(" ".join(m)) for m in missed):
            # one of the reference's names said, another swapped: 'Stockholm, Sweden' for 'Uppsala, Sweden'
            return "missing", (f"names {' '.join(sorted(swapped[0]))} where the reference says "
                               f"{' '.join(sorted(missed[0]))}")
        if found:
            return "found", found
        ref_name = " ".join(sorted(ref_names[0]))
        if new:
            return "missing", f"names a different entity ({' '.join(sorted(new[0]))}), the reference says {ref_name}"
        return "absent", f"does not contain the reference entity ({ref_name})"

    def _other_kind(self, q, r, c, named: bool = False) -> str | None:
        """Another thing of the same kind as the reference's: 'the cellar' for 'the attic' (both rooms), 'a nurse'
        for 'a doctor'. Embeddings put such pairs close together; WordNet tells them apart. When the answer names the
        reference's entity (``named``), a noun beside the name can still be swapped ('a robin named Tuppence');
        otherwise an answer that keeps one of the reference's nouns is read as adding detail ('a field by the
        lighthouse' for 'a meadow near the lighthouse')."""
        echo = q.lemmas if q is not None else set()
        # a noun of the reference the answer leaves out, and one it says instead
        ref = [n for n in r.nouns if n not in echo and not _said(n, set(c.lemmas))]
        said = [n for n in c.nouns if n not in echo and not _said(n, set(r.lemmas))]
        # the head noun swapped ('the attic of the mill' for 'a cellar under the old mill') is no added detail
        head = r.root if r.root in r.nouns else next((w for w in r.lemmas if w in r.nouns and w not in echo), None)
        if not ref or not said or (not named and head not in ref
                                   and any(_said(n, set(c.lemmas)) for n in r.nouns if n not in echo)):
            return None
        for h in ref:
            for n in said:
                kind = _kind_in_common(h, n)
                # a man can be a worker: kinds this broad do not exclude each other; a synonym is no other kind
                if kind in BROAD_KINDS or _synonym_said(h, {n}) or _defines(n, h):
                    continue
                # near-synonyms in sibling senses ('shore' for 'beach', 'professor' for 'teacher') stay close
                if kind and self._cos(n, h) < SAME_KIND:
                    return f"names another {kind} ({n}), the reference says {h}"
        return None

    @staticmethod
    def _other_country(question, reference, candidate) -> str | None:
        """A country (or nationality) other than the reference's: 'Chile' for 'Peru', 'Belgian' for 'Dutch'."""
        asked = countries(question or "")
        ref, cand = countries(reference) - asked, countries(candidate) - asked
        if ref and cand and not ref & cand:
            return f"names another country ({', '.join(sorted(cand))}), the reference says {', '.join(sorted(ref))}"
        return None

    def _story_sentences(self, story: str) -> list[tuple[set[str], str, list]]:
        """Each sentence of the story: its words, its text, and its tokens."""
        if story not in self._stories:
            doc = parsed_story(story) if self.nlp is load_nlp().nlp else self.nlp(story)
            self._stories[story] = [({normalize_word(t.lemma_.lower()) for t in sent if t.is_alpha} |
                                     {t.lower_ for t in sent if t.is_alpha}, sent.text, list(sent))
                                    for sent in doc.sents]
        return self._stories[story]

    def _story_persons(self, story: str) -> list[tuple[int, int, frozenset[str]]]:
        """The people the story names, in order: (sentence, token index, name words)."""
        out = []
        for k, (_, _, tokens) in enumerate(self._story_sentences(story)):
            seen = set()
            for tok in tokens:
                if tok.ent_type_ == "PERSON" and tok.ent_iob_ == "B":
                    span = [tok] + [x for x in tokens if x.i > tok.i and x.ent_type_ == "PERSON" and x.ent_iob_ == "I"
                                    and all(y.ent_iob_ == "I" for y in tokens if tok.i < y.i <= x.i)]
                    words = frozenset(x.lower_ for x in span if x.is_alpha and x.lower_.rstrip(".") not in TITLES)
                    if words and tok.i not in seen:
                        out.append((k, tok.i, words))
                        seen.update(x.i for x in span)
        return out

    def _story_subjects(self, story: str) -> list[tuple[int, int, frozenset[str], bool]]:
        """The names in the story, in order: (sentence, token index, name words, whether the name is a subject)."""
        out = []
        for k, (_, _, tokens) in enumerate(self._story_sentences(story)):
            group = []
            for tok in tokens + [None]:
                if tok is not None and tok.pos_ == "PROPN" and tok.text[:1].isupper():
                    group.append(tok)
                    continue
                words = frozenset(x.lower_ for x in group if x.is_alpha and x.lower_.rstrip(".") not in TITLES)
                if words:
                    head = next((x for x in group if x.head not in group), group[-1])
                    out.append((k, group[0].i, words, head.dep_ in ("nsubj", "nsubjpass")))
                group = []
        return out

    def _story_link(self, story, q, r, c) -> str | None:
        """Does the story say that what the answer describes is the reference's entity? ('the younger of the two
        brothers' for 'Tom' when the story says 'Tom, the younger of the two'). Every word the answer adds must
        stand in the story's sentences about that entity, and the answer may name no other person."""
        echo = q.lemmas if q is not None else set()
        names = [e for e in r.entities if not e <= echo] or [
            frozenset(w.lower() for w in re.findall(r"\b[A-Z][a-z]+\b", r.text)) - echo - {"the"}]
        names = [e for e in names if e]
        if not names:
            return None
        if not _name_like(q, r, names):
            return None  # the reference is not a name: 'restaurants in Glasgow and people at the market'
        name_words = set().union(*names)
        about = [lemmas for lemmas, _, _ in self._story_sentences(story) if any(e & lemmas for e in names)]
        told = set().union(*about) if about else set()
        # a person's name is short: not 'Kirchberg Volunteer Fire Brigade Duty Roster', a heading read as one
        persons = {w for *_, p in self._story_persons(story) if len(p) <= NAME_WORDS for w in p}
        # the answer may name what the story says beside the entity ('the Comets captain'), but no other person, except
        # as the one whose relative it is ("Livia's father" for Benedetto, where the story says 'his daughter Livia')
        if any(not (e <= name_words) and not countries(" ".join(e)) and (e & persons or not e <= told)
               and e not in c.possessors for e in c.entities):
            return None
        words = [w for w in c.content if not any(same_word(w, x) for x in echo)]
        if not [w for w in words if not any(same_word(w, x) for e in c.entities for x in e) or names_an_agent(w)]:
            # a name alone is not a description: 'the Millbrook Comets' for 'the Harbourside Otters'; a title is
            # ('The Customer Care Manager')
            return None
        tellers = _teller(story, c.text)
        untold = [w for w in words if not any(same_word(w, x) for x in told) and w not in tellers]
        if len(untold) > _own_words(words):
            return None
        # sharing a sentence is not enough ('moved from Thursday to Wednesday'): one of the answer's nouns must
        # stand beside the name in the story, as its apposition, title, modifier or predicate
        nouns = [w for w in c.nouns if not any(same_word(w, x) for x in echo)] or words
        nouns += [w for e in c.entities for w in e if w in told and w not in name_words]  # a title: 'Head of …'
        if any(_beside(tokens, name_words, nouns) for _, _, tokens in self._story_sentences(story)):
            return f"the story says that {' '.join(words)} is {' '.join(sorted(names[0]))}"
        return None

    def _story_names(self, story, q, r, c) -> str | None:
        """A name for the reference's description ('Pádraig Mulvey' for 'a 71-year-old fisherman'): the story
        introduces the description and names that person next — in apposition, or as the first person named after
        it in the same or the next sentence."""
        echo = q.lemmas if q is not None else set()
        if q is not None and q.wh not in ("who", "whom", "whose"):
            return None
        if any(not e <= echo for e in r.entities) or r.root not in r.nouns or r.root in echo:
            return None
        named = [e for e in c.entities if not e <= echo]
        if len(named) != 1:
            return None
        sentences, names = self._story_sentences(story), self._story_subjects(story)
        for k, (lemmas, _, tokens) in enumerate(sentences):
            mentions = [tok.i for tok in tokens if normalize_word(tok.lemma_.lower()) == r.root]
            if not mentions:
                continue
            after = [p for s, i, p, subject in names if subject and ((s == k and i > mentions[0]) or s == k + 1)]
            beside = [p for s, i, p, _ in names if s == k and 0 < mentions[0] - i <= 4]  # 'Anders Bakke, a farmer'
            for p in beside[-1:] + after[:1]:
                if p & named[0]:
                    told = lemmas | (sentences[k + 1][0] if k + 1 < len(sentences) else set())
                    others = [w for w in c.content if w not in named[0] and not any(same_word(w, x) for x in echo)]
                    if all(_said(w, told) for w in others):
                        return f"the story names the {r.root} {' '.join(sorted(p))}"
            return None
        return None

    def _story_event(self, story, q, r, c) -> str | None:
        """The answer picks out the reference's entity by what the story says of it in a relative clause ('the man
        who ran the post office back then' for 'Mr Pritchard' when the story says 'Mr Pritchard, who ran the place
        then'): most of the clause's words, and all its numbers, stand in one story sentence that names the entity
        and no other person."""
        echo = q.lemmas if q is not None else set()
        names = [e for e in r.entities if not e <= echo]
        if not names or not c.clauses or any(not e <= echo and e not in c.described for e in c.entities):
            return None
        words = {w for said in c.clauses.values() for w in said if not any(same_word(w, x) for x in echo)}
        if len(words) < 2:
            return None
        persons = self._story_persons(story)
        for k, (lemmas, text, _) in enumerate(self._story_sentences(story)):
            others = [p for s, _, p in persons if s == k and not any(p & e for e in names)]
            if any(e <= lemmas | {fold_accents(w) for w in lemmas} for e in names) and not others \
                    and 3 * sum(_said(w, lemmas) for w in words) >= 2 * len(words) \
                    and all(any(x.matches(y) for y in quantities(text)) for x in c.quantities):
                return f"the story says {' '.join(sorted(names[0]))} is the one who {' '.join(sorted(words))}"
        return None

    def _story_kin(self, story, q, r, c) -> str | None:
        """The answer calls the reference's person a relative the story does not ('her sister Layla' when the story
        says 'her cousin Layla')."""
        echo = q.lemmas if q is not None else set()
        said = {w for w in c.lemmas if w in RELATIONS} - set(r.lemmas) - echo
        names = [e for e in r.entities if not e <= echo]
        if not said or not names:
            return None
        about = [lemmas for lemmas, _, _ in self._story_sentences(story) if any(e <= lemmas for e in names)]
        told = {normalize_word(w) for lemmas in about for w in lemmas} & RELATIONS
        if told and not said & told:
            return (f"calls {' '.join(sorted(names[0]))} {', '.join(sorted(said))}; "
                    f"the story says {', '.join(sorted(told))}")
        return None

    @staticmethod
    def _description_of_reference(q, r, c, told: frozenset[str] = frozenset(),
                                  tellers: set[str] | frozenset[str] = frozenset()) -> bool:
        """The answer gives what the reference says about the entity, without its name ('her sister' for 'her
        sister Dagny', 'the office manager' for 'Graham Odell, the office manager'), and nothing the story does not
        say about it (``told``: the words of the story's sentences that name it; ``tellers``: what the answer calls
        the story's teller, 'the author' in "the author's grandmother" for 'my grandmother'). A name those
        sentences give may stand beside it as a place ('… in her kitchen in Brno') or in a clause that describes it
        ('the gardener who works for Anna Berg'), and the source it cites ('according to the recipe') is no
        description."""
        echo = q.lemmas if q is not None else set()
        if any(not e <= echo and not ((e in c.places or e in c.described) and e <= told) for e in c.entities) \
                or not _name_like(q, r):
            return False
        name_words = set().union(*r.entities) if r.entities else set()
        cited = {w for m in re.finditer(r"\baccording to (?:the |this |that |your )?(\w+)", c.text.lower())
                 for w in ("accord", m.group(1))}
        words = [w for w in c.content if not any(same_word(w, x) for x in echo) and w not in tellers | cited]
        described = {n for n in r.nouns if n not in name_words and n not in echo}
        untold = [w for w in words if not _said(w, set(r.lemmas) | told)]
        return bool(words) and len(untold) <= (_own_words(words) if told else 0) and any(
            _said(n, set(c.lemmas)) for n in described)

    def _told_about(self, story, r) -> frozenset[str]:
        """The words of the story's sentences that name the reference's entity."""
        if not story or not r.entities:
            return frozenset()
        return frozenset().union(*[lemmas for lemmas, _, _ in self._story_sentences(story)
                                   if any(e <= lemmas for e in r.entities)] or [frozenset()])

    @staticmethod
    def _only_the_question(q, r, c) -> bool:
        """The answer says nothing the question does not ('The study suggests something about octopuses.')."""
        if q is None or c.quantities or r.unknown:
            return False
        own = [w for w in r.content if not any(same_word(w, x) for x in q.lemmas)]
        said = [w for w in c.content if not any(same_word(w, x) for x in q.lemmas)]
        return bool(own) and not said and not any(not e <= q.lemmas for e in c.entities)

    def _part_of_list(self, q, r, c) -> str | None:
        """Only some members of the reference's list ('lemon juice' for 'lemon juice and fresh coriander'),
        unless the question asks for one."""
        if len(r.conjuncts) < 2 or (q is not None and re.search(r"\b(?:one|any|an example|some)\b", q.text.lower())):
            return None
        if GROUPS & set(c.lemmas) - set(r.lemmas):  # 'the Marsh sisters' for 'Ada and Bea Marsh'
            return None
        echo = q.lemmas if q is not None else set()
        members = [m for m in ({w for w in m if not any(same_word(w, x) for x in echo)} for m in r.conjuncts) if m]
        words = set(c.lemmas)
        # a closed compound is said by its head ('suitcase' by 'a leather case')
        missing = [m for m in members if not any(
            _said(w, words) or any(w.endswith(x) and len(w) > len(x) >= 3 for x in c.nouns) for w in m)]
        if not missing or len(missing) == len(members):
            return None
        # another word for the member ('poems' for 'poetry', 'relatives' for 'family members'); names are not
        # paraphrased ('German' is not 'English')
        said = [" ".join(sorted(m)) for m in c.conjuncts] or sorted(c.nouns)
        names = set().union(*r.entities) if r.entities else set()
        for m in missing:
            if m & names or not any(self._cos(" ".join(sorted(m)), s) >= SAME_MEMBER for s in said):
                return f"gives only part of the reference (leaves out {' '.join(sorted(m))})"
        return None

    @staticmethod
    def _hedge(q, r, c) -> str | None:
        """Two answers offered, one of them the reference's ('Maybe cumin or turmeric.', 'Maybe 14 or 16.')."""
        if "or" in r.lemmas or (q is not None and "or" in q.lemmas):
            return None
        m = re.search(r"(?<![\w:.])([\d:.]+|[a-z]+) or (?:about |around |maybe |perhaps )?([\d:.]+|[a-z]+)\b",
                      c.text.lower())
        pair = [quantities(m.group(k)) for k in (1, 2)] if m else []
        if pair and all(len(x) == 1 for x in pair) and r.quantities:
            hits = [any(x[0].matches(y) for y in r.quantities) for x in pair]
            if any(hits) and not all(hits):
                return f"hedges between answers ({m.group(1)} or {m.group(2)}); the reference gives one"
        sides = re.split(r"\bor\b", c.text, maxsplit=1)
        if len(sides) == 2 and (r.entities or r.quantities):
            # 'Either 19 March or 26 March.', 'Either Shanty and Folk or Chapel Choirs.': the reference on one side
            # of the 'or', something of its own on the other
            def gives(side: str) -> tuple[bool, bool]:
                said = quantities(side)
                names = {w.lower() for w in re.findall(r"\b[A-Z][\w'-]+", side)}
                ref = any(e <= names for e in r.entities) or any(x.matches(y) for x in said for y in r.quantities)
                own = any(not any(x.matches(y) for y in r.quantities) for x in said if x.dim or not x.noun) \
                    or bool(names - set().union(*r.entities, set()) - {"i", "either", "maybe", "perhaps"})
                return ref, own

            (ref_l, own_l), (ref_r, own_r) = gives(sides[0]), gives(sides[1])
            if (ref_l and not ref_r and own_r) or (ref_r and not ref_l and own_l):
                shown = f"{sides[0].split()[-1] if sides[0].split() else ''} or {' '.join(sides[1].split()[:3])}"
                return f"hedges between answers ({shown}); the reference gives one"
        if len(c.alternatives) < 2:
            return None
        words = set(r.lemmas)
        hits = [any(_said(w, words) for w in alt) for alt in c.alternatives]
        if any(hits) and not all(hits):
            offered = " or ".join(" ".join(sorted(alt)) for alt in c.alternatives)
            return f"hedges between answers ({offered}); the reference gives one"
        return None

    @staticmethod
    def _evasive(q, c, recall: float) -> bool:
        if recall > 0 or not q.content:
            return False
        repeated = sum(1 for w in q.content if w in set(c.lemmas))
        return repeated >= max(1, len(q.content) // 2) and c.n_tokens >= 5


KIN = frozenset(CLOSED_CLASSES["kin"])
# what one person is to another: a friend is not a sister
RELATIONS = KIN | {"friend", "neighbor", "colleague", "partner", "flatmate", "roommate", "classmate", "boss"}
BROAD_KINDS = frozenset({"person", "organism", "object", "whole", "artifact", "entity", "thing", "matter",
                         "abstraction", "group", "causal agent", "physical entity", "living thing"})
GROUPS = frozenset({"sister", "brother", "family", "couple", "pair", "twin", "both", "parent", "everyone", "team"})
PLACEHOLDERS = frozenset({"something", "somewhere", "somehow", "sometime", "stuff"})  # 'someone from Chile' describes


def _own_words(words: list[str]) -> int:
    """How many of an answer's words a description may add that the story does not say of the person: about one in
    four ('A sound engineer, who lent them his own amp' when the story says 'his own, a battered old Ampeg')."""
    return (len(words) - 1) // 3


def _beside(tokens, name_words: set[str], nouns) -> bool:
    """Is one of ``nouns`` syntactically next to the name in this sentence: at most three arcs apart, through no verb
    but a copula ('Tom, the younger of the two brothers', 'her husband Arjun', 'Piet is the gardener')?"""
    if any(w in name_words for w in nouns):  # a title of the name: 'the ambassador' for 'Ambassador Ines Moreau'
        return True
    names = [t for t in tokens if t.lower_ in name_words]
    said = [t for t in tokens if t.lower_ not in name_words
            and any(same_word(normalize_word(t.lemma_.lower()), w) for w in nouns)]
    for a in names:
        up_a = [a] + list(a.ancestors)[:3]
        for b in said:
            up_b = [b] + list(b.ancestors)[:3]
            common = next((x for x in up_a if x in up_b), None)
            if common is None or up_a.index(common) + up_b.index(common) > 3:
                continue
            ia, ib = up_a.index(common), up_b.index(common)
            between = up_a[1:ia] + up_b[1:ib] + ([common] if ia and ib else [])
            if all(_joins(x) for x in between) and not any(x.dep_ == "conj" for x in up_a[:ia] + up_b[:ib]):
                return True
    return False


def _joins(token) -> bool:
    """May this token stand between a name and what describes it: not a verb but 'be', 'name' or 'call' ('a gardener
    named Piet'), and not a preposition of a range or a contrast ('Thursday to Saturday')?"""
    if token.pos_ in ("VERB", "AUX"):
        return token.lemma_ in ("be", "name", "call")
    return not (token.pos_ == "ADP" and token.lower_ in ("to", "from", "until", "till", "than", "versus", "against",
                                                         "instead", "after", "before"))


def _family(name: frozenset[str]) -> set[str]:
    """A name's words, a family named in the plural as its surname ('the Harrowgates' for 'the Harrowgate family')."""
    return {w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 4 else w for w in name} - {"family"}


CODE = re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z\d]{2,8}\b")  # letters and digits: '14C', 'B12', 'A4'


def _other_code(reference: str, candidate: str) -> str | None:
    """A code with the reference's digits and other letters, or the other way round: seat '14A' for '14C'."""
    ref = {x.upper() for x in CODE.findall(reference)}
    ref = {x for x in ref if re.sub(r"\d", "", x).lower() not in {*UNITS, "am", "pm", "st", "nd", "rd", "th", "s"}}
    for said in {x.upper() for x in CODE.findall(candidate)} - ref:
        for code in ref:
            if re.sub(r"\D", "", said) == re.sub(r"\D", "", code) or re.sub(r"\d", "", said) == re.sub(r"\d", "", code):
                return f"says {said}, the reference says {code}"
    return None


def _same_or_clipped(a: str, b: str) -> bool:
    """The same word, or one a clipping of the other ('veg' for 'vegetable', 'lab' for 'laboratory')."""
    short, long_ = sorted((a, b), key=len)
    return same_word(a, b) or (len(short) >= 3 and len(long_) > len(short) + 2 and long_.startswith(short))


def _said(word: str, words: set[str]) -> bool:
    """Is the word among these, or a closed compound of two of them ('woodpile' in 'a pile of wood')?"""
    if any(same_word(word, x) for x in words):
        return True
    return len(word) >= 7 and any(word[:k] in words and word[k:] in words for k in range(3, len(word) - 2))


def _phrase(words: frozenset[str], text: str) -> str | None:
    """The run of the text's words that makes up a name ('Ho Chi Minh City' for {ho, chi, minh, city})."""
    found = re.findall(r"[\w'-]+", text)
    for k in range(len(found) - len(words) + 1):
        run = found[k:k + len(words)]
        if {w.lower() for w in run} == set(words):
            return " ".join(run)
    return None


def _other_name(ref: frozenset[str], ref_text: str, name: frozenset[str], text: str) -> bool:
    """Is the name one WordNet gives the reference's name ('Saigon' for 'Ho Chi Minh City', 'Burma' for 'Myanmar')?"""
    a, b = _phrase(ref, ref_text), _phrase(name, text)
    # names only: WordNet writes them with a capital ('biscuit' and 'cookie' are no names of one dog)
    return bool(a and b) and b.lower() in {x.lower() for x in synonyms(a, "NOUN") if x[:1].isupper()}


PERMISSION = re.compile(r"\b(?:allowed|permitted|allow|permit|ok|okay)\b|^\W*(?:can|may)\b")
FORBIDDEN = re.compile(r"\b(?:banned|forbidden|prohibited|barred|outlawed)\b")
PHONE_DIGITS = 7  # this many digits in a row are one number however they are grouped


def _teller(story: str, text: str) -> set[str]:
    """The owners an answer names for what the story calls its teller's own: 'museum' in "the museum's conservator"
    where an audio guide says 'our conservator', 'writer' in "the writer's grandmother" for 'my grandmother', and
    the owner its heading names."""
    # 'my grandmother', 'our senior stylist', 'my son Idris': the word after 'my' or the one after it
    own = {normalize_word(w) for m in re.finditer(r"\b(?:my|our) (\w+)(?: (\w+))?", story.lower()) for w in m.groups()
           if w}
    # the heading names whose document it is: "the association's secretary" in 'Minutes of the … Association'
    heading = {normalize_word(w) for w in re.findall(r"\w+", story.strip().split("\n", 1)[0].lower())}
    return {normalize_word(m.group(1)) for m in re.finditer(r"\b(\w+)'s (?:\w+ )?(\w+)", text.lower().replace("’", "'"))
            if normalize_word(m.group(2)) in own or normalize_word(m.group(1)) in heading}


def _the_one_named(q, r, c) -> bool:
    """Does 'who' ask for the one person the reference names (whatever else it says of them), and the answer name
    them?"""
    if q is None or q.wh not in ("who", "whom"):
        return False
    named = [e for e in r.entities if not e <= q.lemmas]
    if len(named) == 1:
        return True
    # the name the reference opens with, whatever follows it ('Zofia Pellegrini-Shaw of Kitteridge & Vale Lettings')
    first = re.search(r"[a-z]+", r.text.lower())
    return bool(named and first and first.group(0) in named[0] and c.entities
                and all(e <= named[0] for e in c.entities))


def _capital_of(ref: frozenset[str], ref_text: str, text: str) -> bool:
    """Does the answer call the reference's city the capital of the country WordNet says it is the capital of ('the
    Portuguese capital' for 'Lisbon': 'capital and largest city … of Portugal')?"""
    if not re.search(r"\bcapital\b", text.lower()):
        return False
    name = _phrase(ref, ref_text)
    glosses = [s.gloss.split(";")[0].lower() for s in senses(name, "NOUN")] if name else []
    return any(re.match(rf"(?:the )?capital\b.*\bof {re.escape(country)}\b", g)
               for country in countries(text) for g in glosses)


def _synonym_said(word: str, words: set[str]) -> bool:
    """Is a word of the same first sense among these ('couch' for 'sofa', 'close' for 'near', 'shut' for 'close')?"""
    for pos in ("NOUN", "VERB", "ADJ", "ADV"):
        if {x.lower() for x in synonyms(word, pos, 1)} & words:
            return True
        if any(word in {y.lower() for y in synonyms(x, pos, 1)} for x in words):
            return True
    return False


MONTHS = "|".join(sorted(CLOSED_CLASSES["month"]))


def _year_of_a_date(x, text: str) -> bool:
    """A year that ends a date ('Tuesday 22 April 2025'): a date said without it is the same date."""
    return x.dim is None and x.value == int(x.value) and 1900 <= x.value <= 2100 and bool(re.search(
        rf"\b(?:{MONTHS})\w*,? {int(x.value)}\b", text.lower()))


def _in_brackets(x, text: str) -> bool:
    """Is the number said inside brackets ('(Friday 10 October)')?"""
    said = " ".join(_NUMBER_WORDS.findall(x.text.lower()))
    return bool(said) and any(f" {said} " in f" {' '.join(_NUMBER_WORDS.findall(m.group(1).lower()))} "
                              for m in re.finditer(r"\(([^)]*)\)", text))


_NUMBER_WORDS = re.compile(r"\d+(?:[:.,]\d+)*|[a-z]+")


def _said_month(y, text: str) -> bool:
    """A day of the month said with its month ('the 22nd of April', '22 April')."""
    return y.dim is None and 1 <= y.value <= 31 and bool(re.search(
        rf"\b{re.escape(y.text.split()[0])}\w*(?: of)? (?:{MONTHS})|(?:{MONTHS})\w* (?:the )?{re.escape(y.text)}\b",
        text.lower()))


def _defined_said(word: str, words: set[str]) -> bool:
    """Is a noun said by its definition ('He delivered the mail.' for 'postman', 'a man who delivers the mail'):
    two of the words that set it apart, at least half of them?"""
    try:
        found = senses(word, "NOUN")
    except WordNetMissing:
        return False
    if not found:
        return False
    definition = re.split(r"[;(]", found[0].gloss, maxsplit=1)[0].lower()
    apart = {normalize_word(w) for w in re.findall(r"[a-z]+", definition)} - stop_words() - genus(word) - {word}
    hits = sum(1 for w in apart if _said(w, words))
    return hits >= 2 and 2 * hits >= len(apart)


def _name_like(q, r, names=None) -> bool:
    """Is the reference mostly a name ('Anders Bakke, a sheep farmer'), not a phrase that mentions one?"""
    echo = q.lemmas if q is not None else set()
    names = names if names is not None else [e for e in r.entities if not e <= echo]
    name_words = set().union(*names) if names else set()
    if name_words and q is not None and q.wh in ("who", "whom", "whose"):
        return True  # 'Henrik, a sound engineer' answers who
    return bool(name_words) and sum(1 for w in r.content if w not in name_words
                                    and not any(same_word(w, x) for x in echo)) <= len(name_words)


def _compare_rates(reference: str, candidate: str, r) -> tuple[float, str] | None:
    """Rates per period: 'once a month' is not 'once a week'; 'weekly' is 'once a week'; 'every eight hours' is
    'three times a day'."""
    x, y = rate(reference), rate(candidate)
    if x and y and not r.closed.get("weekday"):  # 'every Sunday' is as often as 'every Saturday', and another day
        return (PASS, "the same rate") if abs(x - y) <= 0.01 * max(x, y) else (FAIL, "a different rate")
    ref, said = periods(reference), periods(candidate)
    if not ref or not said:
        return None
    if not ref.keys() & said.keys():
        return FAIL, f"a different rate (per {', '.join(said)}), the reference says per {', '.join(ref)}"
    if any(said[p] for p in ref.keys() & said.keys()) and all(x.value == 1 for x in r.quantities):
        return PASS, f"the same rate (per {', '.join(ref)})"
    return None


def _opposite_of_question(c, q) -> str | None:
    """'no' when the answer uses an antonym of the question's predicate ('unharmed' for 'injured', 'fearless'
    for 'afraid', 'disagree' for 'agree'); 'yes' when it negates one ('not unhappy')."""
    if q is None or not q.yes_no:
        return None
    words = set(c.lemmas)
    asked = q.content | {w.lower() for w in re.findall(r"[A-Za-z]+", q.text)}  # 'injured' is an adjective too
    for w in asked:
        opposite = {normalize_word(x) for pos in ("ADJ", "VERB") for x in _antonyms(w, pos) if " " not in x}
        if opposite & words:
            hit = next(iter(opposite & words))
            return "yes" if hit in c.negated else "no"
    return None


OPPOSITE_PLACES = (("above", "below"), ("before", "after"), ("over", "under"), ("inside", "outside"),  # no content
                   ("up", "down"), ("top", "bottom"), ("upstairs", "downstairs"), ("uphill", "downhill"),
                   ("upstream", "downstream"), ("forwards", "backwards"))


PRICE_QUESTION = re.compile(r"\bhow much\b.*\b(?:cost|costs|pay|pays|paid|charge|charged|price|fee|entry|ticket)\b"
                            r"|\bwhat (?:is|was|does|do) (?:the )?(?:price|fee|cost|charge)\b|\bhow much is\b")


# verbs that say the thing asked about did not happen, whatever it was
REFUSING_PHRASAL = frozenset({("call", "off"), ("give", "up"), ("pull", "out"), ("drop", "out"), ("back", "out"),
                              ("put", "off"), ("turn", "down"), ("rule", "out")})
NO_PART = re.compile(r"\b(?:play(?:s|ed)?|ha(?:s|d|ve)|ma(?:de|kes?)) (?:no|little) (?:part|role|difference|effect)\b"
                     r"|\b(?:had|has|have) nothing to do with\b")
REFUSING = frozenset({"decline", "refuse", "reject", "deny", "fail", "forget", "neglect", "lose", "miss", "defy",
                      "disobey", "skip", "disqualify", "cancel", "postpone", "abandon", "withdraw", "scrap"})


# "doesn't cost anything", 'will not cost a penny': a price of nothing said with a negation
NO_COST = re.compile(r"\b(?:doesn't|does not|don't|do not|won't|will not|didn't|did not) cost (?:\w+ )?"
                     r"(?:anything|a penny|a thing|a cent)\b")


def _another_term(q, c) -> bool:
    """To 'Is the door red?', 'Is it autumn there?', an answer that names only other terms of that closed class ('It
    is painted blue.', "It's spring there.")."""
    for kind, terms in c.closed.items():
        asked = q.lemmas & CLOSED_CLASSES[kind]
        if asked and not asked & terms:
            return True
    return False


def _names_another(q, c) -> bool:
    """To 'Is X the Y?', an answer that says who or what the Y is with a name the question does not say ('Is
    Akureyri the alternate?' — 'The alternate is Egilsstadir.')."""
    asked = re.match(r"\W*(?:is|was|are|were) (.+?) the ([\w-]+)\W*$", q.text, re.IGNORECASE)
    said = re.match(r"\W*the ([\w-]+) (?:is|was|are|were) (?!not\b)(.+)", c.text, re.IGNORECASE)
    if not asked or not said or normalize_word(said.group(1).lower()) != normalize_word(asked.group(2).lower()):
        return False
    return any(not e <= q.lemmas for e in c.entities)


def _costs_nothing(r) -> bool:
    """'free', 'nothing', 'no charge', 'no extra charge', "doesn't cost anything", '£0': a price of nothing."""
    return bool(re.search(r"\b(?:free|nothing|no (?:extra |additional )?(?:charge|cost|fee)|costs? nothing|zero)\b",
                          r.text.lower()) or NO_COST.search(r.text.lower().replace("’", "'"))) \
        or any(x.value == 0 and x.dim in MONEY for x in r.quantities)


COUNTED_PEOPLE = frozenset({"people", "person", "individual"})


def _same_counted(a: str, b: str) -> bool:
    """Do two counted nouns count the same things: 'twelve firefighters' and '12 people'?"""
    if same_word(a, b) or {a, b} & COUNTED_ANYTHING:
        return True  # 'two instalments' and 'two parts'
    return bool({a, b} & COUNTED_PEOPLE) and all(w in COUNTED_PEOPLE or names_an_agent(w) for w in (a, b))


COUNTED_ANYTHING = {"part", "piece", "lot", "bit", "item", "thing", "one", "portion", "batch", "lump"}


def _out_of(x, text: str) -> bool:
    """Is this number the total another is counted out of ('6 of 8', '31 out of 38')?"""
    return re.search(rf"\d\s+(?:out\s+)?of\s+(?:the\s+)?{re.escape(x.text)}\b", text.lower()) is not None


def _counting(x, noun: str):
    """A bare reference number as what the question counts: 'seven' to 'For how many days?' is seven days (a unit,
    so 'a week' matches), 'twenty' to 'How many countries?' twenty countries."""
    unit = UNITS.get(noun) or UNITS.get(noun + "s")
    if unit and unit[0] not in CLOCK:
        return replace(x, dim=unit[0], base=x.value * unit[1])
    return replace(x, noun=noun)


def _opposite_word(r, c, echo) -> str | None:
    """The candidate puts a word's direct WordNet antonym where the reference has the word ('left' for 'right',
    'below' for 'above', 'clockwise' for 'anticlockwise', 'oldest' for 'youngest') and leaves the word out."""
    theirs = [w for w in c.content if w not in r.content and w not in echo]
    for w, x in OPPOSITE_PLACES:
        for a, b in ((w, x), (x, w)):
            # a particle counts where both say its verb: 'hang up' is 'put the phone down'
            if a in r.lemmas and a not in c.lemmas and b in c.lemmas and b not in r.lemmas \
                    and r.particles.get(a, b) in c.lemmas and c.particles.get(b, a) in r.lemmas:
                return f"says {b}, the reference says {a}"
    for w in r.content:
        if w in echo or w in c.content:
            continue
        opposite = {x.lower() for pos in ("ADJ", "ADV") for x in _antonyms(w, pos, clusters=False)}
        said = next((x for x in theirs if x in opposite), None)
        if said:
            return f"says {said}, the reference says {w}"
    return None


def _antonyms(word: str, pos: str, clusters: bool = True) -> tuple[str, ...]:

    try:
        return antonyms(word, pos, clusters=clusters)
    except WordNetMissing:  # no antonyms; the other rules still apply
        return ()


def _defines(general: str, word: str) -> bool:
    """Does a noun name the kind a word is defined as ('field' for 'meadow': 'a field where grass … is grown')? It
    then says the same thing less precisely, not another thing."""
    try:
        return general in genus(word)
    except WordNetMissing:
        return False


def _kind_in_common(a: str, b: str) -> str | None:

    try:
        return kind_in_common(a, b)
    except WordNetMissing:
        return None


_REASON_LEAD = re.compile(r"^\W*(?:because(?: of)?|since|as|due to|in order to|so that|to)\s+", re.IGNORECASE)


def _reason_clause(text: str) -> str:
    """The clause a 'why' answer gives, without its connective ('Because a pipe broke.' → 'a pipe broke.')."""
    return _REASON_LEAD.sub("", text) or text
