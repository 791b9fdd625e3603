"""Offline knowledge-graph extraction with spaCy and coreferee's rules.

Per seed: entities (named entities and noun chunks, canonicalised, aliases merged), relations
(subject–verb–object from the dependency parse), and per round the graph of the question, of the
answer and of the decontextualised question. Decontextualisation resolves each anaphor of a
question against the earlier rounds (questions and answers) of the original dialogue, and expands
an elliptical question ("Why?", "How many?") with the round it continues.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

from coreferee.data_model import Mention
from spacy.tokens import Doc, Span, Token

from mortar.dataset import Seed
from mortar.kg.model import DialogueGraph, Entity, ExtractionError, Graph, Relation, RoundGraph
from mortar.nlp import NLP, load_nlp

log = logging.getLogger(__name__)

NAMED = {"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "EVENT", "WORK_OF_ART", "PRODUCT", "LAW"}
TIMES = {"DATE", "TIME"}
PLACES = {"GPE", "LOC", "FAC"}
NUMERIC = {"CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"}
PRONOUN_GENDER = {"he": "m", "him": "m", "his": "m", "himself": "m", "she": "f", "her": "f", "hers": "f", "herself": "f"}
GENDERED = set(PRONOUN_GENDER)
TITLES = {"mr", "mrs", "ms", "miss", "dr", "sir", "lady", "lord", "mayor", "captain", "uncle", "aunt", "professor"}
WH_WORDS = {"what", "who", "whom", "which", "where", "when", "why", "how", "whose"}
LOCATIVE_PREPS = {"in", "at", "to", "on", "near", "behind", "under", "from", "into", "inside", "across", "outside",
                  "beside", "by", "above", "below", "over", "through"}
CONTINUATIONS = ("what about", "how about", "and what about", "anything else", "what else", "who else", "and then",
                 "then what", "why not")
TIME_NOUNS = {"year", "day", "time", "month", "week", "morning", "night", "evening", "afternoon", "moment",
              "summer", "winter", "spring", "autumn", "season", "century", "decade", "era", "period"}


@dataclass(frozen=True)
class Anaphor:
    kind: str  # 'pronoun', 'there', 'then', 'demonstrative', 'one'
    text: str
    antecedent: tuple[str, ...]  # canonical entity names it stands for (empty: unresolved)
    antecedent_text: str
    antecedent_round: int | None


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
        graphs = []
        for n, seed in enumerate(seeds, start=1):
            story = next(docs)
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
        return [found[i] for i in sorted(found)]

    def graph(self, doc: Doc) -> Graph:
        mentions = self.mentions(doc)
        entities = {name: Entity(name, label, "") for name, _, label in mentions}
        by_token = {tok.i: name for name, tok, _ in mentions}
        relations = []
        for verb in (t for t in doc if t.pos_ in ("VERB", "AUX")):
            subjects = [by_token[c.i] for c in verb.children if c.dep_ in ("nsubj", "nsubjpass") and c.i in by_token]
            objects = [(by_token[c.i], verb.lemma_) for c in verb.children if c.dep_ in ("dobj", "attr", "oprd")
                       and c.i in by_token]
            for prep in (c for c in verb.children if c.dep_ == "prep"):
                objects += [(by_token[g.i], f"{verb.lemma_} {prep.lower_}") for g in prep.children
                            if g.dep_ == "pobj" and g.i in by_token]
            relations += [Relation(s, o, rel) for s in subjects for o, rel in objects if s != o]
        return Graph(tuple(entities.values()), tuple(dict.fromkeys(relations)))

    # -- anaphora and ellipsis ------------------------------------------------------------
    def build(self, backend: str, model: str) -> DialogueGraph:
        q_graphs = [self.graph(q) for q, _ in self.pairs]
        a_graphs = [self.graph(a) for _, a in self.pairs]
        rounds: list[RoundGraph] = []
        for j, (q, _) in enumerate(self.pairs):
            turn = self.seed.rounds[j].turn_id
            anaphors = self.anaphors(j)
            elliptical = is_elliptical(q)
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
            rounds.append(RoundGraph(
                turn_id=turn, question=q_graphs[j], answer=a_graphs[j], decontextualised_question=text,
                decontextualised=decontext, needed=decontext.names - q_graphs[j].names,
                elliptical=elliptical, continues=continues,
                anaphors=tuple(a.text for a in anaphors),
                story_resolved=bool(anaphors) and not elliptical and all(self.story_resolves(q, a) for a in anaphors)))
        whole = Graph()
        for g in [self.graph(self.story)] + q_graphs + a_graphs:
            whole = whole.union(g)
        return DialogueGraph(self.seed.id, backend, model, whole, tuple(rounds))

    def anaphors(self, j: int) -> list[Anaphor]:
        docs = [d for p in self.pairs[:j] for d in p] + [self.pairs[j][0]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # W101: coreferee's extension is not copied; rebuilt below
            combined = Doc.from_docs(docs) if len(docs) > 1 else docs[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # coreferee's per-token data is rebuilt by initialize()
            self.rules.initialize(combined)
        q_start = len(combined) - len(self.pairs[j][0])
        # earlier utterances, most recent first, each with the round it belongs to
        spans, offset = [], 0
        for k, d in enumerate(docs[:-1]):
            spans.append((k // 2, combined[offset:offset + len(d)]))
            offset += len(d)
        spans.reverse()
        question = combined[q_start:]
        result = []
        for tok in question:
            kind = self.anaphor_kind(tok)
            if kind and not self.resolved_within(kind, tok, question):
                result.append(self.resolve(kind, tok, spans))
        return result

    def resolved_within(self, kind: str, tok: Token, question: Span) -> bool:
        """'What did Tess keep in her bucket?': the antecedent is in the question itself."""
        if kind != "pronoun":
            return False
        return any(self.compatible(kind, tok, c) for c in question
                   if c.i < tok.i and c.pos_ in ("NOUN", "PROPN") and c.lower_ not in WH_WORDS)

    def anaphor_kind(self, tok: Token) -> str | None:
        low = tok.lower_
        if low == "there" and tok.tag_ == "RB" and tok.dep_ != "expl" and tok.head.lemma_ != "be":
            return "there"  # not the existential 'there were …'
        if low == "other" and tok.dep_ == "amod" and tok.head.pos_ in ("NOUN", "PRON"):
            return "other"  # 'the other man' contrasts with someone named before
        if low == "then" and tok.tag_ == "RB":
            return "then"
        if low in ("this", "that", "these", "those") and tok.dep_ == "det" and tok.head.pos_ == "NOUN":
            return "demonstrative"
        if low in ("this", "that") and tok.pos_ == "PRON" and tok.dep_ in ("nsubj", "dobj", "pobj", "attr", "nsubjpass"):
            return "demonstrative"
        if low in ("one", "ones") and any(c.lower_ in ("which", "other", "each", "that", "this") for c in tok.children):
            return "one"
        if tok.tag_ in ("PRP", "PRP$") and self.rules.is_potential_anaphor(tok):
            return "pronoun"
        return None

    def resolve(self, kind: str, tok: Token, spans: list[tuple[int, Span]]) -> Anaphor:
        # he/she point at people first: a named person anywhere back beats a nearer animal or thing
        passes = [True, False] if tok.lower_ in GENDERED else [False]
        for named_only in passes:
            for k, span in spans:  # most recent utterance first
                for cand in reversed(span):
                    if not (self.rules.is_independent_noun(cand) or cand.ent_type_):
                        continue
                    if named_only and not (cand.pos_ == "PROPN" and cand.ent_type_ not in NUMERIC | TIMES):
                        continue
                    if self.compatible(kind, tok, cand, strict=named_only):
                        names = self.names_of(cand)
                        if names:
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
        return candidates == {anaphor.antecedent[0]}

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
                by_list = self.gender_of(name)
                by_story = max(set(vs), key=vs.count) if vs and len(set(vs)) == 1 else None
                self._people[name] = by_list or by_story
        return self._people

    def gender_of(self, name: str) -> str | None:
        first = name.split()[0].capitalize() if name else ""
        if first in self.rules.exclusively_male_names:
            return "m"
        if first in self.rules.exclusively_female_names:
            return "f"
        return None


def is_elliptical(q: Doc) -> bool:
    """A fragment that continues the previous exchange: 'Why?', 'How many?', 'Where from?', 'And then?'."""
    words = [t for t in q if not t.is_punct]
    low = q.text.lower().strip()
    if len(words) < 3 or low.startswith(CONTINUATIONS) or low.rstrip("?").endswith(" else"):
        return True
    return not any(t.pos_ in ("VERB", "AUX") for t in words)


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
