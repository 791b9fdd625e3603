"""Offline knowledge-graph extraction with spaCy and coreferee's rules.

Per seed: entities (named entities and noun chunks, canonicalised, aliases merged), relations read
off the dependency parse (subject–verb–object, copular, possessive and nominal; pronouns resolved
by coreference), and per round the graph of the question, of the answer and of the decontextualised
question. Decontextualisation resolves each anaphor of a question against the earlier rounds
(questions and answers) of the original dialogue, and expands an elliptical question ("Why?",
"How many?") with the round it continues.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, replace

from coreferee.data_model import ChainHolder, Mention
from spacy.tokens import Doc, Span, Token

from mortar.dataset import Seed
from mortar.kg.model import DialogueGraph, Entity, ExtractionError, Graph, Relation, RoundGraph
from mortar.nlp import NLP, hand_on, load_nlp

log = logging.getLogger(__name__)

NAMED = {"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "EVENT", "WORK_OF_ART", "PRODUCT", "LAW"}
TIMES = {"DATE", "TIME"}
PLACES = {"GPE", "LOC", "FAC"}
ONE_AFTER = {"which", "other", "each", "that", "this", "next", "last", "previous", "same", "first", "second", "new",
             "old", "latest"}  # 'the next one' stands for a thing named before
NUMERIC = {"CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"}
PRONOUN_GENDER = {"he": "m", "him": "m", "his": "m", "himself": "m", "she": "f", "her": "f", "hers": "f", "herself": "f"}
GENDERED = set(PRONOUN_GENDER)
# people nouns of one gender that coreferee's word lists miss ('grandmother' is no 'he')
GENDERED_NOUNS = {
    "f": {"woman", "girl", "lady", "mother", "grandmother", "mum", "mom", "grandma", "sister", "aunt", "daughter",
          "granddaughter", "niece", "wife", "widow", "bride", "queen", "princess", "nun", "actress"},
    "m": {"man", "boy", "gentleman", "father", "grandfather", "dad", "grandpa", "brother", "uncle", "son", "grandson",
          "nephew", "husband", "widower", "groom", "king", "prince", "monk", "actor"},
}
PLURAL_PRONOUNS = {"they", "them", "their", "theirs", "themselves"}
TITLES = {"mr", "mrs", "ms", "miss", "dr", "sir", "lady", "lord", "mayor", "captain", "uncle", "aunt", "professor"}
WH_WORDS = {"what", "who", "whom", "which", "where", "when", "why", "how", "whose"}
LOCATIVE_PREPS = {"in", "at", "to", "on", "near", "behind", "under", "from", "into", "inside", "across", "outside",
                  "beside", "by", "above", "below", "over", "through"}
CONTINUATIONS = ("what about", "how about", "and what about", "anything else", "what else", "who else", "and then",
                 "then what", "why not")
WH_ANSWERED = {"who", "whom", "what", "which", "whose"}  # a wh-word the answer's entity can stand in for
BE, HAVE, COUNT = "is", "has", "count"  # labels of copular, possessive and quantity relations
SAME_ROLE_BONUS, SUBJECT_BONUS, PERSON_BONUS = 8, 4, 12  # words: how much nearer a story pronoun's antecedent
# counts when it is in the pronoun's own role (subject, object), a subject, a person (for he/she)
ATTRIBUTE = "ATTRIBUTE"  # type of a relation's value that is no entity ('happy' in 'Mary was happy')
CORE_ROLES = {"nsubj", "nsubjpass", "dobj", "attr", "ROOT"}
TIME_NOUNS = {"year", "day", "time", "month", "week", "morning", "night", "evening", "afternoon", "moment",
              "summer", "winter", "spring", "autumn", "season", "century", "decade", "era", "period"}


@dataclass(frozen=True)
class Anaphor:
    kind: str  # 'pronoun', 'there', 'then', 'demonstrative', 'one'
    text: str
    antecedent: tuple[str, ...]  # canonical entity names it stands for (empty: unresolved)
    antecedent_text: str
    antecedent_round: int | None
    index: int | None = None  # the anaphor's token in its question


class SpacyExtractor:
    """The default, offline backend of the knowledge-graph model."""

    backend = "spacy"

    def __init__(self, nlp: NLP | None = None):
        self.nlp = nlp or load_nlp()

    @property
    def model(self) -> str:
        return self.nlp.description

    def close(self) -> None:
        pass  # the spaCy pipeline is shared (load_nlp) and stays loaded

    def extract(self, seed: Seed) -> DialogueGraph:
        result = self.extract_many([seed])[0]
        if isinstance(result, ExtractionError):
            raise result
        return result

    def extract_many(self, seeds: list[Seed], progress=None) -> list[DialogueGraph | ExtractionError]:
        """One result per seed, as the LLM backend returns them (this backend has no failure of its own:
        an exception here is a bug and propagates)."""
        texts = []
        for seed in seeds:
            texts.append(seed.story)
            for r in seed.rounds:
                texts.append(r.question)
                texts.append(_as_sentence(r.answer or ""))
        docs = iter(self.nlp.nlp.pipe(texts, batch_size=64))
        shared = self.nlp is load_nlp()  # the judges' pipeline: they can take its parses of the stories
        graphs = []
        for n, seed in enumerate(seeds, start=1):
            story = next(docs)
            if shared:
                hand_on(seed.story, story)
            pairs = [(next(docs), next(docs)) for _ in seed.rounds]
            graphs.append(_SeedExtraction(self.nlp, seed, story, pairs).build(self.backend, self.model))
            if progress:
                progress(n, len(seeds), {"stage": "knowledge graph", "seed": seed.id, "failed": False})
        return graphs


def _as_sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


class _SeedExtraction:
    def __init__(self, nlp: NLP, seed: Seed, story: Doc, pairs: list[tuple[Doc, Doc]]):
        self.nlp, self.rules, self.seed, self.story, self.pairs = nlp, nlp.rules, seed, story, pairs
        self.aliases = _full_names([story] + [d for p in pairs for d in p])
        self.values: set[str] = set()  # attribute values relations name ('happy'): no entity of any text
        self._dialogue: tuple[Doc, list[Span]] | None = None

    # -- entities -------------------------------------------------------------------------
    def canonical(self, span: Span | Token) -> str:
        tokens = [span] if isinstance(span, Token) else list(span)
        words = [t for t in tokens if t.pos_ not in ("DET", "PRON", "PUNCT", "PART") and t.lower_.rstrip(".") not in TITLES
                 and t.dep_ != "poss" and t.lower_ not in WH_WORDS]
        if not words:
            return ""
        root = span if isinstance(span, Token) else span.root
        if root.pos_ == "PROPN" or (root.ent_type_ in NAMED):
            name = " ".join(t.lower_ for t in words if t.pos_ in ("PROPN", "NOUN", "ADJ", "NUM") or t.ent_type_)
            return self.aliases.get(name, name) if name else root.lemma_.lower()
        if root.ent_type_ in TIMES | NUMERIC:
            return " ".join(t.lower_ for t in words)
        return root.lemma_.lower()

    def mentions(self, doc: Doc) -> list[tuple[str, Token, str]]:
        """(canonical name, root token, type) of every entity mention, in text order."""
        found: dict[int, tuple[str, Token, str]] = {}
        for ent in doc.ents:
            name = self.canonical(ent)
            if name:
                found[ent.root.i] = (name, ent.root, ent.label_)
        for chunk in doc.noun_chunks:
            if chunk.root.i in found or chunk.root.pos_ not in ("NOUN", "PROPN") or chunk.root.lower_ in WH_WORDS:
                continue
            name = self.canonical(chunk)
            if name:
                found[chunk.root.i] = (name, chunk.root, chunk.root.ent_type_ or "THING")
        for tok in doc:  # 'Harriet and Louisa Crane': the parser hangs the first name on the last one's
            if tok.pos_ == "PROPN" and not tok.ent_type_ and tok.dep_ in ("nmod", "compound") \
                    and any(c.dep_ == "conj" for c in tok.children) and tok.i not in found:
                found[tok.i] = (self.canonical(tok), tok, "PERSON")
        return [found[i] for i in sorted(found)]

    def names(self, doc: Doc) -> dict[int, tuple[str, ...]]:
        """Token index → the entity its mention names (every word of a named entity, the root of a noun chunk)."""
        mentions = self.mentions(doc)
        found = {tok.i: (name,) for name, tok, _ in mentions}
        for name, tok, _ in mentions:
            span = _entity_span(tok)
            if span is not None and span.root.i == tok.i:
                for t in span:
                    found.setdefault(t.i, (name,))
        return found

    def graph(self, doc: Doc) -> Graph:
        entities = {name: Entity(name, label, "") for name, _, label in self.mentions(doc)}
        return Graph(tuple(entities.values()), _between(self.relations(doc, self.names(doc)), entities))

    # -- relations ------------------------------------------------------------------------
    def relations(self, doc: Doc, names: dict[int, tuple[str, ...]]) -> list[Relation]:
        """The relations the text states, read off the dependency parse.

        ``names``: token index → the entities the token stands for (a mention, a pronoun resolved by
        coreference, a wh-word the answer fills in). Subject–verb–object with the particle or preposition
        in the label ('go to'), passives turned active by their agent, conjuncts expanded ('Tom and Anna');
        copular ('X is a Y', 'X was happy': label 'is'), possessive ('Mary's dog', 'X has Y': 'has'),
        nominal ('the dog of Mary': 'of'), appositions ('Hetty, their grandmother': 'is') and quantities ('three
        sticks': 'count').
        """
        def named(tok: Token) -> list[str]:
            if tok.i in names:
                return list(names[tok.i])
            if tok.dep_ == "poss" and tok.pos_ in ("NOUN", "PROPN"):  # no mention of its own: 'Mary's dog'
                return [self.possessor(tok)]
            if tok.tag_ in ("WDT", "WP") and tok.head.dep_ == "relcl":  # 'the man who lives there'
                return named(tok.head.head)
            if tok.pos_ == "ADJ" and (tok.dep_ in ("acomp", "oprd") or tok.head.dep_ in ("acomp", "oprd")) \
                    and not any(c.lower_ in WH_WORDS for c in tok.children):  # not "how old"
                self.values.add(tok.lemma_.lower())
                return [tok.lemma_.lower()]  # 'was happy (and proud)': an attribute value
            return []

        def group(tok: Token) -> list[str]:  # 'Tom and Anna'
            return [n for t in (tok, *tok.conjuncts) for n in named(t)]

        def objects(tok: Token) -> list[str]:  # the objects of a preposition
            return [n for c in tok.children if c.dep_ == "pobj" for n in group(c)]

        found: list[Relation] = []

        def add(sources: list[str], label: str, targets: list[str]) -> None:
            found.extend(Relation(s, t, label) for s in sources for t in targets if s != t)

        for verb in doc:
            if verb.pos_ not in ("VERB", "AUX") or verb.dep_ in ("aux", "auxpass"):
                continue
            subjects, passive = _subjects(verb)
            label = " ".join([("not " if any(c.dep_ == "neg" for c in verb.children) else "")
                              + {"be": BE, "have": HAVE}.get(verb.lemma_.lower(), verb.lemma_.lower())]
                             + [c.lower_ for c in verb.children if c.dep_ == "prt"])
            doers = [n for s in subjects for n in group(s)]
            if verb.dep_ == "acl" and verb.lemma_ in ("name", "call"):  # 'a sailor called Amos Pell'
                add([n for c in verb.children if c.dep_ == "oprd" for n in group(c)], BE, doers)
                continue
            if passive:  # 'the cake was baked by Tom': Tom bakes the cake
                add([n for c in verb.children if c.dep_ == "agent" for n in objects(c)], label, doers)
            for c in verb.children:
                if c.dep_ in ("dobj", "attr", "oprd", "acomp"):
                    add(doers, label, group(c))
                elif c.dep_ == "dative":
                    add(doers, f"{label} to", group(c))
                elif c.dep_ == "prep":
                    add(doers, f"{label} {c.lower_}", objects(c))
        for tok in doc:
            if tok.dep_ == "poss":  # 'Mary's dog', 'his ruler'
                add(named(tok), HAVE, named(tok.head))
            elif tok.dep_ == "appos" and not {tok.ent_type_, tok.head.ent_type_} & (TIMES | NUMERIC):
                if tok.pos_ == "PROPN" and tok.head.pos_ != "PROPN":  # 'two friends, Oliver and Ben': names first
                    add(group(tok), BE, named(tok.head))
                elif not any(c.dep_ == "conj" for c in (*tok.children, *tok.head.children)):
                    # 'Hetty, their grandmother' (not a list parsed as one: 'sticks, a roll and a sheet')
                    add(named(tok.head), BE, named(tok))
            elif tok.dep_ == "prep" and tok.head.pos_ in ("NOUN", "PROPN"):  # 'the dog of Mary'
                span = _entity_span(tok.head)
                if span is None or tok.i >= span.end:  # not inside a name: 'March of last year'
                    add(named(tok.head), tok.lower_, objects(tok))
            elif tok.dep_ == "nummod":  # 'three bamboo sticks'
                add(named(tok.head), COUNT, named(tok))
        return list(dict.fromkeys(found))

    def possessor(self, tok: Token) -> str:
        """The entity a possessive noun names ('Mr. Bennett's job' → bennett)."""
        if tok.pos_ == "NOUN" and not tok.ent_type_:
            return tok.lemma_.lower()
        span = _entity_span(tok)
        name = " ".join(t.lower_ for t in (span if span is not None else [tok])
                        if t.pos_ in ("PROPN", "NOUN") and t.lower_.rstrip(".") not in TITLES)
        return self.aliases.get(name, name)

    def story_coreference(self) -> dict[int, tuple[str, ...]]:
        """Each pronoun of the story → the entities it refers to: coreferee's chains when its neural model
        ran, else the most salient compatible mention before it (see ``antecedent``)."""
        chains = getattr(self.story._, "coref_chains", None) if self.nlp.coref_mode == "neural" else None
        if chains is not None:
            found = {tok.i: tuple(n for r in chains.resolve(tok) or () for n in self.names_of(r))
                     for tok in self.story if tok.tag_ in ("PRP", "PRP$")}
            return {i: names for i, names in found.items() if names}
        _coordination(self.rules, self.story)
        sents = list(self.story.sents)
        resolved: dict[int, tuple[str, ...]] = {}
        for s, sent in enumerate(sents):
            for tok in sent:
                if tok.tag_ in ("PRP", "PRP$") and self.rules.is_potential_anaphor(tok):
                    names = self.antecedent(tok, self.story[sents[max(0, s - 2)].start:tok.i], resolved)
                    if names:
                        resolved[tok.i] = names
        return resolved

    def antecedent(self, pronoun: Token, before: Span, resolved: dict[int, tuple[str, ...]]) -> tuple[str, ...]:
        """The entities of the compatible mention nearest the pronoun, where a mention in the pronoun's own role
        (subject, object) counts as SAME_ROLE_BONUS words nearer ('the boys ate biscuits. They carried the
        kite' — the boys), a subject SUBJECT_BONUS nearer and, for he/she, a person PERSON_BONUS nearer. An
        earlier pronoun of the same kind stands for what it was resolved to (a chain: 'he hired Weir. He …')."""
        def role(t: Token) -> str:
            while t.dep_ == "conj":
                t = t.head
            return {"nsubj": "subject", "nsubjpass": "subject", "poss": "subject", "dobj": "object",
                    "dative": "object"}.get(t.dep_, "")

        best: tuple[str, ...] = ()
        best_score = None
        for cand in before:
            if cand.i in resolved:
                if _pronoun_kind(cand) != _pronoun_kind(pronoun):
                    continue
                names, person = resolved[cand.i], pronoun.lower_ in GENDERED
            elif self.story_compatible(pronoun, cand):
                names, person = self.names_of(cand), self.is_person(cand)
                if pronoun.lower_ not in PLURAL_PRONOUNS:  # 'he' is one of 'Otto and Felix'
                    names = names[:1]
            else:
                continue
            score = pronoun.i - cand.i - (SAME_ROLE_BONUS if role(cand) and role(cand) == role(pronoun) else 0) \
                - (SUBJECT_BONUS if role(cand) == "subject" else 0) \
                - (PERSON_BONUS if person and pronoun.lower_ in GENDERED else 0)
            if names and (best_score is None or score < best_score):
                best, best_score = names, score
        return best

    def story_compatible(self, pronoun: Token, cand: Token) -> bool:
        """Number and gender agree. Stricter than coreferee's rules alone, which let 'she' be a kite (a bird
        on its list of animals) and 'it' a town; the ranking in ``antecedent`` does the rest."""
        if not (self.rules.is_independent_noun(cand) or cand.ent_type_) or cand.ent_type_ in NUMERIC | TIMES \
                or cand.like_num:
            return False
        plural = pronoun.lower_ in PLURAL_PRONOUNS
        siblings = bool(cand._.coref_chains.temp_dependent_siblings)
        if (plural and not (siblings or cand.tag_ in ("NNS", "NNPS"))) or (not plural and cand.tag_ in ("NNS", "NNPS")):
            return False
        lemma = cand.lemma_.lower()
        gender = PRONOUN_GENDER.get(pronoun.lower_)
        if gender:
            if _other_gender(cand, gender):
                return False
            name = self.names_of(cand)[0] if self.names_of(cand) else ""
            known = self.story_people().get(name) or (self.gender_of(name) if cand.pos_ == "PROPN" else None)
            if (known and known != gender) or (cand.ent_type_ not in ("", "PERSON") and not known):
                return False
            if not (self.is_person(cand) or lemma in self.rules.person_words or lemma in self.rules.animal_words):
                return False
        elif pronoun.lower_ in ("it", "its", "itself") and self.is_person(cand):
            return False
        return self.rules.is_potential_anaphoric_pair(Mention(cand, plural and siblings), pronoun, True) > 0

    def is_person(self, tok: Token) -> bool:
        """Surely a person: a PERSON name, a person-only noun ('grandmother'; coreferee's wider list of words
        that may be a person holds 'company' and 'watch'), a first name of one gender."""
        return tok.ent_type_ == "PERSON" or tok.lemma_.lower() in self.rules.exclusively_person_words \
            or (tok.pos_ == "PROPN" and self.gender_of(tok.lower_) is not None)

    def story_graph(self) -> Graph:
        """The story's entities and relations, its pronouns resolved."""
        names = self.names(self.story) | self.story_coreference()
        return self.closed(self.graph(self.story), self.relations(self.story, names))

    def closed(self, graph: Graph, relations: list[Relation]) -> Graph:
        """``graph`` with ``relations`` added, and an entity for each end it lacks (an attribute value such as
        'happy', an antecedent named in another text)."""
        ends = dict.fromkeys(n for r in relations for n in (r.source, r.target) if n not in graph.names)
        return graph.union(Graph(tuple(Entity(n, ATTRIBUTE if n in self.values else "") for n in ends),
                                 tuple(relations)))

    def answered(self, q: Doc, a: Doc) -> dict[int, tuple[str, ...]]:
        """The question's wh-word → the entities of a short answer: 'Who lent Maria a stove?' — 'Tom Hardy'."""
        wh = next((t for t in q if t.lower_ in WH_ANSWERED
                   and t.dep_ in ("nsubj", "nsubjpass", "dobj", "attr", "pobj", "poss")), None)
        root = next((t for t in a if t.dep_ == "ROOT"), None)
        if wh is None or root is None:
            return {}
        if root.pos_ == "ADP":  # 'in the town of Kelso'
            root = next((c for c in root.children if c.dep_ == "pobj"), root)
        names = self.names(a)
        found = tuple(n for t in (root, *root.conjuncts) for n in names.get(t.i, ()))
        return {wh.i: found} if found else {}

    # -- anaphora and ellipsis ------------------------------------------------------------
    def build(self, backend: str, model: str) -> DialogueGraph:
        q_graphs = [self.graph(q) for q, _ in self.pairs]
        a_graphs = [self.graph(a) for _, a in self.pairs]
        rounds: list[RoundGraph] = []
        round_relations: list[list[Relation]] = []  # what each round states, its anaphors and wh-word filled in
        for j, (q, _) in enumerate(self.pairs):
            turn = self.seed.rounds[j].turn_id
            anaphors = [self.first_named(a, rounds) for a in self.anaphors(j)]
            elliptical = is_elliptical(q)
            resolved = self.names(q) | {a.index: a.antecedent for a in anaphors if a.antecedent and a.index is not None}
            round_relations.append(self.relations(q, resolved | self.answered(q, self.pairs[j][1])))
            decontext = q_graphs[j]
            text = q.text
            for a in anaphors:
                decontext = decontext.union(Graph(tuple(Entity(n) for n in a.antecedent)))
                if a.antecedent_text:
                    text = text.replace(a.text, a.antecedent_text, 1)
            continues = None
            if elliptical and j > 0:
                prev = rounds[j - 1]
                continues = prev.turn_id
                decontext = decontext.union(prev.given)
                text = f"{text} (continuing: {prev.decontextualised_question} — {self.seed.rounds[j - 1].answer})"
            decontext = Graph(decontext.entities,
                              decontext.relations + _between(self.relations(q, resolved), decontext.names))
            rounds.append(RoundGraph(
                turn_id=turn, question=q_graphs[j], answer=a_graphs[j], decontextualised_question=text,
                decontextualised=decontext, needed=decontext.names - q_graphs[j].names,
                elliptical=elliptical, continues=continues,
                anaphors=tuple(a.text for a in anaphors),
                story_resolved=bool(anaphors) and not elliptical and all(self.story_resolves(q, a) for a in anaphors)))
        whole = Graph()
        for g in [self.story_graph()] + q_graphs + a_graphs + [r.decontextualised for r in rounds]:
            whole = whole.union(g)
        whole = self.closed(whole, [r for rels in round_relations for r in rels])
        return DialogueGraph(self.seed.id, backend, model, whole, tuple(rounds))

    def first_named(self, anaphor: Anaphor, rounds: list[RoundGraph]) -> Anaphor:
        """An anaphor whose antecedent is the answer of a round that only put a name to that round's own referent
        ('How many fishermen were rescued?' — 'Who were they?' — 'Callum and Dermot Reyes' — 'What was their
        boat called?') stands for that referent: the fishermen are the same people under their first wording, and
        a perturbed context that named them only that way is as informative."""
        k = (anaphor.antecedent_round or 0) - 1
        if k < 0 or k >= len(rounds) or not rounds[k].needed or not anaphor.antecedent:
            return anaphor
        question, answer = self.pairs[k]
        if set(anaphor.antecedent) & rounds[k].question.names or not _identifies(question, answer):
            return anaphor
        return replace(anaphor, antecedent=tuple(sorted(rounds[k].needed)))

    def dialogue(self) -> tuple[Doc, list[Span]]:
        """The whole dialogue as one document, coreferee's data built once, and each utterance's span in it
        (question, answer, question, …). coreferee reads a token's sentence and what comes before it, never
        what follows, so one document serves every round's anaphors."""
        if self._dialogue is None:
            docs = [d for p in self.pairs for d in p]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # W101: coreferee's extension is not copied; rebuilt below
                combined = Doc.from_docs(docs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # coreferee's per-token data is rebuilt by initialize()
                self.rules.initialize(combined)
            spans, offset = [], 0
            for d in docs:
                spans.append(combined[offset:offset + len(d)])
                offset += len(d)
            self._dialogue = (combined, spans)
        return self._dialogue

    def anaphors(self, j: int) -> list[Anaphor]:
        _, utterances = self.dialogue()
        question = utterances[2 * j]
        q_start = question.start
        # earlier utterances, most recent first, each with the round it belongs to
        spans = [(k // 2, utterances[k]) for k in range(2 * j)][::-1]
        result = []
        for tok in question:
            kind = self.anaphor_kind(tok)
            if kind and not self.resolved_within(kind, tok, question):
                apart = {n for c in question if _bound_apart(tok, c) for n in self.names_of(c)}
                result.append(replace(self.resolve(kind, tok, spans, apart), index=tok.i - q_start))
        return result

    def resolved_within(self, kind: str, tok: Token, question: Span) -> bool:
        """'What did Tess keep in her bucket?': the antecedent is in the question itself."""
        if kind != "pronoun":
            return False
        return any(self.compatible(kind, tok, c) for c in question if c.i < tok.i and c.pos_ in ("NOUN", "PROPN")
                   and c.lower_ not in WH_WORDS and not _bound_apart(tok, c))

    def anaphor_kind(self, tok: Token) -> str | None:
        low = tok.lower_
        if low == "there" and tok.tag_ == "RB" and tok.dep_ != "expl" and (tok.head.lemma_ != "be" or any(
                c.dep_ in ("nsubj", "nsubjpass") and c.i < tok.i and not _asked(c) for c in tok.head.children)):
            return "there"  # not the existential 'there were …', 'how many tickets were there?'; 'while she was
            # there' is a place
        if low == "other" and tok.dep_ == "amod" and tok.head.pos_ in ("NOUN", "PRON"):
            return "other"  # 'the other man' contrasts with someone named before
        if low == "then" and tok.tag_ == "RB":
            return "then"
        if low == "meanwhile" and tok.pos_ == "ADV" or (low == "time" and tok.head.lower_ == "at" and any(
                c.lower_ == "the" for c in tok.children)):
            return "then"  # said against an event told before: 'meanwhile', 'at the time'
        if low in ("this", "these") and tok.dep_ == "det" and tok.head.lemma_.lower() in TIME_NOUNS:
            return None  # 'this year', 'this evening': the teller's own time, not one said before ('that night')
        if low in ("this", "that", "these", "those") and tok.dep_ == "det" and tok.head.pos_ == "NOUN":
            return "demonstrative"
        if low in ("this", "that", "these", "those") and tok.dep_ == "mark" and tok.i + 1 < len(tok.doc) \
                and tok.nbor().pos_ == "NOUN" and tok.head.dep_ == "ccomp" and tok.head.head.pos_ == "AUX":
            return "demonstrative"  # 'How much longer is that player staying on?', parsed as 'is [that …]'
        if low in ("this", "that") and tok.tag_ != "WDT" and tok.dep_ in ("nsubj", "dobj", "pobj", "attr", "nsubjpass"):
            return "demonstrative"  # also where the tagger took it for a conjunction: 'How far is that from …'
        if tok.text.isupper() and len(tok.text) > 1:
            return None  # an acronym: 'IT', 'US'

        described = any(c.dep_ == "amod" for c in tok.children) and not any(
            c.dep_ in ("relcl", "acl", "prep") or c.lower_ in ("no", "every", "any", "some") for c in tok.children)
        if low in ("one", "ones") and (any(c.lower_ in ONE_AFTER for c in tok.children) or described):
            return "one"  # 'the next one', 'the main ones' (not 'the one who found it')
        if _bare_superlative(tok):
            return "one"  # 'When was the most recent?', 'Where is the nearest?'
        if low == "it" and tok.dep_ == "nsubj" and tok.head.lemma_ in ("take", "cost") and any(
                c.dep_ in ("dobj", "dative") and not _asked(c) for c in tok.head.children) and any(
                c.dep_ in ("xcomp", "advcl") and any(a.lower_ == "to" for a in c.children) for c in tok.head.children):
            return None  # stands for what someone does: 'How long did it take Ama to get back in her boat?' (not
            # 'How long does it take to go around the Sun?')
        if tok.tag_ in ("PRP", "PRP$") and self.rules.is_potential_anaphor(tok):
            return "pronoun"
        if low == "it" and tok.dep_ == "nsubjpass" and any(c.dep_ == "xcomp" for c in tok.head.children):
            return "pronoun"  # raised, not pleonastic: 'What is it expected to fetch?', 'What is it used to treat?'
        return None

    def resolve(self, kind: str, tok: Token, spans: list[tuple[int, Span]], apart: frozenset[str] = frozenset()) -> Anaphor:
        """The anaphor's antecedent in the earlier utterances; never one of the entities in ``apart``."""
        # he/she point at people first: the nearest person, named or not ('a boy'), beats a nearer animal or thing;
        # a nearer person is the seed's antecedent even when someone else was named further back
        # 'it' points at what the talk is about first: a subject, an object or a bare answer, not a place or
        # time on the side ('What did the divers raise? — a bell. Where? — off Kinsale. Who cast it?': the bell)
        passes = [True, False] if tok.lower_ in GENDERED or tok.lower_ in ("it", "its") else [False]
        for first in passes:
            people_only = first and tok.lower_ in GENDERED
            for k, span in spans:  # most recent utterance first
                for cand in reversed(span):
                    if not (self.rules.is_independent_noun(cand) or cand.ent_type_):
                        continue
                    if cand.dep_ == "pobj" and cand.head.lower_ == "as":
                        continue  # 'As a ship's nurse' says what someone already named was, not someone new
                    if people_only and not ((cand.pos_ == "PROPN" and cand.ent_type_ not in NUMERIC | TIMES)
                                            or self.is_person(cand)):
                        continue
                    if first and not people_only and (cand.dep_ not in CORE_ROLES or cand.ent_type_ in PLACES | TIMES):
                        continue
                    if self.compatible(kind, tok, cand, strict=people_only):
                        names = self.names_of(cand)
                        if names and not set(names) & apart:
                            return Anaphor(kind, tok.text, names, _mention_text(cand), k + 1)
        if (kind == "then" or (kind == "demonstrative" and tok.dep_ != "det")) and spans:
            # an event or time of the round just before: stands for that round's information
            k = spans[0][0]
            q, a = self.pairs[k]
            names = tuple(sorted((self.graph(a).names or self.graph(q).names)))
            return Anaphor(kind, tok.text, names, "", k + 1)
        return Anaphor(kind, tok.text, (), "", None)

    def compatible(self, kind: str, tok: Token, cand: Token, strict: bool = False) -> bool:
        if kind == "there":
            return cand.ent_type_ in PLACES or (cand.ent_type_ not in TIMES | NUMERIC and cand.dep_ == "pobj" and cand.head.lower_ in LOCATIVE_PREPS
                                               and cand.pos_ in ("NOUN", "PROPN"))
        if kind == "then":
            return cand.ent_type_ in TIMES
        if kind == "demonstrative":
            if tok.dep_ != "det":
                return False
            head = tok.head
            if head.lemma_.lower() in TIME_NOUNS:
                return cand.ent_type_ in TIMES
            return cand.lemma_.lower() == head.lemma_.lower() and cand.i != head.i
        if kind == "other":
            head = tok.head
            if head.lemma_.lower() in ("one", "man", "woman", "person", "boy", "girl", "brother", "sister"):
                return cand.ent_type_ == "PERSON" or cand.lemma_.lower() == head.lemma_.lower()
            return cand.lemma_.lower() == head.lemma_.lower() and cand.i != head.i
        if kind == "one":
            return cand.tag_ in ("NNS", "NNPS") or bool(cand._.coref_chains.temp_dependent_siblings)
        if cand.ent_type_ in NUMERIC | TIMES or not (self.rules.is_independent_noun(cand) or cand.pos_ == "PROPN"):
            return False
        if cand.like_num or (tok.lower_ in ("it", "its", "itself") and (
                cand.ent_type_ == "PERSON" or self.story_people().get(self.canonical(cand)))):
            return False  # 'it' is never a person, nor a bare number
        wanted = PRONOUN_GENDER.get(tok.lower_)
        if wanted and _other_gender(cand, wanted):
            return False
        if wanted and cand.pos_ == "PROPN":
            # the story's own he/she for this person settles agreement where name lists cannot
            known = self.story_people().get(self.names_of(cand)[0] if self.names_of(cand) else "")
            if known:
                return known == wanted
        score = self.rules.is_potential_anaphoric_pair(Mention(cand, True), tok, True)
        if score == 1 and not strict:  # uncertain: accept a name whose number agrees
            plural = tok.lower_ in ("they", "them", "their", "theirs", "themselves")
            grouped = cand.tag_ in ("NNS", "NNPS") or bool(cand._.coref_chains.temp_dependent_siblings)
            return cand.pos_ == "PROPN" and plural == grouped
        return score == 2

    def names_of(self, cand: Token) -> tuple[str, ...]:
        """The entity a candidate stands for, or all conjuncts of a coordination."""
        toks = [cand] + list(cand._.coref_chains.temp_dependent_siblings)
        names = []
        for t in toks:
            span = _entity_span(t)
            name = self.canonical(span) if span is not None else self.canonical(t)
            if name:
                names.append(name)
        return tuple(dict.fromkeys(names))

    # -- story check ----------------------------------------------------------------------
    def story_resolves(self, q: Doc, anaphor: Anaphor) -> bool:
        """A personal pronoun whose only possible referent in the story is its antecedent."""
        gender = PRONOUN_GENDER.get(anaphor.text.lower())
        if anaphor.kind != "pronoun" or gender is None or len(anaphor.antecedent) != 1:
            return False
        candidates = {p for p, g in self.story_people().items() if g in (gender, None)}
        return candidates == {anaphor.antecedent[0]} and not self.unnamed_people(gender)

    def unnamed_people(self, gender: str) -> list[Token]:
        """The story's people of this gender known by no name ('her grandfather', 'a boy'): possible referents too.
        A noun that only describes a named person ('the captain, Morag Fyfe') is none."""
        def named(t: Token) -> bool:
            return any(x.ent_type_ == "PERSON" for x in (t.head, *t.children) if x.dep_ in ("appos", "compound")
                       or t.dep_ in ("appos", "attr", "compound"))

        return [t for t in self.story
                if t.pos_ == "NOUN" and t.lemma_.lower() in GENDERED_NOUNS[gender] and not named(t)]

    def story_people(self) -> dict[str, str | None]:
        """The story's named people with their gender ('m', 'f' or None when unknown).

        Gender comes from coreferee's name lists, else from the pronouns the story itself uses for
        the person: the first he/she after a mention, before any other person is named.
        """
        if not hasattr(self, "_people"):
            votes: dict[str, list[str]] = {}
            ents = [e for e in self.story.ents if e.label_ == "PERSON" and self.canonical(e)]
            starts = {e.start for e in ents}
            for e in ents:
                name = self.canonical(e)
                votes.setdefault(name, [])
                end = min(len(self.story), e.sent.end + len(list(self.story[e.sent.end:].sents)[0]) if e.sent.end < len(self.story) else e.sent.end)
                for tok in self.story[e.end:end]:
                    if tok.i in starts:
                        break
                    if tok.lower_ in PRONOUN_GENDER:
                        votes[name].append(PRONOUN_GENDER[tok.lower_])
                        break
            self._people = {}
            for name, vs in votes.items():
                mentions = [e for e in ents if self.canonical(e) == name]
                by_list = self.gender_of(name) or _gender_by_title(mentions)
                by_story = max(set(vs), key=vs.count) if vs and len(set(vs)) == 1 else None
                if not (by_list or by_story) and _only_a_place(mentions):
                    continue  # 'on Mill Lane', 'at the Gravensteen': the tagger's person is where things are
                self._people[name] = by_list or by_story
        return self._people

    def gender_of(self, name: str) -> str | None:
        first = name.split()[0].capitalize() if name else ""
        if first in self.rules.exclusively_male_names:
            return "m"
        if first in self.rules.exclusively_female_names:
            return "f"
        return None


# titles of address that say a gender, beside the gendered nouns ('Queen', 'Uncle') that can stand as titles too
GENDERED_TITLES = {"m": GENDERED_NOUNS["m"] | {"mr", "sir", "lord", "count", "duke", "baron", "saint", "st"},
                   "f": GENDERED_NOUNS["f"] | {"mrs", "ms", "miss", "dame", "madame", "countess", "duchess",
                                               "baroness"}}


def _gender_by_title(mentions: list[Span]) -> str | None:
    """'Count Philip', 'Mrs Okafor': the title before or in a name says the gender coreferee's lists may not."""
    for e in mentions:
        for tok in [e.doc[e.start - 1]] * (e.start > 0) + list(e):
            word = tok.lower_.rstrip(".")
            gender = next((g for g, titles in GENDERED_TITLES.items() if word in titles), None)
            if gender:
                return gender
    return None


def _only_a_place(mentions: list[Span]) -> bool:
    """Is every mention of a name the object of a place preposition, never a subject or a possessor?"""
    return bool(mentions) and all(e.root.dep_ == "pobj" and e.root.head.lower_ in LOCATIVE_PREPS for e in mentions)


def is_elliptical(q: Doc) -> bool:
    """A fragment that continues the previous exchange: 'Why?', 'How many?', 'Where from?', 'And then?'."""
    words = [t for t in q if not t.is_punct]
    low = q.text.lower().strip()
    if len(words) < 3 or low.startswith(CONTINUATIONS) or low.rstrip("?").endswith(" else"):
        return True
    root = next((t for t in words if t.dep_ == "ROOT"), None)
    if root is not None and root.tag_ == "NNS" and root.i + 1 < len(q) and q[root.i + 1].tag_ in (
            "RB", "DT", "PRP", "PRP$"):
        return False  # a verb the tagger took for a plural noun: 'Which tomato variety cracks easily?'
    # no verb, or only a participle and no verb that could carry the tense: 'Compared with his old tent?'
    return not any(t.pos_ in ("VERB", "AUX") and t.tag_ not in ("VBN", "VBG") for t in words)


def _identifies(question: Doc, answer: Doc) -> bool:
    """The round only names or describes the referent of its own pronoun: 'Who were they?', 'What is her name?',
    or an answer 'they were sisters'."""
    def copular(doc: Doc) -> Token | None:
        root = next((t for t in doc if t.dep_ == "ROOT"), None)
        return root if root is not None and root.lemma_ == "be" else None

    root = copular(question)
    if root is not None:
        args = [c for c in root.children if c.dep_ in ("nsubj", "attr")]
        if any(a.lower_ in ("who", "what") for a in args) and any(
                a.tag_ == "PRP" or (a.lemma_ == "name" and any(c.tag_ == "PRP$" for c in a.children)) for a in args):
            return True
    root = copular(answer)
    return root is not None and any(c.dep_ == "nsubj" and c.tag_ == "PRP" for c in root.children)


def _subjects(verb: Token) -> tuple[list[Token], bool]:
    """The subjects of a verb's clause and whether it is passive; a verb without its own subject shares that of
    the verb it continues ('Otto measured the sticks and tied them', 'decided to build a kite', 'came to help')
    or is said of the noun it modifies ('a cake shaped like a castle')."""
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    if subjects:
        return subjects, subjects[0].dep_ == "nsubjpass"
    if verb.dep_ in ("conj", "xcomp", "advcl") and verb.head.pos_ in ("VERB", "AUX") and verb.head.i != verb.i:
        return _subjects(verb.head)
    if verb.dep_ in ("acl", "relcl") and verb.head.pos_ in ("NOUN", "PROPN"):
        return [verb.head], verb.tag_ == "VBN"
    return [], False


def _coordination(rules, doc: Doc) -> None:
    """The part of coreferee's ``initialize`` that its compatibility checks read: each token's coordinated
    siblings ('Tom and Anna'). The whole of it also lists every pronoun's candidates, a cost the story does
    not need."""
    for tok in doc:
        tok._.coref_chains = ChainHolder()
    for tok in doc:
        siblings = rules.get_dependent_siblings(tok)
        tok._.coref_chains.temp_dependent_siblings = siblings
        for sibling in siblings:
            if sibling.i != tok.i and tok._.coref_chains.temp_governing_sibling is None:
                sibling._.coref_chains.temp_governing_sibling = tok


def _bare_superlative(tok: Token) -> bool:
    """'the most recent', 'the nearest', 'the last' standing for a noun: as a subject or an object, or as what a
    question asks is so where it names no noun of its own ('Which was the oldest?', not 'Which grape is the
    oldest?')."""
    if tok.pos_ != "ADJ" or not any(c.lower_ == "the" for c in tok.children):
        return False
    if not (tok.tag_ == "JJS" or tok.lower_ in ONE_AFTER or any(c.lower_ in ("most", "least") for c in tok.children)):
        return False
    if tok.dep_ in ("nsubj", "nsubjpass", "dobj", "pobj"):
        return True
    return tok.dep_ == "attr" and not any(
        (c.dep_ in ("nsubj", "nsubjpass") and c.pos_ in ("NOUN", "PROPN")) or (_asked(c) and c.pos_ == "NOUN")
        for c in tok.head.subtree)


def _asked(token: Token) -> bool:
    """The phrase is what the question asks for: a wh-word heads it or stands in it ('how many tickets', 'what
    damage')."""
    return any(t.tag_ in ("WDT", "WP", "WP$", "WRB") for t in token.subtree)


def _bound_apart(pronoun: Token, other: Token) -> bool:
    """A plain object pronoun never stands for its own verb's subject or object ('Where did Mrs Parker pass her?':
    not Mrs Parker); a possessive or reflexive one may ('Tess … her bucket', 'Tom hurt himself')."""
    while other.dep_ == "compound":  # 'Mrs' in 'Mrs Parker'
        other = other.head
    return pronoun.dep_ in ("dobj", "dative", "iobj") and other.i != pronoun.i and other.head.i == pronoun.head.i \
        and other.dep_ in ("nsubj", "nsubjpass", "dobj", "dative")


def _other_gender(cand: Token, gender: str) -> bool:
    """A person noun of the other gender than the pronoun's ('her' is never the grandfather)."""
    return cand.lemma_.lower() in GENDERED_NOUNS["m" if gender == "f" else "f"]


def _pronoun_kind(tok: Token) -> str:
    low = tok.lower_
    if low in PLURAL_PRONOUNS:
        return "plural"
    return PRONOUN_GENDER.get(low) or ("neuter" if low in ("it", "its", "itself") else low)


def _between(relations: list[Relation], names) -> tuple[Relation, ...]:
    """The relations whose both ends are among ``names``: a round's graph keeps to its own entities (the
    context check compares entity sets; its relations are for the reader)."""
    return tuple(dict.fromkeys(r for r in relations if r.source in names and r.target in names))


def _entity_span(tok: Token) -> Span | None:
    if tok.ent_type_:
        for ent in tok.doc.ents:
            if ent.start <= tok.i < ent.end:
                return ent
    return None


def _mention_text(tok: Token) -> str:
    span = _entity_span(tok)
    if span is not None:
        return span.text
    left = min((c.i for c in tok.children if c.dep_ in ("compound", "amod", "det", "poss")), default=tok.i)
    return tok.doc[left:tok.i + 1].text


def _full_names(docs: list[Doc]) -> dict[str, str]:
    """Map each proper name to the one longer name that contains it ('felix' → 'felix brindle')."""
    names = set()
    for doc in docs:
        for ent in doc.ents:
            if ent.label_ in NAMED:
                words = [t.lower_ for t in ent if t.pos_ in ("PROPN", "NOUN", "ADJ") and t.lower_.rstrip(".") not in TITLES]
                if words:
                    names.add(" ".join(words))
    aliases = {}
    for name in names:
        parts = set(name.split())
        longer = [n for n in names if n != name and parts <= set(n.split())]
        if len(longer) == 1:
            aliases[name] = longer[0]
        elif len(longer) > 1:
            longest = max(longer, key=len)
            if all(set(n.split()) <= set(longest.split()) for n in longer):
                aliases[name] = longest
    return aliases
