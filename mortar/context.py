"""The equivalent context check (MORTAR §III-E): for every round of a perturbed test case, is the
context before it as informative, for its question, as the context of the source round in the seed?

Three checks, OR-ed:
- semantic: the question resolves itself — no anaphor, not elliptical, at least 3 words, and its structure
  names what it is about (``leans_on_context``); a question that leans on context needs its seed predecessor
  asked earlier for the ontology check;
- ontology: Ḡ_j (what the question takes from its original context) is contained in the context
  graph accumulated before this position; an elliptical question, and a short follow-up that judges or
  continues the answer just given ('Was she right?', ``follows_up``), must also directly follow the
  round it continues (set containment alone ignores order: the paper's known weakness);
- story: every anaphor has exactly one possible referent in the story, its original antecedent.
Accumulation: a round that passes adds everything it gave (question + answer information);
a round that fails adds only what its question states explicitly.
"""

from __future__ import annotations

from mortar.dataset import TestCase
from mortar.kg.model import DialogueGraph, Graph
from mortar.verdict import ECVerdict
from mortar.vocab import ORIG
from mortar.nlp import load_nlp

MIN_SELF_CONTAINED_WORDS = 3  # the paper: shorter questions never resolve themselves
INDEFINITE_SUBJECTS = {"anyone", "anybody", "everyone", "everybody", "someone", "somebody", "nobody", "one",
                       "either", "neither"}
RANKS = {"first", "second", "third", "fourth", "fifth", "next", "last"}
CONNECTIVES = {"so", "then", "and", "but"}
CONTRASTS = {"instead", "too", "also", "again", "otherwise", "either"}  # 'Who asked for a garden instead?'

# nouns that stand for something of something else ('the score' of a match, 'the deadline' of a task): without an
# 'of', a possessor or a modifier they take what they are about from the conversation
RELATIONAL_NOUNS = {"score", "result", "outcome", "deadline", "problem", "reason", "cause", "winner", "loser", "idea",
                    "plan", "decision", "answer", "repair", "condition", "price", "cost", "difference", "solution",
                    "purpose", "effect", "reaction", "response", "verdict", "total"}
BARE_VERBS = {"know", "mean", "agree", "disagree", "tell", "prove", "explain"}  # complete only with a topic
# a short follow-up built on one of these judges or continues what was just said ('Was she wrong?', 'Did it help?')
JUDGEMENTS = {"right", "wrong", "correct", "true", "false", "sure", "certain", "accurate", "fair", "successful"}
OUTCOME_VERBS = BARE_VERBS | {"work", "help", "succeed", "fail"}
TEMPORAL_PREPS = {"after", "before", "since", "until"}
MAX_FOLLOW_UP_WORDS = 4


def semantic_check(question: str, rg) -> bool:
    return len(question.split()) >= MIN_SELF_CONTAINED_WORDS and not rg.anaphors and not rg.elliptical \
        and not leans_on_context(question) and not follows_up(question)


def _follows_up(doc) -> bool:
    """A short question that names nothing and takes its topic from the answer just given: a judgement with no
    complement ('Is it accurate?'), a verb of knowing or of outcome with none ('How can you be sure?', 'Did it
    help?'), or a time relative to a demonstrative ('And before this?'). Like an elliptical question, it must
    directly follow the round before it in the seed."""

    words = [t for t in doc if not t.is_punct]
    if not words or len(words) > MAX_FOLLOW_UP_WORDS or any(t.pos_ in ("NOUN", "PROPN") for t in words):
        return False
    root = next((t for t in doc if t.dep_ == "ROOT"), words[0])
    complements = {c.dep_ for c in root.children} & {"dobj", "ccomp", "xcomp", "prep", "attr", "advcl", "dative"}
    if any(t.lemma_.lower() in JUDGEMENTS and t.dep_ in ("acomp", "attr")
           and not any(c.dep_ == "prep" for c in t.children) for t in words):
        return True
    if root.lemma_.lower() in OUTCOME_VERBS and not complements:
        return True
    return any(t.lower_ in ("that", "this") and t.dep_ == "pobj" and t.head.lower_ in TEMPORAL_PREPS for t in words)


def _leans_on_context(doc) -> bool:
    """A question whose structure leaves out what it is about, whatever its length: a clause without a subject
    ('To study what?'), a count of nothing named ('How many does each get?'), an unnamed someone ('Was anyone
    hurt?', 'Does everyone agree?'), a rank with no contest ('Who came second?'), an opening connective ('So what
    did he do?'), a contrast with nothing named to contrast with ('Who asked for a garden instead?', 'Is there
    another way?', 'Are there any more spares?'), or a verb that needs a topic and has none ('Why did the board
    object?' has one; 'Why did Ines disagree?' has none). It needs the round
    before it in the seed, though not directly before."""

    words = [t for t in doc if not t.is_punct]
    if not words:
        return False
    root = next((t for t in doc if t.dep_ == "ROOT"), words[0])
    subjects = [t for t in doc if t.dep_ in ("nsubj", "nsubjpass", "expl", "csubj")]
    if not subjects and any(c.tag_ == "TO" for c in root.children):  # 'To study what?'
        return True
    if any(t.lower_ in INDEFINITE_SUBJECTS and t.pos_ == "PRON" for t in subjects):
        return True
    if any(t.lower_ in RANKS and t.head.i == root.i and t.dep_ in ("advmod", "acomp", "npadvmod", "oprd")
           for t in doc) and not any(c.dep_ in ("prep", "dobj") for c in root.children):
        return True
    if words[0].lower_ in CONNECTIVES or any(t.lower_ in CONTRASTS and t.dep_ in ("advmod", "preconj") for t in doc):
        return True
    if any(t.lower_ == "another" for t in doc) or (not any(t.lower_ == "than" for t in doc) and any(
            t.lower_ == "more" and (t.head.pos_ == "NOUN" or t.dep_ in ("dobj", "nsubj")) for t in doc)):
        return True  # 'Is there another way?', 'Are there any more spares?': beyond what was said
    if any(t.lower_ == "many" and t.dep_ != "amod" and not any(c.dep_ == "prep" for c in t.children) for t in doc):
        return True  # 'How many does each pair get?' counts something left unsaid

    if any(t.lemma_.lower() in RELATIONAL_NOUNS and t.dep_ in ("nsubj", "nsubjpass", "dobj", "attr")
           and not any(c.dep_ in ("prep", "poss", "compound", "amod", "relcl", "acl") for c in t.children)
           for t in doc):
        return True
    complements = ("dobj", "ccomp", "xcomp", "prep", "attr", "acomp", "advcl", "dative", "pobj")
    # 'How many of her letters are known?' says what is known (a passive subject)
    return root.lemma_.lower() in BARE_VERBS and not any(c.dep_ in complements + ("nsubjpass",)
                                                         for c in root.children) \
        and not any(t.tag_ in ("WP", "WDT") for t in doc)


def _is_fragment(doc) -> bool:
    """No finite verb: 'To study what?', 'And the second one?'."""
    return not any(t.tag_ in ("VBD", "VBZ", "VBP", "MD") for t in doc)


# what the check reads from a question's parse, by question: (follows up, leans on context, fragment)
_shapes: dict[str, tuple[bool, bool, bool]] = {}
MAX_SHAPES = 200_000


def _shape(doc) -> tuple[bool, bool, bool]:
    return _follows_up(doc), _leans_on_context(doc), _is_fragment(doc)


def read_questions(questions) -> None:
    """Parse the questions not read yet in one batch (spaCy parses a batch several times faster than one
    question at a time) and keep what the check reads from them."""
    new = sorted({q for q in questions if q not in _shapes})
    if len(_shapes) + len(new) > MAX_SHAPES:
        _shapes.clear()
    for question, doc in zip(new, load_nlp().nlp.pipe(new, batch_size=256)):
        _shapes[question] = _shape(doc)


def _shape_of(question: str) -> tuple[bool, bool, bool]:
    if question not in _shapes:
        read_questions([question])
    return _shapes[question]


def follows_up(question: str) -> bool:
    return _shape_of(question)[0]


def leans_on_context(question: str) -> bool:
    return _shape_of(question)[1]


def is_fragment(question: str) -> bool:
    return _shape_of(question)[2]


def check_case(dg: DialogueGraph, case: TestCase, questions: dict[int, str], follow_rule: bool = True) -> list[ECVerdict]:
    """The EC verdict of every position of ``case`` (ORIG rounds are equivalent by definition).

    ``follow_rule=False`` gives the paper's order-blind containment, for comparison.
    """
    context = Graph()
    verdicts = []
    previous: int | None = None
    asked: set[int] = set()
    seed_before = {r.turn_id: (dg.rounds[k - 1].turn_id if k else None) for k, r in enumerate(dg.rounds)}
    for source in case.source_rounds:
        rg = dg.round(source)
        missing = {n for n in rg.needed if not held(n, context.names)}
        follows_ok = None if rg.continues is None else previous == rg.continues
        semantic = semantic_check(questions[source], rg)
        ontology = not missing and (follows_ok is not False or not follow_rule)
        if ontology and not rg.elliptical and (leans_on_context(questions[source]) or (rg.anaphors and not rg.needed)):
            # so does an anaphor the graph could not tie to an entity, or tied to one the question names itself
            # ('those lanterns' → 'lantern'); a fragment without a finite verb ('To study what?') continues the
            # round right before it in the seed
            before = seed_before[source]
            ontology = before is None or (previous == before if is_fragment(questions[source]) else before in asked)
        if follows_up(questions[source]):
            # 'Was she right?' judges the answer just given: its seed predecessor comes right before it and passed
            before = seed_before[source]
            ontology = ontology and (before is None or (previous == before and verdicts[-1].equivalent)
                                     or not follow_rule)
        story = rg.story_resolved and not rg.elliptical and not follows_up(questions[source])
        equivalent = case.perturbation == ORIG or semantic or ontology or story
        verdicts.append(ECVerdict(equivalent, semantic, ontology, story, rg.needed, frozenset(missing), follows_ok))
        context = context.union(contribution(rg, equivalent))
        previous = source
        asked.add(source)
    return verdicts


def held(name: str, names: set[str]) -> bool:
    """Does the context hold this entity: by its name, or inside a longer name ('chaudhary' in 'priya chaudhary',
    'harriers' in 'marsh harriers': a pronoun is often tied to part of the name the answer gave)?"""
    if name in names:
        return True
    words = name.split()
    return any(len(n) > len(name) and _contains(n.split(), words) for n in names)


def _contains(longer: list[str], words: list[str]) -> bool:
    return any(longer[k:k + len(words)] == words for k in range(len(longer) - len(words) + 1))


def contribution(rg, equivalent: bool) -> Graph:
    """What an asked round adds to the context: everything it gave (question and answer) when its context
    was equivalent, else only what its question states explicitly."""
    return rg.given if equivalent else rg.question


def context_before(dg: DialogueGraph, earlier) -> set[str]:
    """Entity names the context holds after these asked rounds, ``earlier`` = [(source_round, equivalent), …]."""
    names: set[str] = set()
    for source, equivalent in earlier:
        names |= contribution(dg.round(source), equivalent).names
    return names
