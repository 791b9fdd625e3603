"""Two system answers compared by what each says to the question (MR3, MR4, DT-INV, P1–P3, the noise floor).

Neither answer is a reference. A loop is read once ('Felix built it. He built it. He built it. …' says 'Felix
built it.'). Then each answer is read for whether it answers at all: an answer that says the story does not tell,
an empty or degenerate output (one word or a short phrase over and over, a list of the same phrase, letters that
make no words, 'the ferry was the ferry'), a question asked back, a refusal ('Sorry, I can't help with that.'), an
evasive echo of the question, or an answer to 'How many cafés?' that stays on cafés without any number gives
nothing. An answer about something else ('He showed them the kite.' to 'How many?') says something: it is an
answer, a wrong one. Then:

- both give nothing: **no answer** — not agreeing, not differing; a relation reports such pairs apart and
  never counts them as violations (two different non-answers are not "the same answer", nor are they a
  divergence MR4 can rely on);
- one gives nothing: they **differ**;
- both answer: they are compared by what they answer — the polarity of a yes/no answer, the number a
  numeric question asks for (units converted, a time as hour and minutes), the name a who/which question asks
  for (in whatever sentence it stands; a place is no answer to 'who'), a list against only part of it ('Orkney,
  Caithness and the Western Isles' against 'Orkney') differs — and what no such rule settles goes to the answer
  oracle's judgement in both directions (either answer read as the other).

Measured on tests/data/agreement_pairs_*.jsonl by ``benchmarks/oracle_accuracy.py``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from mortar.answers import (CLOCK, CLOSED_CLASSES, HOUR_WORDS, MONEY, PERIOD_WORDS, PHONE, UNITS, clocks_alike,
                            first_loop, is_number_word, joined_pairs, normalize_text, number_points, quantities,
                            rate, same_word)
from mortar.nlp import stop_words
from mortar.oracle.aliases import canonical_names, countries
from mortar.oracle.answer import FAIL, NOT_TOLD_LIKE, PASS, SURE_FAIL, SURE_PASS, AnswerJudge
from mortar.wordnet import (WordNetMissing, names_a_person, names_a_place, names_an_agent, regions_of, senses,
                            synonyms)

AGREE, DIFFER, NO_ANSWER = "agree", "differ", "no answer"
NAME_QUESTIONS = ("who", "whom", "whose", "which")  # the answer is a name, in whatever sentence it stands
SHORT = 4  # words: an answer this short is its name, whatever the question word
# what the answer reader's unknown patterns do not catch: 'It's not clear.', 'No one knows why.', 'Hard to say.'
NOT_TOLD = re.compile(r"\b(?:it|that|this)(?:'s not| is not| was not|'s never| is never| isn't| wasn't) "
                      r"(?:clear|known|explained|said|certain|obvious)\b"
                      r"|\bunclear\b|\bnot (?:explained|specified|clear)\b"
                      r"|\b(?:is|are|was|were)(?: not|n't) (?:given|stated|provided|listed|mentioned)\b"
                      r"|\b(?:no ?one|nobody) (?:knows|says|tells|said)\b"
                      r"|\bnothing (?:is|was) (?:said|mentioned|given)\b"
                      r"|\bhard to (?:say|tell)\b|\bno (?:way|means) to (?:say|tell|know)\b"
                      # where the text has it, for what it says: 'The latitude was recorded in the log.'
                      r"|\b(?:is|are|was|were) (?:given|listed|recorded|explained|shown|described|written|noted|"
                      r"printed|stated|set out) (?:\w+ |with \w+ )?(?:in|on|at) (?:the|page|its|their|his|her)\b"
                      r"|\b(?:have|had|got) no (?:idea|clue)\b"
                      r"|^\W*(?:it|this|that) (?:says|is) (?:so )?(?:in|on) the \w+\W*$"  # 'It says in the notice.'
                      r"|\b(?:not something|nothing) (?:i|we) can (?:tell|say|answer)\b"
                      r"|\bplease (?:check|consult|contact|ask|visit|see|refer to)\b"  # sends the asker elsewhere
                      r"|^\W*(?:the|this|that|these|those) \w+ (?:doesn't|does not|didn't|did not|don't|do not) "
                      r"(?:say|tell|mention|specify)\b|\bgives? no answer\b|^\W*who knows\b")
# …and what they do not phrase: short answers this close (MiniLM cosine) to one of NOT_TOLD_LIKE
NOT_TOLD_COSINE, NOT_TOLD_WORDS = 0.65, 6
TAUTOLOGY = re.compile(r"^\W*(?:the |a |an )?([\w-]+(?: [\w-]+){0,6}) (?:is|was|are|were|will be|should be|must be|"
                       r"means|meant|(?:is|was|are|were) (?:found|seen|kept|put|left) (?:on|in|at|by|with))"
                       r" (?:just |only |still )?(?:the |a |an )?\1\W*$",
                       re.IGNORECASE)  # 'The ferry was the ferry.', 'Orange means orange.', 'The X was found on the X.'
# the subject's noun again as the head of what it is said to be, whatever follows: 'The captain is the captain of the
# ship.', 'The gauge is the gauge you get after blocking.'
RESTATED = re.compile(r"^\W*(?:[\w'-]+ ){0,7}?([a-z]{3,})(?: (?:on|in|at|for|of|from|with) [\w' -]{1,30}?)? "
                      r"(?:is|was|are|were|will be) (?:just |only |still |simply )?"
                      r"(?:the|a|an|his|her|their|its) (?:[\w'-]+ ){0,2}?\1\b", re.IGNORECASE)
GENERIC = {"time", "person", "people", "thing", "place", "way", "one", "stuff", "someone", "somewhere", "lot",
           # talk about the text, not from it: 'He is a person mentioned in the text.', 'The letter mentions the move.'
           "text", "story", "passage", "article", "letter", "document", "mention", "describe", "refer", "talk",
           "discuss", "information", "detail",
           # words that commit to nothing: 'Sometime soon, I think.', 'at a place to be announced', 'in due course'
           "soon", "sometime", "someday", "later", "eventually", "somebody", "something", "somehow", "probably",
           "maybe", "perhaps", "possibly", "think", "guess", "believe", "announce", "due", "course", "various",
           # a purpose or a reason named without one: 'It is used for the purpose of the assay.'
           "purpose", "reason"}
# an indefinite and what modifies it names nothing: 'someone in the family', 'someone who looks after the trail',
# 'something to do with the weather' (a name or a number in it does: 'someone called Ines Moreau')
INDEFINITE = re.compile(r"\b(?:someone|somebody|something|somewhere|anyone|anybody|anything|anywhere|whoever|"
                        r"whatever|wherever|whenever|(?:some|lots of|a lot of|all sorts of|various) (?:\w+ )?things|"
                        r"what (?:they|you|he|she|we|it) (?:need|needs|want|wants|like|likes)|"
                        r"(?:a|another|some|a different|a new) (?:place|location|spot|area)\b|another|some other)"
                        r"\b[^.,;:!?]*", re.IGNORECASE)  # 'Some things will still work.', 'whenever that is'
# 'It depends on your issue.', 'That comes down to what you have.'
DEPENDS = re.compile(r"^\W*(?:well,? )?(?:it|that) (?:all |really |just )?(?:depends|comes down to|varies)\b")
FILLER = re.compile(r"\W*(?:(?:hmm+|well|ok(?:ay)?|so|right|sure|ooh+|oh|let me think|let's see|great question|"
                    r"good question|good one|"
                    r"interesting question|that's a good question)\W*)+")
MADE_WORDS = 0.5  # fewer known words than this share: letters that make no words


@dataclass(frozen=True)
class Agreement:
    """Do two answers give the same answer? ``score`` in [0, 1] (agree when ≥ the threshold), unless
    ``no_answer``: neither answers the question, which is no outcome of agreeing or differing."""

    score: float
    no_answer: bool
    reason: str

    def outcome(self, threshold: float) -> str:
        return NO_ANSWER if self.no_answer else AGREE if self.score >= threshold else DIFFER


class AgreementJudge:
    """The answer oracle's two-answer comparison, built on its reading of answers (``AnswerJudge``)."""

    def __init__(self, judge: AnswerJudge):
        self.judge = judge
        self._results: dict[tuple, Agreement] = {}  # (question, a, b, story) → its agreement, as asked ahead
        self._told: dict[str, set[str]] = {}  # story → every word it says, read once per story

    def compare(self, question: str | None, a: str, b: str, story: str | None = None) -> Agreement:
        return self.compare_many([(question, a, b, story)])[0]

    def compare_many(self, items) -> list[Agreement]:
        """Agreements of (question, a, b[, story]) tuples: rules first, the judgements they leave in one batch.
        Each tuple's agreement is kept: judging asks ahead for a batch what its relations then ask one by one."""
        keys = [(q, a, b, s[0] if s else None) for q, a, b, *s in items]
        todo = list(dict.fromkeys(k for k in keys if k not in self._results))
        if todo:
            self._results.update(zip(todo, self._compare_all(todo)))
        return [self._results[k] for k in keys]

    def _compare_all(self, items) -> list[Agreement]:
        """Agreements of (question, a, b, story) tuples, none asked before."""
        # a loop is read once ('Felix built it. He built it. He built it. …' says 'Felix built it. He built it.')
        looped = {t: without_loop(spelled_units(canonical_names(t))) for _, a, b, _ in items for t in (a, b)}
        degenerate = {head: why for head, why in looped.values()}
        said = {(q, t): without_question(q, looped[t][0]) for q, a, b, _ in items for t in (a, b)}
        degenerate.update({said[q, t]: looped[t][1] for q, t in said if looped[t][1]})
        items = [(q or None, said[q, a], said[q, b], story) for q, a, b, story in items]
        self.judge.prepare((q, a, b) for q, a, b, _ in items)
        degenerate.update(self._not_told_alike([h for h, why in looped.values() if not why]))
        results = [self._by_rules(q, a, b, degenerate, story) for q, a, b, story in items]
        undecided = [i for i, r in enumerate(results) if r is None or r.no_answer]
        triples = []
        for i in undecided:
            q, a, b, story = items[i]
            # the story links a description to a name ('the younger brother' is Tom); between two descriptions
            # or two names it has nothing to link
            info, ra, rb = self.judge._questions.get(q) if q else None, self.judge._texts[a], self.judge._texts[b]
            story = story if bool(_names_in(info, ra)) != bool(_names_in(info, rb)) else None
            triples += [(q, a, b, story), (q, b, a, story)]
        judged = self.judge.judge_many(triples)
        for k, i in enumerate(undecided):
            (s1, r1), (s2, r2) = judged[2 * k], judged[2 * k + 1]
            score, reason = (s1, r1) if s1 >= s2 else (s2, r2)
            if IN_DOUBT[0] <= score < IN_DOUBT[1] and not self._short_and_apart(*items[i][:3]) \
                    and not reason.startswith("hedges between"):  # 'X or Y' beside 'X' shows a difference
                # read as a reference, one answer is neither clearly the other's nor clearly apart from it (no other
                # number, name, yes or no): a difference that is not shown is not reported
                score, reason = IN_DOUBT[1], f"not shown to differ ({reason})"
            if results[i] is None:
                results[i] = Agreement(score, False, reason)
            else:  # keep how alike the two non-answers look, for the record; the outcome is "no answer"
                results[i] = Agreement(score, True, results[i].reason)
        return results

    def _untold(self, q, r, story: str) -> str | None:
        """Does the answer say, beyond the question's words, things the story does not ('Artists often keep unusual
        hours.', 'Island ferries are a lovely way to travel.')? Talk of that kind beside a non-answer shows no
        answer; an answer in the story's own words does."""
        plain = q.wh not in ("why", "how") or q.numeric  # a name, a number or a term answers it …
        counted = plain and q.wh not in ("who", "whom", "whose") and _counts(r, q)  # … a number not to 'who'
        if (q.yes_no and self.judge._polarity(r, q)) or counted or (plain and (_names_in(q, r) or r.closed)):
            return None  # a yes or no, a name, a number or a term answers, told or not: 'Green.' to 'What colour?'
        if story not in self._told:
            self._told[story] = set().union(*(words for words, _, _ in self.judge._story_sentences(story)))
        told = self._told[story]
        # advice is no claim about the story: 'Behind the hall; it's best to come early.'
        advice = {w for m in ADVICE.finditer(r.text.lower().replace("’", "'")) for w in _WORD.findall(m.group(0))}
        new = [w for w in _new_words(q, r) if not any(same_word(w, x) for x in advice)]
        missing = [w for w in new if w not in told and not any(same_word(w, x) for x in told)]
        if new and len(missing) > UNTOLD_SHARE * len(new):
            return f"says what the story does not ({', '.join(missing)})"
        return None

    def _short_and_apart(self, question, a, b) -> bool:
        """Two short answers that share no word beyond the question's ('A beetle.' and 'A bumblebee.', 'Dark
        chocolate.' and 'Lemon and lavender.'): a difference shown plainly."""
        q = self.judge._questions.get(question) if question else None
        new_a, new_b = (_new_words(q, self.judge._texts[t]) for t in (a, b))
        return 0 < len(new_a) <= SHORT_NEW and 0 < len(new_b) <= SHORT_NEW \
            and not any(same_word(x, y) for x in new_a for y in new_b)

    def _general_talk(self, q, r, story: str | None) -> str | None:
        """A statement about things in general that the story does not make ('Signals are important at sea.',
        'Volunteers are very flexible.'): talk, not an answer, even where the question names the same things."""
        if story and r.general and _asks(q) and not q.yes_no and self._untold(q, r, story):
            return "speaks in general of what the story does not tell"
        return None

    def _not_told_alike(self, texts) -> dict[str, str]:
        """Short answers close in meaning to a way of saying 'the story does not tell' ('No idea, sorry.',
        'Can't say.'), which no pattern lists."""
        short = [t for t in set(texts) if len(_WORD.findall(t)) <= NOT_TOLD_WORDS]
        self.judge.embeddings.add(short + list(NOT_TOLD_LIKE))
        cos = self.judge.embeddings.cosine
        return {t: "says the story does not tell" for t in short
                if max(cos(t, p) for p in NOT_TOLD_LIKE) >= NOT_TOLD_COSINE}

    # ---- rules
    def _by_rules(self, question, a, b, degenerate: dict, story: str | None = None) -> Agreement | None:
        q = self.judge._questions.get(question) if question else None
        ra, rb = self.judge._texts[a], self.judge._texts[b]
        why_a = degenerate.get(a) or non_answer(q, ra, self.judge._polarity) or self._general_talk(q, ra, story)
        why_b = degenerate.get(b) or non_answer(q, rb, self.judge._polarity) or self._general_talk(q, rb, story)
        if why_a and why_b:
            return Agreement(SURE_FAIL, True, _neither("neither answers", why_a, why_b))
        if why_a or why_b:
            said, other = (ra, rb) if why_a else (rb, ra)
            if said.norm and f" {said.norm} " in f" {other.norm} " \
                    and not quantities(f" {other.norm} ".replace(f" {said.norm} ", " . ")):
                # the other says the same words with more around them ('The answer is Felix.' and 'The story is about
                # two brothers. The answer is Felix.'): nothing shows that it answers where this one does not, unless
                # what it adds is a number ('… 26 April, with 3 passengers.')
                return Agreement(SURE_FAIL, True, f"neither answers: one {why_a or why_b}, the other says it too")
            if (why_a or why_b) in LOOPS and (_inside(other, said) or _loop_in(said, other, q)):
                # 'Amoxicillin' and 'Amoxicillin amoxicillin …'; 'Lena Lena Lena …' and 'Lena Vogt'
                return Agreement(PASS, False, "one says the other's answer over and over")
            if story and (why_a or why_b) == "names nobody" and other.entities \
                    and self.judge._story_link(story, q, other, said):
                # 'The senior stylist.' beside 'Tamsin Oyelade.' where the story says 'Tamsin Oyelade, our senior
                # stylist': a description the story gives the other's person
                return Agreement(PASS, False, "the story says the one describes whom the other names")
            vague = _vague(q, other, self.judge._polarity) or (story and _asks(q) and self._untold(q, other, story))
            if vague:
                return Agreement(SURE_FAIL, True, f"neither surely answers: one {why_a or why_b}, the other {vague}")
            return Agreement(SURE_FAIL, False, f"only one answers; the other {why_a or why_b}")
        if ra.norm == rb.norm:
            return Agreement(SURE_PASS, False, "the same answer")
        if q is not None and _typed(q):
            vague_a, vague_b = _vague(q, ra, self.judge._polarity), _vague(q, rb, self.judge._polarity)
            if vague_a and vague_b:
                return Agreement(SURE_FAIL, True, _neither("neither surely answers", vague_a, vague_b))
        if q is not None and q.yes_no:
            pa, pb = self.judge._polarity(ra, q), self.judge._polarity(rb, q)
            if not pa and not pb:  # 'He slipped on the lower deck.' and 'The floor was wet.' to 'Was he hurt?'
                return Agreement(SURE_FAIL, True, "neither says yes or no")
            if pa and pb and pa != pb:
                return Agreement(0.05, False, f"one says {pa}, the other {pb}")
            if pa and pb:  # 'Yes, two firefighters.' and 'Yes, three were hurt.' say yes to different things
                counted = _counted_apart(ra, rb)
                return counted or Agreement(0.95, False, f"both say {pa}")
            bare = next((r for r, p in ((ra, pa), (rb, pb)) if p and r.lead and not _new_words(q, r)), None)
            if (pa or pb) and bare is not None:
                # 'Yes.' beside an answer that gives no yes or no ('He ate until his cheeks were yellow.'): nothing
                # tells them apart, and a difference would be a guess
                return Agreement(PASS, False, f"one says {pa or pb}, the other gives no yes or no")
        if q is not None and q.wh and _says_none(ra) and _says_none(rb):
            return Agreement(PASS, False, "both say none")  # 'Nobody.' and 'No one believed it.'
        if q is not None and re.search(r"\bhow (?:often|frequently|regularly)\b", q.text.lower()):
            xa, xb = rate(ra.text), rate(rb.text)  # 'once a fortnight' is 'every two weeks'
            if xa and xb:
                return Agreement(PASS, False, "the same rate") if abs(xa - xb) <= 0.01 * max(xa, xb) \
                    else Agreement(FAIL, False, "different rates")
        one = q is not None and ra.quantities and rb.quantities and _one_of_two(q, ra, rb)
        if one:
            return one
        if q is not None and (q.numeric or _measured(ra) & _measured(rb)):  # 'What will the maximum be?' '7 °C'
            numbers = _numbers(q, question, ra, rb)
            if numbers:
                return numbers
        if q is not None and q.wh == "where":
            within = _place_within(ra, rb) or _place_within(rb, ra)
            if within:  # 'She comes from Lima.' and 'She is from Peru.': one place, said at two scales
                return Agreement(PASS, False, within)
            together = story and _written_together(story, q, ra.text, rb.text)
            if together:  # 'The Old Wash House.' and '27 Netherby Road.' where the story says 'The Old Wash House,
                return Agreement(PASS, False, together)  # 27 Netherby Road'

            apart = _places_apart(q, ra, rb)
            if apart:  # 'On the sofa.' and 'In the damp bedroom.'
                return Agreement(FAIL, False, apart)
        fewer = _fewer_times(ra, rb) or _fewer_times(rb, ra)
        if fewer:  # 'The 07:15 and the 17:40.' and 'The 07:15.'
            return Agreement(FAIL, False, fewer)
        if q is not None and q.wh and not q.numeric:
            partial = _part_of_items(q, ra, rb) or _part_of_items(q, rb, ra)
            if partial:
                return Agreement(FAIL, False, f"one gives only part of the other's list (not {partial})")
        if q is not None and q.wh in NAME_QUESTIONS or min(ra.n_tokens, rb.n_tokens) <= SHORT:
            named = _names(q, ra, rb)
            if story and named is not None and named.score < PASS and q.wh in ("who", "whom", "whose"):
                # 'The Brigade Commander.' and 'Anja Feldmann' where the story says 'Brigade Commander Anja Feldmann':
                # a title the story gives the other's person
                for r, title in ((ra, rb), (rb, ra)):
                    link = _titled(title) and self.judge._story_link(story, q, r, title)
                    if link:
                        return Agreement(PASS, False, link)
            return named
        return None


LOOPS = ("repeats one word", "repeats a short phrase")


def _neither(says: str, why_a: str, why_b: str) -> str:
    return f"{says}: {why_a}; {why_b}" if why_a != why_b else f"{says}: both {why_a}"
# a statement said with a rising tag asks nothing back: 'I believe it was La Lanterna, maybe?'
TAG_QUESTION = re.compile(r",\s*(?:maybe|perhaps|probably|i think|i guess|i believe|right|no|isn't it|wasn't it|"
                          r"aren't they|weren't they|didn't (?:he|she|they)|don't you think)\s*\?+\s*$", re.IGNORECASE)
# an answer that says the question again in other words: 'The question is what …', 'You asked what …'
REPORTED = re.compile(r"\W*(?:the question (?:is|was|asks)|you(?:'re| are)? ask(?:ed|ing)|you(?:'d like| want| wanted)"
                      r" to know)\b", re.IGNORECASE)
# a sentence about the text itself, not about what it tells: 'The story is set in 2024.', 'The passage is about a fox.'
ABOUT_THE_TEXT = re.compile(r"\W*(?:the|this) (?:story|text|passage) (?:is|was) (?:set|about|written|told)\b",
                            re.IGNORECASE)
FREE_RELATIVE = re.compile(r"\b(?:what(?:ever)?|the (?:\w+ )?(?:job|thing|work|one)s? (?:that|which))\b(.*)")
EXCLAMATIVE = re.compile(r"\W*(?:(?:ooh+|oh|wow|aw+)\W*)?(?:what an?|how)\b")  # 'Oh, what a lovely pattern!'
PLACE_PHRASE = re.compile(r"\b(?:in|at|on|near|under|behind|inside|outside|beside|next to|opposite|above|below|by)\s+"
                          r"((?:[a-z'-]+\s+){0,3}[a-z'-]+)")  # 'above the central mast'
AT_A_PLACE = re.compile(r"\b(?:in|at|on|near|under|behind|inside|outside|beside|next to|opposite|down|into|onto|"
                        r"through|along|across|over|past|towards?|up(?! to))\s+"
                        r"(?:the |a |an |their |his |her |its |our )?([a-z]+)")  # 'behind the hall'
# a number that names a thing: 'Gallery 6', 'Years 4 to 6', 'Route 14' (a month before it makes a date; a capital
# that starts a sentence is no name: 'About 400.', 'Ring 111.')
LABEL = re.compile(r"\b([A-Z][a-z]+)s? \d+(?:\s*(?:to|and|-|–)\s*\d+)?\b")
# an answer that praises a thing and says nothing of which or what it is: 'A very famous one.', 'A good quality
# one.' (not 'A large one.' to 'What size …?')
ANY_ONE = re.compile(r"\W*(?:an?|some) (?:(?:very|really|quite|rather|pretty) )?(?:good|great|nice|lovely|fine|"
                     r"decent|excellent|famous|well-known|popular|special|particular|certain|proper|good quality|"
                     r"high quality|top quality|important|suitable|reliable|sensible) one\W*")
LETTER_LABEL = re.compile(r"\b[A-Z][a-z]+ ([A-Z])\b(?! [a-z])")  # a capital letter that names one of several
BECAUSE = re.compile(r"\W*(?:(?:it's|it is|it was|that's|that is|probably|maybe|just|well,?) )?(?:because|due to|"
                     r"owing to|so that|in order to)\b")
# one of a group, not which one: 'One of the three sharks has a notch.', 'Someone from the museum's staff.'
ONE_OF = re.compile(r"\W*(?:(?:it|he|she|they)(?:'s| is| was| are| were|'re) )?(?:just |probably |maybe |perhaps )?"
                    r"(?:one|some|any|someone|somebody|anyone|a member|members|a few) (?:of|from)\b")
WHAT_HAPPENS = re.compile(r"\bwhat (?:happens|happened|will happen|would happen|is happening)\b")
DAYS_ASKED = re.compile(r"\b(?:which|what) days\b")  # weekdays, not 'the day the fair opens'
DAY_WORDS = re.compile(r"\b(?:(?:week|holi|every ?|each |all |other |alternate )days?|weekends?|daily|nightly|"
                       r"every (?:other )?(?:morning|evening|night)|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|"
                       r"none|never|today|tomorrow)\b")
TIME_IN_QUESTION = re.compile(r"\b(?:when|dates?|days?|times?|years?|months?|weeks?|weekends?|seasons?|hours?|morning|"
                              r"afternoon|evening|night|deadline|period|century|decade|era|age|birthday|anniversary|"
                              r"schedule|timetable|term|fixture|occasion|session|shift|slot|year's)\b")
DATE_ASKED = re.compile(r"\b(?:what|which) dates?\b")
TERM_ASKED = re.compile(r"\b(?:what|which) (colou?rs?|month|season)\b")
SHORT_NEW = 3  # content words beyond the question's: two answers this short that share none differ plainly
IN_DOUBT = (0.2, 0.5)  # judged scores between a shown difference and agreement: read as agreeing
UNTOLD_SHARE = 0.2  # of an answer's new words: more of them not in the story, and it is talk, not an answer
LIST_ITEM_WORDS = 7  # words: an item of a list said plainly is no longer
SHORT_COUNT = 3  # words: a 'one' in a reply this short is a count
WANTING = {"want", "wanted", "wants", "need", "needed", "needs", "like", "liked", "likes", "decided", "chose"}
COPIED_WORDS = 4  # words: the question's opening this long, said alone, copies it
PLAIN_ANSWER = 6  # words: a reply this short, and no order, is an answer in itself


def _asks(q) -> bool:
    """Is the utterance a question ('Have you any pets?'), not small talk that reads like one ('have a nice day!')?"""
    return q is not None and bool(q.wh or q.yes_no) and not q.text.rstrip().endswith("!")


def _typed(q) -> bool:
    """Does the question ask for a kind of thing an answer shows plainly: a time, a reason, a number, a person or a
    place?"""
    return q.wh in ("when", "why", "who", "whom", "whose", "where") or q.numeric or _counting(q)


def _counting(q) -> bool:
    """Does only a number or an amount answer the question ('How many …?', 'What is the deposit?')?"""
    return bool(COUNT_QUESTION.search(q.text.lower()) or NUMBER_ASKED.search(q.text.lower()))


def _says_a_time(text: str, q) -> bool:
    """Does a (lower-case) answer say a time in words the question does not, vague ones aside ('a while ago')?"""
    return bool(TIME_WORDS.search(_unsaid(VAGUE_TIME.sub(" ", text), q))) \
        or (q.text.lower().startswith("when") and bool(CONDITION.match(text)))  # not to 'By when …?'


def _vague(q, r, polarity) -> str | None:
    """Why an answer beside a non-answer does not surely answer (None: it does): a difference resting on one answer
    alone needs that answer to give something of the kind asked — a time to 'when', a reason to 'why', a number to a
    count, a name or a person to 'who', a place to 'where', a yes or no; to other questions a number or a name —
    or a short reply that orders nothing; not a sentence of general talk ('Gauge is very important for a cowl.') nor
    a fact of another kind ('Abdi was out after a fine innings of 78.' to 'How was Abdi dismissed?')."""
    if not _asks(q):
        return None  # small talk ('have a nice day!') asks for nothing
    if r.lead or (q.yes_no and polarity(r, q)):
        return None
    asked = {x.value for x in quantities(q.text)}
    # an ordinal or a 'one' in a sentence counts nothing ('I'd recommend swatching first', 'You can hire one'); a
    # reply of a few words does ('Just one.')
    counts = [x for x in _counts(r, q) if x.value not in asked
              and (x.text.split()[0].lower() != "one" or r.n_tokens <= SHORT_COUNT)]
    names = [e for e in r.entities if not any(same_word(w, x) for w in e for x in q.lemmas)]
    new_nouns = [n for n in r.nouns if not any(same_word(n, x) for x in q.lemmas)]
    if q.wh == "when":
        given = any(_a_time(x) for x in r.quantities if x.value not in asked) or (
            _says_a_time(r.text.lower(), q) and not ROUGH_TIME.fullmatch(r.text.lower()))
    elif q.wh == "why":
        given = _gives_a_reason(r.text.lower())
    elif _counting(q):  # a year counts nothing ('in September 1989' to 'How many people worked there?')
        given = any(not _a_year(x, r.text) for x in counts) or bool(AMOUNT_WORDS.search(r.text.lower()))
    elif q.numeric:  # 'Until the library closed.' to 'How long did the games last?'; no price says how long
        given = any(_fits_the_span(q, x, r.text) for x in counts) or _says_a_time(r.text.lower(), q)
    elif _asks_who(q):
        given = bool(names or _names_in(q, r)) or any(_an_agent(n) for n in new_nouns) or _says_none(r) \
            or bool(ALL_OR_NONE.search(r.text.lower()))
    elif q.wh == "where":
        given = bool(names) or any(names_a_place(n) for n in new_nouns) or any(
            not any(same_word(m.group(1), x) for x in q.lemmas) for m in AT_A_PLACE.finditer(r.text.lower()))
    elif WHAT_HAPPENS.search(q.text.lower()):  # an event: 'Water stays in the drum.'
        given = bool(r.root) and not any(same_word(r.root, x) for x in q.lemmas | {"be", "have", "do"})
    else:
        given = bool(counts or names)
    if given:
        return None
    # a short reply to 'what', 'how' or 'why' may be its answer ('Moderating.'); to 'why', not one that says when
    # ('It happened some time after 1791.'); a time, a place … shows
    if r.n_tokens <= PLAIN_ANSWER and not r.imperative and (
            (q.wh == "why" and not WHEN_PHRASE.search(r.text.lower())) or not _typed(q)):
        return None
    return "gives nothing of the kind asked"


def _inside(short, loop) -> bool:
    """Does a loop say all of a short answer: its content words and its numbers ('1610' in 'rating rating 1610 …')?"""
    words, values = set(short.content), {x.value for x in short.quantities}
    return short.n_tokens <= SHORT and bool(words or values) and words <= set(loop.lemmas) \
        and values <= {x.value for x in loop.quantities}


def _loop_in(loop, other, q) -> bool:
    """Is what a loop repeats part of the other's short answer, and not a word of the question ('Lena Lena …' and
    'Lena Vogt'; not 'Purser purser …' to 'Who is the purser?')?"""
    values = {x.value for x in loop.quantities}
    units = {w for x in loop.quantities for w in x.text.split()}  # 'sixty-five pound …' and '£65': the value says it
    words = set(loop.content) - (q.lemmas if q is not None else set()) - units
    return other.n_tokens <= 2 * SHORT and bool(words or values) and words <= set(other.lemmas) \
        and values == {x.value for x in other.quantities}  # not 'A voucher voucher …' and 'A £50 voucher.'


def _counted_apart(ra, rb) -> Agreement | None:
    """Two answers that count the same thing differently ('two firefighters', 'three firefighters were hurt')."""
    for x in ra.quantities:
        for y in rb.quantities:
            alike = (x.noun and y.noun and same_word(x.noun, y.noun)) or (x.dim and x.dim == y.dim)
            if alike and not any(x2.matches(y2) for x2 in ra.quantities for y2 in rb.quantities):
                return Agreement(FAIL, False, f"different numbers ({x.text}; {y.text})")
    return None


def _new_words(q, r) -> list[str]:
    """The answer's content words the question does not say."""
    return [w for w in r.content if not any(same_word(w, x) for x in q.lemmas)] if q is not None else list(r.content)


def _says_none(r) -> bool:
    return bool(re.search(r"\b(?:nobody|no[- ]one|nothing|none|nowhere|never|no|zero)\b", r.text.lower()))


def _numbers(q, question, ra, rb) -> Agreement | None:
    """The number a numeric question asks for, in each answer (a number the question says is no answer)."""
    asked = quantities(q.text)
    counted = AnswerJudge._counted_noun(question)
    xs, ys = (_answering(r, asked, counted) for r in (ra, rb))
    if not xs or not ys:
        return None
    if not {x.dim for x in xs} & {y.dim for y in ys}:  # 'Saturday 9 August, from 10 am' and 'the 9th of August'
        xs, ys = (_answering(r, asked, counted, any_unit=True) for r in (ra, rb))
    xs, ys = clocks_alike(xs, ys)  # '10.30' beside 'half past ten': the other answer says it is a time
    clock = [[x for x in found if x.dim == CLOCK[0]] for found in (xs, ys)]
    if all(clock):  # a time is its hour and its minutes together: 'half past eight' is not '9:30'
        xs, ys = ([(x, m) for x, m in zip(found, found[1:] + [None]) if x.dim == CLOCK[0]] for found in (xs, ys))

        def minutes(m) -> float:
            return m.value if m is not None and m.dim == CLOCK[1] else 0.0  # '5pm' is 17:00

        def alike(a, b) -> bool:
            (x, m), (y, n) = a, b
            return x.matches(y) and minutes(m) == minutes(n)

        if len(xs) == len(ys) == 2 and not (alike(xs[0], ys[0]) and alike(xs[1], ys[1])):
            # two ranges of time agree end for end: '8am to 5pm' is not '08:00 to 17:30'
            return Agreement(FAIL, False, f"different times ({xs[1][0].text}; {ys[1][0].text})")
        same = next(((a, b) for a in xs for b in ys if alike(a, b)), None)
        if same:
            return Agreement(PASS, False, f"the same time ({same[0][0].text}; {same[1][0].text})")
        return Agreement(FAIL, False, f"different times ({xs[0][0].text}; {ys[0][0].text})")
    if len(xs) == len(ys) == 2 and _a_range(ra.text) and _a_range(rb.text) \
            and not (xs[0].matches(ys[0]) and xs[1].matches(ys[1])):
        # two ranges agree end for end: 'from 2 to 9 June' is not 'from 9 to 14 June'
        return Agreement(FAIL, False, f"different ranges ({xs[0].text}–{xs[1].text}; {ys[0].text}–{ys[1].text})")
    same = next(((x, y) for x in xs for y in ys if x.matches(y)), None)
    if same:
        shown = same[0].text if same[0].text == same[1].text else f"{same[0].text}; {same[1].text}"
        return Agreement(PASS, False, f"the same number ({shown})")
    return Agreement(FAIL, False, f"different numbers ({', '.join(x.text for x in xs)}; "
                                  f"{', '.join(y.text for y in ys)})")


def _one_of_two(q, ra, rb) -> Agreement | None:
    """'£3,200 to £4,100' and '£3,200'; '22:05 to 22:15' and '22:05'; 'Tuesday 15 and Thursday 17 October' and
    'Tuesday 15 October': one end of a range, or one item of a list of two, is another answer."""
    asked = quantities(q.text)
    xs, ys = ([x for x in r.quantities if not any(x.matches(a) for a in asked)] for r in (ra, rb))
    for (r, big), (other, small) in (((ra, xs), (rb, ys)), ((rb, ys), (ra, xs))):
        theirs = {v for *_, v in number_points(other.text, small)}
        if len(theirs) == 1 and any(theirs & {a, b} for a, b in joined_pairs(r.text, big)):
            return Agreement(FAIL, False, "one gives only one of the other's two")
    return None


def _a_range(text: str) -> bool:
    """Does the answer give a range of two numbers ('from 2 to 9 June', '8-19 July', 'between 40 and 60')?"""
    text = text.lower()
    return bool(re.search(r"\d\s*(?:-|–|to|until|till)\s*\w*\d|\bbetween\b[^.;]*\d[^.;]*\band\b[^.;]*\d"
                          r"|\bfrom\b[^.;]*\d[^.;]*\b(?:to|until|till)\b[^.;]*\d", text))


def _measured(r) -> set[str]:
    """The dimensions the answer measures in ('degree' for '7 °C'), clock times left out."""
    return {x.dim for x in r.quantities if x.dim and x.dim not in CLOCK}


def _answering(r, asked, counted, any_unit: bool = False) -> list:
    """The answer's numbers that can answer: not the question's own; for 'how many X' those counting X (or bare);
    else those with a unit when there are any ('twenty years' answers 'how long', not 'thirty countries'), or all
    (``any_unit``)."""
    said = [_in_years(x) for x in _with_sums(r.quantities) if not any(x.matches(a) for a in asked)]
    if counted:
        return [x for x in said if (x.noun and same_word(x.noun, counted)) or (not x.noun and not x.dim)]
    return said if any_unit else [x for x in said if x.dim] or said


def _with_sums(found: list) -> list:
    """The quantities, and a larger unit followed by a smaller one of the same dimension added up ('1 hour 58
    minutes' is also 118 minutes, '1 m 20 cm' 1.2 m)."""
    sums = [replace(x, value=x.base + y.base, base=x.base + y.base, text=f"{x.text} {y.text}",
                    approx=x.approx or y.approx)
            for x, y in zip(found, found[1:])
            if x.dim and x.dim == y.dim and x.dim not in CLOCK and x.value and y.value
            and x.base / x.value > y.base / y.value]
    # 'one euro twenty' is 1.20 euros
    sums += [replace(x, value=x.value + y.value / 100, base=x.base + y.value / 100, text=f"{x.text} {y.text}")
             for x, y in zip(found, found[1:])
             if x.dim in MONEY and y.dim is None and y.noun is None and 0 < y.value < 100 and y.value == int(y.value)]
    return found + sums


_YEARS = {"decade": 10, "century": 100, "millennium": 1000}


def _in_years(x):
    """'two decades' is 20 years (the units the answer reader knows stop at years)."""
    if x.noun in _YEARS and x.dim is None:
        return replace(x, value=x.value * _YEARS[x.noun], dim="year", base=x.value * _YEARS[x.noun], noun=None)
    return x


def _names(q, ra, rb) -> Agreement | None:
    """The names each answer gives beyond the question's: the same name (one contains the other: 'Lopez',
    'Maria Lopez') → agree; other names → differ ('Ines Dubois' is not 'Ines Moreau')."""
    na, nb = _names_in(q, ra), _names_in(q, rb)
    if not na or not nb:
        return None
    asked = _how_many_named(q)
    if asked and min(len(na), len(nb)) < asked <= max(len(na), len(nb)):  # 'Which two players …?' 'Rosa.'
        return Agreement(FAIL, False, f"one names fewer than the {asked} asked for")
    partial = _part_of_list(na, ra, nb) or _part_of_list(nb, rb, na)
    if partial:
        return Agreement(FAIL, False, f"one names only part of the list ({partial})")
    for x in na:
        for y in nb:
            if _same_name(x, y):
                return Agreement(PASS, False, f"both name {' '.join(sorted(x if len(x) >= len(y) else y))}")
    for names, other in ((na, rb), (nb, ra)):  # a name the other answer says without a capital ('Hot cocoa')
        words = {w.lower() for w in _WORD.findall(other.text.replace("-", " "))}
        shared = next((x for x in names if {p for w in x for p in w.split("-")} <= words), None)
        if shared:
            return Agreement(PASS, False, f"both name {' '.join(sorted(shared))}")
    return Agreement(FAIL, False, f"names {' '.join(sorted(na[0]))}, the other {' '.join(sorted(nb[0]))}")


def _titled(r) -> bool:
    """Does the answer name a role with capitals, not a person ('The Brigade Commander.', 'The Head of Year')?"""
    return bool(r.entities) and all(any(names_an_agent(w) for w in e) for e in r.entities)


def _places_apart(q, ra, rb) -> str | None:
    """Two answers to 'where' that each put the thing somewhere ('on the sofa', 'in the bedroom') with no place word
    in common, nor one of the same sense, and no name: two places."""
    def spots(r) -> set[str]:
        after = {w for m in PLACE_PHRASE.finditer(r.text.lower()) for w in m.group(1).split()}
        return {n for n in r.nouns if any(same_word(n, w) for w in after)
                and not any(same_word(n, x) for x in q.lemmas)}

    if ra.entities or rb.entities:
        return None
    sa, sb = spots(ra), spots(rb)
    if not sa or not sb or set(ra.nouns) & set(rb.nouns):
        return None
    try:
        if any(y.lower() in {w.lower() for w in synonyms(x, "NOUN", 1)} for x in sa for y in sb):
            return None  # 'sofa' and 'couch'
    except WordNetMissing:
        return None
    return f"puts it {', '.join(sorted(sa))}, the other {', '.join(sorted(sb))}"


PLACE_SPAN = re.compile(r"(?:\d+[a-z]?\s+)?[A-Z][\w'&-]*(?:\s+(?:of\s+|the\s+|&\s+)?(?:[A-Z][\w'&-]*|\d+))*")
BESIDE = r"\s*(?:,|\(|–|—|\bon\b|\bin\b|\bat\b)\s*(?:the\s+)?"  # 'X, Y', 'X (Y)', 'X on Y'; not 'X to Y'


def _written_together(story: str, q, a: str, b: str) -> str | None:
    """Do two answers name a place each that the story writes side by side, as one place said two ways ('The Old Wash
    House, 27 Netherby Road'; 'Quarrybank Auto Centre, Unit 4')? Names the question says are not the answer."""
    told, stop = story.lower(), stop_words()

    def spans(text: str) -> list[str]:
        found = [re.sub(r"^(?:(?:in|at|on|by|near|the|a|an)\s+)+", "", m.group(0).lower())
                 for m in PLACE_SPAN.finditer(text)]
        return [x for x in found if len(x) > 2 and x not in stop
                and not all(any(same_word(w, y) for y in q.lemmas) for w in x.split())]

    spans_a, spans_b = spans(a), spans(b)
    for x in spans_a:
        for y in spans_b:
            if x != y and (re.search(re.escape(x) + BESIDE + re.escape(y), told)
                           or re.search(re.escape(y) + BESIDE + re.escape(x), told)):
                return f"the story writes {x} and {y} side by side"
    return None


def _place_names(r) -> set[str]:
    """The names an answer gives, as written (lower case), and the countries it names."""
    text = r.text.lower().replace("’", "'")
    return {" ".join(sorted(e, key=text.find)) for e in r.entities} | set(countries(r.text))


def _place_within(ra, rb) -> str | None:
    """Does one answer name a place that WordNet says is part of a place the other names ('Lima' in 'Peru')?"""
    wider = _place_names(rb)
    for name in _place_names(ra):
        try:
            found = regions_of(name) & wider
        except WordNetMissing:
            return None
        if found:
            return f"{name} is in {sorted(found)[0]}"
    return None


def _how_many_named(q) -> int | None:
    """How many names the question asks for: 'Which two players …?', 'Who are the three founders?', 'both'."""
    if q is None:
        return None
    text = q.text.lower()
    m = re.search(r"\b(?:which|what|the)\s+(two|three|four|five|six|[2-6])\b", text)
    if m:
        return int(quantities(m.group(1))[0].value)
    return 2 if re.search(r"\bboth\b", text) else None


def _fewer_times(r, other) -> str | None:
    """This answer lists times of day ('the 07:15 and the 17:40'), the other only some of them ('the 07:15')."""
    def hours(x) -> set[float]:
        return {h.value + m.value / 60 for h, m in zip(x.quantities, x.quantities[1:])
                if h.dim == CLOCK[0] and m.dim == CLOCK[1]} | {h.value for h in x.quantities if h.dim == CLOCK[0]}

    mine, theirs = hours(r), hours(other)
    listed = re.search(r"\d\s*(?:am|pm)?\s*(?:,|and|or)\s+(?:the |at )?\d", r.text.lower())
    if listed and theirs and theirs < mine:
        return "one gives only some of the other's times"
    return None


def _part_of_items(q, r, other) -> str | None:
    """The items this answer lists ('Tell the time, find Mecca, or work out when to pray'; 'For mild language and
    one violent scene') that the other leaves out, when the other says only some of them and nothing of its own;
    None otherwise."""
    said = set(other.lemmas) | set(other.content)
    ruled_out = {w for m in RULED_OUT.finditer(r.text.lower()) for w in m.group(1).split()}
    members = [{w for w in m - q.lemmas if not w.isdigit()} for m in _items(r)]  # 'between 9 and 11' lists nothing
    members = [m for m in members if m and not any(same_word(w, x) for w in m for x in ruled_out)]
    if len(members) < 2 or len(_items(other)) >= len(members):
        return None
    # 'Amlodipine 5 mg': a dose is no item of its own
    amounts = {w for x in other.quantities for w in x.text.split()} \
        | set(re.findall(r"\d\s*([a-z]+)", other.text.lower()))
    if not all(any(same_word(w, x) for x in r.lemmas) for w in _new_words(q, other) if w not in amounts):
        return None  # the other says things of its own: a paraphrase, not a part
    covered = [m for m in members if any(same_word(w, x) for w in m for x in said)]
    missing = [m for m in members if m not in covered]
    return " ".join(sorted(missing[0])) if covered and missing else None


def _items(r) -> list[set[str]]:
    """The items an answer lists: its coordination as parsed, or as said plainly where that finds more."""
    parsed, said = r.conjuncts + r.alternatives, _listed(r.text)
    return said if len(said) > len(parsed) else parsed


def _listed(text: str) -> list[set[str]]:
    """The content words of each item of a list said plainly, 'A, B and C' with items of a few words ('Look at
    them, smell them and photograph them.', 'Green, cream, black and a faded blue.'), which the parse often splits
    otherwise; none for other shapes ('The fitter, Ewa Kowalczyk, tightened it.', 'Lemon and lavender sponge,
    three tiers.') or a longer item ('The machine froze and he had to restart it at the airport terminal.')."""
    text = text.lower()
    if not re.search(r"\b(?:and|or)\b[^,;]*$", text) or re.search(r"\b(?:and|or)\b.*[,;]", text) \
            or re.search(r"\bbetween\b[^,;]*\band\b[^,;]*$", text):
        return []  # the last item after 'and' or 'or', the others between commas: 'A, B and C'; not 'between A and B'
    pieces = [p for p in re.split(r"[,;]|\band\b|\bor\b", text) if re.search(r"\w", p)]
    # no list either: a relative clause that describes ('Wolska, who's five foot nothing and hates bears'), or two
    # clauses joined ('They travel to Elm Green, and the Mahlangus are on teas.')
    if len(pieces) < 2 or any(len(_WORD.findall(p)) > LIST_ITEM_WORDS for p in pieces) \
            or any(re.match(r"\W*(?:who|who's|which|whose|where|that)\b", p) for p in pieces) \
            or (len(pieces) == 2 and re.search(r",\s*(?:and|or)\b", text)):
        return []
    stop = stop_words()
    return [m for m in ({w for w in _WORD.findall(p) if w not in stop} for p in pieces) if m]


# what an answer sets aside is no item of it: 'smoked aubergine with miso and sesame instead of the burrata'
RULED_OUT = re.compile(r"\b(?:instead of|rather than|in place of|except(?: for)?|but not)\s+(?:the |a |an )?"
                       r"([\w-]+(?: [\w-]+){0,2})")


def _part_of_list(names: list[frozenset], r, other: list[frozenset]) -> str | None:
    """The names this answer lists ('Orkney, Caithness and the Western Isles') that the other leaves out, when the
    other names only some of them ('The Western Isles and Orkney'); None otherwise."""
    listed = [x for x in names if any(x <= c or (len(x) > 1 and x & c) for c in r.conjuncts)]
    if len(listed) < 2 or not all(any(_same_name(x, y) for x in listed) for y in other):
        return None
    missing = [x for x in listed if not any(_same_name(x, y) for y in other)]
    return "; ".join(" ".join(sorted(x)) for x in missing) if missing else None


def _same_name(x: frozenset, y: frozenset) -> bool:
    if x & y and not (x - y and y - x):
        return True
    for short, long_ in ((x, y), (y, x)):  # an acronym: 'WWF' for 'World Wildlife Fund'
        if len(short) == 1 and len(long_) >= 2:
            (word,) = short
            if len(word) == len(long_) and sorted(word) == sorted(w[0] for w in long_):  # names are word sets
                return True
    return False


def _names_in(q, r) -> list[frozenset]:
    """Names the answer gives that the question does not: persons, teams, places — not a country read from an
    adjective ('the French ambassador'; countries are the judge's), not a possessor ("Freya's father")."""
    echo = q.lemmas if q is not None else set()
    names = list(r.entities)
    named = set().union(*names) if names else set()
    # a capitalised word the tagger did not call a name ('Moreau', 'Pia found him'); at the start of a sentence only
    # a word no dictionary knows as a common word ('Peppers and cocoa' names nothing; 'Ferdinand gave it' names)
    text = r.text.replace("’", "'")
    for m in re.finditer(r"\b([A-Z][\w-]*)", text):
        word = m.group(1).lower()
        starts = not text[:m.start(1)].strip() or text[:m.start(1)].rstrip()[-1:] in ".!?:\"'"
        after = re.match(r" ([A-Z][\w-]*)", text[m.end(1):])
        if after and after.group(1).lower() in named:
            continue  # 'Little' of 'Little Sedge', where the tagger named 'Sedge' alone
        # a name beside another ('Ness and Tarka.'), though a dictionary knows it
        listed = starts and re.match(r"(?: and|,) ([A-Z][\w-]*)", text[m.end(1):])
        if listed and listed.group(1).lower() in named and word not in _NOT_NAMES and word not in named:
            names.append(frozenset([word]))
            named.add(word)
            continue
        if word in named or word in _NOT_NAMES or (starts and _known_word(word, common=True)) \
                or (word in CALENDAR and (q is None or q.wh != "when")):  # 'by April' names no answer to 'what'
            continue
        names.append(frozenset([word]))
        named.add(word)
    text = r.text.lower().replace("’", "'")
    places = r.places if q is not None and q.wh in ("who", "whom", "whose") else []  # 'Who made them?' '… in Brno'
    names = [e for e in names if e and not e <= echo and not countries(" ".join(e)) and e not in places
             and not all(re.search(rf"\b{re.escape(w)}'s\b", text) for w in e)]
    # a word that labels by the number after it is named with that number ('Number 5' is not 'number 9')
    return [e | {m.group(1)} if len(e) == 1 and (m := re.search(rf"\b{re.escape(next(iter(e)))} (\d+[a-z]?)\b", text))
            else e for e in names]


_NOT_NAMES = {"the", "a", "an", "in", "on", "at", "his", "her", "their", "its", "my", "our", "your", "to", "from",
              "by", "with", "of", "for", "it", "he", "she", "they", "we", "i", "yes", "no", "because", "and", "you",
              "me", "us", "them", "this", "that", "these", "those", "there", "here"}


# ---- does an answer answer at all?

def non_answer(q, r, polarity=None) -> str | None:
    """Why an answer (``mortar.answers.Analysis``) gives nothing to the question (``QuestionInfo`` or None);
    None when it answers. ``polarity(answer, question)``: the yes or no an answer gives, if any."""
    text = r.text
    words = re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower())
    if not words:
        return "is empty"
    hedged = re.search(r"\bbut\b", text.lower()) and (r.quantities or r.entities)  # 'Not sure, but 30 days.'
    if (r.unknown and not hedged) or NOT_TOLD.search(text.lower().replace("’", "'")):
        return "says the story does not tell"
    parts = [normalize_text(p) for p in re.split(r"[.,;:!?\n]+|\band\b", text) if normalize_text(p)]
    if len(parts) >= 3 and Counter(parts).most_common(1)[0][1] >= max(3, len(parts) / 2):
        return "lists the same phrase"
    if made_up(text):
        return "is not made of words"
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if re.search(r"\w", s)]
    if sentences and all(s.rstrip().endswith("?") and not TAG_QUESTION.search(s) for s in sentences):
        return "asks a question back"
    if q is not None and _copies(normalize_text(text), normalize_text(q.text)):
        return "copies the question"
    if sentences and all(REPORTED.match(s) for s in sentences):
        return "says the question again"  # 'The question is what the guests should bring.'
    if sentences and all(ABOUT_THE_TEXT.match(s) and not re.search(r"[,;:]", s) for s in sentences):
        return "talks about the story itself"
    if _asks(q) and sentences and all(_says_itself(q, s) for s in sentences):
        return "says a thing does what it does"
    said = [s for s in sentences if not FILLER.fullmatch(s.lower())]  # 'Hmm, let me think.' says nothing
    if said and all(TAUTOLOGY.search(s) or (RESTATED.search(s) and not re.search(r"\d", s)) for s in said):
        return "says a thing is itself"
    if _asks(q) and said and all(x.rstrip().endswith("!") for x in said) \
            and (all(EXCLAMATIVE.match(x.lower()) for x in said) or not (_counts(r, q) or r.entities or r.lead
                                                                     or r.closed.get(_term_asked(q)))) \
            and not (q.yes_no and polarity is not None and polarity(r, q)):
        # to a question, 'Balloons are a lovely way to cheer someone up!', 'Look first at the light!', 'What a kind
        # bird Flick was!'
        return "only exclaims"
    if ANY_ONE.fullmatch(text.lower()) and "colour" not in r.closed:
        return "points at no particular one"  # 'A very famous one.' to 'Which school of painting is it from?'
    if q is not None and q.wh in ("who", "whom", "whose", "which") and ONE_OF.match(text.lower()) \
            and not any(x.noun is None and x.dim is None and x.text != "one" for x in _counts(r, q)) \
            and not any(e for e in r.entities if not any(same_word(w, x) for w in e for x in q.lemmas)):
        return "points at no particular one"  # 'One of the nurses on the ward.', 'One of the three sharks has it.'
    if re.search(r":\W*$", text) and len(re.findall(r"\w+", re.split(r"[.!?]\s", text)[-1])) <= 5:
        return "stops before the answer"  # 'Answer:', 'Vehicle:', 'Sure! Here is the answer:'
    if said and all(DEPENDS.search(x.lower()) for x in said) and not r.quantities and not r.entities:
        return "does not commit"
    if q is not None and _evasive(q, r, polarity):
        return "only repeats the question's words"
    # what kind of thing the answer gives is read without the advice around it ('it's best to check locally')
    plain = ADVICE.sub(" ", text.lower().replace("’", "'"))
    if not re.search(r"\w", FILLER.sub(" ", plain)):
        return "only gives advice"  # 'It's always best to check with your doctor.'
    counting = q is not None and _counting(q)
    # to 'when', a number that is no time or date says nothing of when ('The patio is phase one of the work.')
    figures = _counts(r, q) if q is None or q.wh != "when" or counting else [x for x in r.quantities if _a_time(x)]
    if counting:  # a number the question says, a year, an ordinal or a clock time is no answer to it ('A second
        asked = quantities(q.text)  # table …', '11:00' to 'How many godwits were there?')
        figures = [x for x in figures if not any(x.matches(y) for y in asked) and not _a_year(x, text)
                   and not _ordinal(x.text.split()[0]) and x.dim not in CLOCK and x.noun not in CALENDAR]
        counted = AnswerJudge._counted_noun(q.text)
        if counted and counted not in UNITS and figures and all(x.dim in NO_COUNT_DIMS for x in figures):
            return "gives an amount of another kind"  # '2.4 km' to 'How many pupils …?', '£60' to 'How many rooms?'
    if q is not None:  # 'He hit a 180 in the first leg.' to 'How long has he played?'
        figures = [x for x in figures if _fits_the_span(q, x, text)]
        if figures and not _of_the_kind_asked(q, figures):
            return "gives an amount of another kind"  # 'Relative humidity of 45 to 55 per cent.' to 'What temperature?'
    if q is not None and not figures and not (QUANTIFIER.search(plain) and q.wh != "when"):
        # a count with no number ('They bake bread for cafés all over the county.' to 'How many cafés …?'); a time
        # or an amount with no number and no time: 'It took a while.', 'The talk is about her life.'; the question's
        # own time words are none ('It falls this year, as it does every year.' to 'When is it this year?')
        if counting:
            return "gives no number"
        if q.numeric and not _says_a_time(plain, q):
            return "gives no time or amount"
        if HOW_LONG.search(q.text.lower()) and not DURATION_WORDS.search(VAGUE_TIME.sub(" ", plain)):
            return "gives no time or amount"  # 'It was resurfaced and is now open.' to 'How long did it take?'
    if q is not None and re.search(r"\bwhat (?:time|times|hours)\b|\bwhich hours\b", q.text.lower()) \
            and not any(x.dim == CLOCK[0] or (x.dim is None and 0 < x.value <= 24 and x.noun is None
                                               and not _ordinal(x.text)) for x in r.quantities) \
            and not CLOCK_WORDS.search(plain):
        return "gives no time of day"  # 'It starts with the traffic on 97.4 FM.' to 'What time did it start?'
    # who 'the person who runs the school' is, is not said by the school
    about = {n for h, nouns in r.clauses.items() if h in GENERIC for n in nouns}
    # a noun that only says which thing another is says no one ('the red panda enclosure')
    about |= {m for h, mods in r.modifiers.items() for m in mods.get("compound", ())} - r.modifiers.keys()
    if q is not None and _asks_who(q) and not _names_someone(r, q) and not EVERYONE.search(plain) \
            and not any(_an_agent(n) for n in r.nouns - about if not any(same_word(n, x) for x in q.lemmas)):
        return "names nobody"  # 'The captain was already there.' to 'Who is the captain?'
    if q is not None and q.role and r.unnamed_subjects \
            and all(s is not None and same_word(s, q.role) for s in r.unnamed_subjects):
        return f"tells of the {q.role} without naming who it is"  # 'The social secretary organises the events.'
    if q is not None and NAME_ASKED.search(q.text.lower()) and not _names_someone(r, q):
        return "gives no name"  # 'The driver asks you to leave empty boxes out.' to "What is the driver's name?"
    if q is not None and q.wh == "where" and not r.entities \
            and not PLACE_WORDS.search(WHEN_PHRASE.sub(" ", INDEFINITE.sub("", plain))) \
            and not any(names_a_place(n) for n in r.nouns if not any(same_word(n, x) for x in q.lemmas)):
        return "gives no place"  # 'The old bath is cast iron and quite heavy.' to 'Where will the bath be taken?'
    if q is not None and q.wh == "why" and not _gives_a_reason(plain) \
            and any(same_word(v, x) for v in q.verbs - {"be", "have", "do"} for x in r.lemmas):
        return "gives no reason"  # 'Gate receipts are down on last season.' to 'Why are gate receipts down?'
    if q is not None and q.wh == "why" and _circular(q, plain):
        return "gives the question back as its reason"  # 'She started early because she wanted to start early.'
    if q is not None and q.wh and q.wh not in ("why", "how") and r.general \
            and (q.past or not any(same_word(w, x) for w in r.general for x in q.lemmas)):
        # 'Gravel paths can get slippery in the rain.' to 'What did the gravel path turn into?'; not 'Swans eat
        # pondweed.' to 'What do swans eat?' (a general statement answers a general question, or a 'why')
        return "speaks in general, not of the story"
    if q is not None and q.wh and q.wh not in ("why", "how") and BECAUSE.match(text.lower()):
        return "gives a reason, not what is asked"  # 'Because they were clogged with ink.' to 'What did he use?'
    term = _term_asked(q)
    if term and not r.closed.get(term):
        return f"gives no {term}"  # 'She wears the usual uniform.' to 'What colour are her overalls?'
    if q is not None and DAYS_ASKED.search(q.text.lower()) and not r.closed.get("weekday") \
            and not r.closed.get("month") and not DAY_WORDS.search(plain):
        return "gives no days"  # 'The number is 0345 210 7788.' to 'On which days is the helpline open?'
    if q is not None and q.wh in ("what", "which") and not q.numeric and not TIME_IN_QUESTION.search(q.text.lower()) \
            and not any(w.rstrip("s") in CALENDAR for w in re.findall(r"[a-z]+", q.text.lower())) \
            and r.quantities and (r.closed.get("month") or r.closed.get("weekday")) \
            and all(_a_time(x) or x.noun in CALENDAR for x in r.quantities) \
            and not any(w not in CALENDAR and not is_number_word(w) for w in _new_words(q, r)):
        return "gives only a date"  # 'the 30th of September 1956' to 'Which route did he drive?'
    if q is not None and DATE_ASKED.search(q.text.lower()) and r.quantities \
            and all(x.dim in CLOCK for x in r.quantities) and not r.closed.get("weekday") \
            and not re.search(r"\b(?:day|days|morning|evening|night|week|after|before|next|tomorrow|today)\b", plain):
        return "gives a time of day, not a date"  # '8:30 am from the school car park.' to 'What date is the trip?'
    return None


def _says_itself(q, sentence: str) -> bool:
    """A sentence that says of a thing only what the question asks, in a clause of 'what' ('The dish does what the
    dish at Station 2 does.', 'She is famous for what she is famous for.', 'Colm's job is the job that he does.')."""
    m = FREE_RELATIVE.search(sentence.lower())
    if m is None:
        return False
    asked = (q.content | q.verbs) - {"be", "have"}
    head = [w for w in _WORD.findall(sentence.lower()[:m.start()]) if w not in stop_words()]
    return all(any(same_word(DO.get(w, w), x) for x in q.lemmas) for w in head) \
        and any(same_word(DO.get(w, w), v) for w in _WORD.findall(m.group(1)) for v in asked)


DO = {"does": "do", "did": "do", "done": "do", "doing": "do"}


def _asks_who(q) -> bool:
    """'Who …?', or 'Which person …?', 'Which member of staff …?': a question a person answers."""
    if q.wh in ("who", "whom", "whose"):
        return True
    m = re.search(r"\bwhich (\w+)", q.text.lower())
    if q.wh != "which" or m is None:
        return False
    noun = m.group(1)
    noun = noun[:-1] if re.search(r"[^s]s$", noun) else noun  # 'Which volunteers …?'
    return noun in ("person", "people") or (len(noun) > 2 and names_a_person(noun))


def _copies(said: str, question: str) -> bool:
    """The question, or its opening cut off where a small model stopped ('If you can't find cover, how far ahead must
    you'); a few of its words alone are no copy ('The leader.')."""
    return said == question or (len(said.split()) >= COPIED_WORDS and f"{question} ".startswith(f"{said} "))


def _circular(q, text: str) -> bool:
    """Does a (lower-case) answer's 'because' clause say only what the question says ('Because they need a waterproof
    coat.' to 'Why should children bring a waterproof coat?')?"""
    because = re.search(r"\bbecause\b(.*)", text)
    words = [w for w in _WORD.findall(because.group(1)) if w not in stop_words()] if because else []
    return bool(words) and all(any(same_word(w, x) for x in q.lemmas) or w in WANTING for w in words)


def _gives_a_reason(text: str) -> bool:
    """Does a (lower-case) answer give a cause or a purpose? 'after' or 'from' before a time or a date says when, not
    why ('It happened some time after 1791.')."""
    return bool(REASON.search(WHEN_PHRASE.sub(" ", text)))


def _of_the_kind_asked(q, figures: list) -> bool:
    """To 'What temperature …?', 'How heavy …?', 'How much did it cost?' or 'How old …?', quantities only in other
    units say nothing ('Relative humidity of 45 to 55 per cent.', 'It takes three hours.'); a bare number beside
    them is read in their unit ('45 to 55 per cent'), a bare number alone or a counted noun may be of the kind."""
    asked = next((dims for pattern, dims in MEASURE_ASKED if pattern.search(q.text.lower())), None)
    if asked is None:
        return True
    # a counted noun may be a currency ('NOK 650'), not a unit of other things: a light level in lux says no
    # temperature, 'two skeins' no weight, '28 April' no mileage
    money = bool(asked & MONEY)
    if any(x.dim in asked or (x.noun and money and not _a_day(x.noun)) for x in figures):
        return True
    return not any(x.dim or x.noun for x in figures)


def _fits_the_span(q, x, text: str) -> bool:
    """To 'how long' or 'how far', a quantity answers with a unit of length or time, a count of things ('three
    seasons', 'two stops'), or, to 'how long', a year or a clock time it runs from or to ('since 2019', '9 till 5');
    a bare number or a price says neither ('He hit a 180.')."""
    spans = SPAN_ASKED.search(q.text.lower())
    # a counted thing in lower case: not the street of '27 Quayside Terrace'
    counted = x.dim is None and bool(x.noun) and bool(re.search(rf"\b{re.escape(x.noun)}", text))
    if not spans or x.dim in SPAN_ASKED_DIMS[spans.group(1)] or counted:
        return True
    return spans.group(1) == "long" and (x.dim in CLOCK or (x.dim is None and _a_year(x, text, SPAN_FROM)))


def _term_asked(q) -> str | None:
    """The closed class a question asks for a term of: 'What colour …?', 'In which month …?', 'In what season …?'
    (a day is left out: it is answered in too many ways, 'the day the fair opens', 'match day')."""
    m = TERM_ASKED.search(q.text.lower()) if q is not None else None
    return None if m is None else "colour" if m.group(1).startswith("colo") else m.group(1)


def _an_agent(noun: str) -> bool:
    """A noun that says who, not only that it is someone ('the person who runs the school' names nobody)."""
    return noun not in GENERIC and names_an_agent(noun)


def _counts(r, q) -> list:
    """The answer's numbers that count or measure: not an ordinal ('Look first at the light!'), not a number that
    labels a thing named with a capital ('Gallery 6', 'Years 4 to 6', 'Flat 4'), and no telephone number unless the
    question asks for one."""
    asked = set(q.lemmas) if q is not None else set()  # 'Year 8' to 'Which year group …?' is what it asks for
    labels = {m.group(0) for m in LABEL.finditer(r.text) if m.group(1).lower() not in CALENDAR | asked
              and r.text[:m.start()].rstrip()[-1:] not in ("", ".", "!", "?", ":")}  # not 'About 400.'
    labelled = {n for x in labels for n in re.findall(r"\d+", x)}
    phone = q is not None and bool(PHONE_ASKED.search(q.text.lower()))
    return [x for x in r.quantities if not _ordinal(x.text.split()[0]) and x.text not in labelled
            and (x.dim != PHONE or phone)]


def _a_time(x) -> bool:
    """A quantity that can say when: a unit other than a price or a telephone number ('two weeks', 'once the soil
    reaches 7 °C') or a clock part, or a number that counts no thing and is written in digits, as an ordinal ('the
    twentieth') or as a year ('two thousand and nine')."""
    written = bool(re.search(r"\d", x.text)) or _ordinal(x.text) or 1000 <= x.value <= 2100
    if x.dim:
        return x.dim not in NO_TIME_DIMS  # a price or a phone number says no time ('Entry is £1.50 per bird.')
    return written and (x.noun is None or bool(TIME_WORDS.search(x.noun)))


NO_TIME_DIMS = {*MONEY, "cent", "penny", PHONE}
NO_COUNT_DIMS = {*MONEY, "cent", "penny", "m", "s", "year"}  # a price, a length or a span counts no things


def _ordinal(word: str) -> bool:
    """An ordinal as written: 'first', 'twentieth', '6th'."""
    return bool(re.fullmatch(r"[a-z]*(?:first|second|third|th)|\d+(?:st|nd|rd|th)", word))


def _names_no_place(r) -> list:
    """The names an answer gives that are not where something is ('Kessford FM' in 'presented at Kessford FM'; not
    'Bernadette Quigley' in 'received from Bernadette Quigley')."""
    def where(e) -> bool:
        return e in r.places and any(re.search(rf"\b(?:in|at|on|near|inside) (?:the )?(?:\w+ )?{re.escape(w)}\b",
                                               r.text.lower()) for w in e)

    return [e for e in r.entities if not where(e) and not all(_a_day(w) for w in e)]  # not 'Tuesdays'


def _names_someone(r, q) -> bool:
    """A name that is not where something is, nor in what is said of a generic someone ('Biscuit' in 'the person who
    brought Biscuit in'), or, when the answer names nothing, a capitalised word the parser may have missed ('Blaze
    could …')."""
    described = r.described if GENERIC & r.clauses.keys() else []
    return any(e not in described for e in _names_no_place(r)) or (
        not r.entities and bool(_capitalised(FILLER.sub(" ", ADVICE.sub(" ", r.text)), q.text)))


def _a_year(x, text: str, after: str = "in|since|from|until|of") -> bool:
    """A number that is a year in the answer: four digits after 'in', 'since', 'from', 'until' or 'of' ('in 1998'), or
    after the words given."""
    return bool(re.fullmatch(r"\d{4}", x.text)) and 1000 <= x.value <= 2100 \
        and bool(re.search(rf"\b(?:{after}) {x.text}\b", text.lower()))


SPAN_FROM = "since|from|until|till|between"  # a year a span runs from or to ('since 2019'); not 'in 2022'


def _unsaid(text: str, q) -> str:
    """The answer's words (lower case) without those the question says."""
    said = {w.lower() for w in _WORD.findall(q.text)}
    return " ".join(w for w in _WORD.findall(text.lower()) if w not in said)


# questions only a number or a quantifier answers ('How much experience is needed?', not 'How much did she like it?')
COUNT_QUESTION = re.compile(r"\bhow many\b|\bhow much (?!(?:do|does|did|is|was|are|were|will|would|can|could|has|have|"
                            r"had|should|must)\b)\w+|\bhow much\b.*\b(?:cost|costs|pay|paid|charge|charged|spend|"
                            r"spent|weigh|weighs|worth|earn|earned|raise|raised)\b"
                            r"|\bhow much (?:is|was|are|were|will be) (?:the|a|an|it|this|that|each|one)\b")
# 'What is the plumber's Gas Safe number?', 'What was the final score?': a figure, whatever the sentence around it
NUMBER_ASKED = re.compile(r"^\W*(?:and )?what(?:'s| is| was| are| were| will be)(?: \S+){0,5}? "
                          r"(?:number|score|rating|price|fee|total|temperature|postcode|percentage|reading|figure|"
                          r"balance|deposit|fare|rent|salary|wage|budget|refund|discount)s?\b")
# a definite amount answers a count; 'some', 'a lot', 'several' do not ('A lot of people had to leave.')
_AMOUNTS = r"none|nothing|zero|free|both|half|dozens|hundreds|thousands|millions|twice|double"
AMOUNT_WORDS = re.compile(rf"\b(?:{_AMOUNTS})\b")  # … and, to a count beside a non-answer, only these
QUANTIFIER = re.compile(rf"\b(?:no|nobody|(?<!at )all(?! (?:across|over|around|along|through|the way))|"
                        rf"every|each|couple|single|only one|{_AMOUNTS})\b")  # 'all across the county' says where


# what answers 'when', 'how long', 'how often' without a number: a day, a month, a season, a part of the day, a
# time relative to something ('after the storm', 'two weeks ago'), a rate in a word
TIME_WORDS = re.compile(r"\b(?:" + "|".join(sorted(CLOSED_CLASSES["weekday"] | CLOSED_CLASSES["month"]
                                                  | CLOSED_CLASSES["season"] | CLOSED_CLASSES["time of day"]
                                                  | PERIOD_WORDS.keys()))
                        + r"|weekends?|weekdays?|fall|night|noon|midday|midnight|dawn|dusk|sunrise|sunset|tonight|"
                        r"today|tomorrow|yesterday|now|always|never|rarely|seldom|"
                        r"after|before|until|till|since|during|(?<!a )while|once|ago|when)\b")  # not 'a while'
# times that say no time: 'A while ago now.', 'For a good while.', 'Long enough.', 'At some point.'
VAGUE_TIME = re.compile(r"\b(?:(?:for )?a (?:good |little |long |short )?while(?: ago| back)?|some ?time(?: ago)?|"
                        r"at some (?:point|stage)|one day|the other day|ages(?: ago)?|in due course|long enough|"
                        r"(?:right |just )?now|whenever\b[^.,;!?]*)")
# a whole answer to 'when' that only hedges a part of the day or the year ('Late in the evening.', 'Sometime in the
# spring.'): no time beside an answer that gives none
ROUGH_TIME = re.compile(r"\W*(?:late|early|sometime|some time)\s+(?:in|on|at|during)?\s*(?:the\s+)?"
                        r"(?:morning|afternoon|evening|night|spring|summer|autumn|winter|weekend|year)\W*")
# to 'when', the event or state a thing waits for says when: 'When going downhill.', 'Once the glue has set.'
CONDITION = re.compile(r"\W*(?:only )?(?:when|whenever|while|once|as soon as|every time|each time)\s+\w+")
HOW_LONG = re.compile(r"\bhow long\b")
SPAN_ASKED = re.compile(r"\bhow (long|far)\b")
MEASURE_ASKED = [  # a question that names the kind of amount it asks for, and the units of that kind
    (re.compile(r"\b(?:what (?:\w+ )?temperatures?|how (?:hot|cold|warm))\b"), {"degree"}),
    (re.compile(r"\bhow heavy\b|\bhow much (?:\w+ ){1,4}weigh|\bwhat (?:\w+ )?weight\b"), {"g"}),
    (re.compile(r"\bhow much (?:\w+ ){1,5}(?:cost|charge|pay|spend)|\bhow much money\b"
                r"|\bwhat (?:is|was|are|were|will be) the (?:\w+ )?(?:price|fee|fare|cost|charge)s?\b"),
     {*MONEY, "cent", "penny"}),
    (re.compile(r"\bhow old\b|\bwhat age\b"), {"year", "s"}),
    (re.compile(r"\bwhat (?:\w+ )?(?:mileage|distance|length|height|depth|width)\b"), {"m"}),
]
SPAN_ASKED_DIMS = {"long": {"s", "year", "m"}, "far": {"m", "s", "year"}}  # a walk of two hours says how far too
PHONE_ASKED = re.compile(r"\b(?:number|phone|telephone|ring|call|dial|text|contact)\b")
# what answers 'how long' without a number: a span in words, or up to / since an event ('until the library closed')
DURATION_WORDS = re.compile(r"\b(?:" + "|".join(sorted(PERIOD_WORDS.keys()))
                            + r"|weekends?|overnight|all (?:day|night|week|year|summer|winter)|(?<!a )while|until|"
                            r"till|since|after|before|during|forever|ages)\b")
CLOCK_WORDS = re.compile(r"\b(?:" + "|".join(HOUR_WORDS) + r"|o'?clock|dawn|dusk|sunrise|sunset)\b")
# who answers 'who' without a name or a noun for one
_ALL_OR_NONE = r"everyone|everybody|nobody|no one|(?:all|both|each) of"
ALL_OR_NONE = re.compile(rf"\b(?:{_ALL_OR_NONE})\b")
EVERYONE = re.compile(rf"\b(?:{_ALL_OR_NONE}|none|neither|i|we|me|us|you)\b")
# a question that asks for a name: "What is the driver's name?", 'What was the horse called?'
NAME_ASKED = re.compile(r"\bwhat(?:'s| is| was| are| were) (?:[\w'-]+ ){0,4}?names?\b"
                        r"(?! (?:of|for) (?:the )?(?:road|street|place|shop|town|village|company|book|song|film|boat|"
                        r"ship|dish|game)\b)"
                        r"|\bwhat (?:is|was|are|were) (?:[\w'-]+ ){0,3}?called\b")
# advice that answers nothing: 'it's always best to check locally', 'I'd recommend asking the office'
ADVICE = re.compile(r"\b(?:it's|it is|it's always|it is always) (?:always |usually |probably )?(?:best|better|wise|"
                    r"advisable|a good idea|worth|important) to [^.;!?]*|\b(?:i'd|i would|we'd|we would) (?:always )?"
                    r"(?:recommend|suggest|advise) [^.;!?]*")
# what gives a reason: a conjunction or preposition of cause or purpose, 'to' before a verb
REASON = re.compile(r"\b(?:because|cause|caused|since|as|so|for|due|owing|thanks|after|from|reason|in order|"
                    r"to (?!the\b|a\b|an\b|his\b|her\b|their\b|its\b)\w+|otherwise|too|enough|couldn't|can't|"
                    r"wasn't|weren't|didn't|not)\b")
# a preposition of time, not of place: 'served from 2:30 p.m.', 'on Monday', 'in May'
WHEN_PHRASE = re.compile(r"\b(?:in|at|on|from|by|to|until|after|before|over|around|within|past) (?:about |around )?"
                         r"(?:\d{1,2}(?:[:.]\d\d)? ?(?:a\.?m\b\.?|p\.?m\b\.?|o'clock)|\d{1,2}:\d\d|\d{4}\b|"
                         r"\d{1,2}(?:st|nd|rd|th)\b|(?:" + "|".join(sorted(CLOSED_CLASSES["weekday"]
                                                                        | CLOSED_CLASSES["month"])) + r")\b)")
# what answers 'where' without a name: a place preposition or a place adverb
PLACE_WORDS = re.compile(r"\b(?:in|at|on|to|from|near|under|behind|inside|outside|into|onto|beside|next|across|along|"
                         r"through|over|above|below|between|around|by|beneath|opposite|past|toward|towards|within|"
                         r"here|there|home|abroad|upstairs|downstairs|away|back|nowhere|everywhere|north|south|east|"
                         r"west|left|right|up|down)\b")
_WORD = re.compile(r"[\w']+")
_UNIT_WORDS = ((re.compile(r"\bmph\b|\bmiles an hour\b", re.IGNORECASE), "miles per hour"),
               (re.compile(r"\bkm/h\b|\bkph\b|\bkmh\b", re.IGNORECASE), "kilometres per hour"),
               (re.compile(r"(?<=\d)\s*ml\b|\bml\b", re.IGNORECASE), " millilitres"))


def spelled_units(text: str) -> str:
    """Units the answer reader does not know, spelled one way ('60 mph' is '60 miles per hour')."""
    for pattern, words in _UNIT_WORDS:
        text = pattern.sub(words, text)
    return text


LOOP_UNIT = 12  # words: the longest unit a loop is looked for in


def without_question(question: str | None, text: str) -> str:
    """The answer after the sentences that open it by saying the question again ('What should guests bring? Please
    bring your own sheets.', 'You asked what the dish does. It carries a whisper.'); all of it when that is all."""
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    asked = normalize_text(question or "")
    while asked and len(sentences) > 1 \
            and (_copies(normalize_text(sentences[0]), asked) or REPORTED.match(sentences[0])):
        sentences = sentences[1:]
    return " ".join(sentences) if len(sentences) > 1 or sentences[0] != text.strip() else text


def without_loop(text: str) -> tuple[str, str | None]:
    """The text up to the end of the first copy of a loop — a run of words repeated back to back, three times (a
    unit of four words or more: twice) — and why it gives nothing when the loop is all there is: a word or a
    short phrase that is no sentence over and over ('No, no, no, …', 'The answer is: The answer is: …')."""
    spans = [(m.end(), m.group().lower()) for m in _WORD.finditer(text)]
    found = first_loop([w for _, w in spans], LOOP_UNIT, lambda size: 3 if size < 4 else 2)
    if found is None:
        return text, None
    i, size = found
    ends_sentence = text[spans[i + size - 1][0]:][:1] in (".", "!", "?")
    unit = " ".join(w for _, w in spans[i:i + size])
    if i <= 3 and (size == 1 or size <= 3 and not ends_sentence) and not re.search(r"\d", unit):
        # 'Colder and brighter.' over and over says it; a number or a time over and over gives it ('8:12 8:12 …')
        return text, "repeats one word" if size == 1 else "repeats a short phrase"
    head = text[:spans[i + size - 1][0] + ends_sentence]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", head)]
    return (head[:ends[-1]] if ends else head), None  # back to the last whole sentence


def _capitalised(text: str, question: str = "") -> list[str]:
    """Words written with a capital that are no stop words, days or months: names the parser may have missed ('Blaze
    could …'), not a date ('The designer visited the site on 3 April.'), nor a word the question writes in lower case
    ('Night crew runs from 18:00.' to 'Who leads the night crew?')."""
    stop = stop_words()
    skip = stop | set(re.findall(r"\b[a-z][\w'-]*", question))
    return [w for w in re.findall(r"\b[A-Z][\w'-]*", text.replace("’", "'"))
            if w.lower() not in skip and w.lower().split("'")[0] not in stop  # "It's"
            and not _a_day(w.lower()) and not is_number_word(w.lower())]  # 'On Tuesdays.', 'Thirty years.'


CALENDAR = frozenset(CLOSED_CLASSES["weekday"] | CLOSED_CLASSES["month"])
RELATIVE_DAYS = frozenset({"today", "tomorrow", "tonight", "yesterday"})


def _a_day(word: str) -> bool:
    """A (lower-case) day or month: 'friday', 'fridays', 'tomorrow'."""
    return word in CALENDAR or word in RELATIVE_DAYS or (word.endswith("s") and word[:-1] in CALENDAR)


def _evasive(q, r, polarity=None) -> bool:
    """Nothing beyond the question's own words: no new content word, name or number ('He went there.' to
    'Where did he go?', 'The weekend is the weekend.' to 'Is it open at the weekend?'); to a yes/no question, an
    answer that gives a yes or a no says something."""
    if q.yes_no and (polarity is None or polarity(r, q)):
        return False
    denies = r.has_negation and not r.negated <= q.negated  # not the question's own 'not' ('the room not included')
    if not (q.wh or q.yes_no) or r.lead or denies or re.search(r"\b(?:nobody|nothing|none|no one)\b",
                                                               r.text.lower()):
        return False  # 'Nobody.' answers 'Who saw him?'
    about = re.match(r"\W*(?:the|this) ([\w-]+) (?:mentions|mentioned|describes|talks about|refers to|discusses|"
                     r"records|recorded|notes|noted|lists|listed)\b", r.text.lower())
    # 'The report mentions the treasurer.', 'The log records the weather.': the report is the source, not an answer
    vague = {w.lower() for m in INDEFINITE.finditer(r.text) if not re.search(r"\d|(?<!^)\b[A-Z]", m.group())
             for w in re.findall(r"[A-Za-z]+", m.group())}
    # someone named by what the question asks of them: 'the team that won the toss', 'the batter who hit the runs'
    lemmas = r.lemmas
    vague |= {lemmas[i - 1] for i, w in enumerate(lemmas) if w in ("who", "that", "which") and i > 0
              and any(same_word(x, v) for x in lemmas[i + 1:i + 4] for v in q.verbs)}
    source = {about.group(1), *_WORD.findall(about.group(0))[2:]} if about else set()  # the report and its verb
    new = [w for w in _new_words(q, r) if w not in GENERIC and not any(same_word(w, x) for x in source)
           and not any(same_word(w, v) for v in vague)]
    asked = {x.value for x in quantities(q.text)}
    letters = set(LETTER_LABEL.findall(r.text)) - set(LETTER_LABEL.findall(q.text))  # 'Car Park C', 'Gate B'
    return not new and not [x for x in r.quantities if x.value not in asked] and not r.closed and not letters


def _known_word(word: str, common: bool = False) -> bool:
    try:
        return _known(word, common)
    except WordNetMissing:
        return False


def made_up(text: str) -> bool:
    """Letters that make no words: most of the lowercase words are in no dictionary (names and numbers count as
    words). Without WordNet the check is left out."""
    lower = [w for w in re.findall(r"\b[a-z]+\b", text) if len(w) > 3]  # short words are function words
    if len(lower) < 3:
        return not re.search(r"[a-zA-Z]{2,}|\d", text)  # '?!…', '###'
    try:
        known = sum(_known(w) for w in lower)
    except WordNetMissing:
        return False
    return known / len(lower) < MADE_WORDS


def _known(word: str, common: bool = False) -> bool:
    """Is the word in the dictionary (``common``: as a common word, not only as a name, which 'Ferdinand' is)?"""
    def listed(lemma: str) -> bool:
        return any(not common or lemma in s.words for pos in ("NOUN", "VERB", "ADJ", "ADV") for s in senses(lemma, pos))

    if listed(word):
        return True
    # inflections WordNet lists under their lemma ('walked', 'boxes', 'happier', 'running')
    for suffix, repl in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"),
                         ("er", ""), ("est", ""), ("ly", ""), ("d", "")):
        if word.endswith(suffix) and listed(word[:-len(suffix)] + repl):
            return True
    return word in _FUNCTION_WORDS


_FUNCTION_WORDS = {"about", "above", "after", "again", "against", "also", "although", "among", "because", "been",
                   "before", "being", "below", "between", "both", "could", "does", "doing", "down", "during", "each",
                   "either", "else", "ever", "every", "from", "have", "having", "hers", "herself", "himself", "into",
                   "itself", "just", "more", "most", "much", "must", "myself", "neither", "never", "none", "only",
                   "other", "ours", "over", "same", "shall", "should", "since", "some", "such", "than", "that",
                   "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
                   "through", "till", "under", "until", "upon", "very", "were", "what", "when", "where", "which",
                   "while", "whom", "whose", "will", "with", "within", "without", "would", "your", "yours",
                   "yourself", "anyone", "someone", "something", "anything", "nothing", "everything", "here",
                   "onto", "toward", "towards", "unless", "whether", "yet", "didn't", "doesn't", "isn't", "wasn't"}
