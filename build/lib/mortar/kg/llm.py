"""The paper's LLM information-extraction pipeline (MORTAR §III-E2, Fig. 5) behind the extractor interface.

Per dialogue, one single-turn JSON prompt per step, each covering all rounds at once:

1. declarative extraction: each round becomes a stand-alone declarative sentence (the "facts");
2. topic and 3. entity types, from the facts;
4. graph extraction: the whole-dialogue graph G(V, E), entities with type and description;
5. question decontextualisation: each question rewritten to be answerable on its own, with its
   anaphors, whether it is elliptical, and whether the story alone settles its referents;
6. dialogue round graph: the entities and relations of each question, answer and rewritten question,
   chosen from G;
7. canonicalisation (only when step 4 or 6 used names outside G): each unseen name is mapped onto an
   existing entity (an alias), a group of existing entities, or added to G as a new entity.

Names are canonical (lower case, no determiners) so rounds can be compared by set operations:
``needed`` (Ḡ_j) is what the rewritten question names and the question itself does not.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mortar.chat import ChatClient, ChatError
from mortar.dataset import Seed
from mortar.kg import prompts
from mortar.kg.model import DialogueGraph, Entity, ExtractionError, Graph, Relation, RoundGraph
from mortar.kg.prompts import Prompt

log = logging.getLogger(__name__)

# Temperature 0 for determinism; an unusable answer is asked for again, a little warmer each time,
# as the paper does before giving a dialogue up (§V-D1).
TEMPERATURES = (0.0, 0.3, 0.6)
# The request itself was refused for this dialogue's content (e.g. longer than the model's context):
# the seed fails, the run goes on.
REFUSED_FOR_CONTENT = {400, 413, 422}
DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "his", "her", "its", "their", "my", "our",
               "your"}


def canonical(name: str) -> str:
    """The canonical form of an entity name: 'The Old Barn.' -> 'old barn'."""
    words = re.sub(r"\s+", " ", name).strip().strip(".,;:!?\"'`()[]").lower().split(" ")
    while words and words[0] in DETERMINERS:
        words = words[1:]
    return " ".join(words).strip()


class LlmExtractor:
    """The paper's LLM backend of the knowledge-graph model (backend "llm", model = the LLM's name)."""

    backend = "llm"

    def __init__(self, chat: ChatClient, temperatures: tuple[float, ...] = TEMPERATURES):
        self.chat = chat
        self.temperatures = temperatures

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **chat_options) -> "LlmExtractor":
        """An extractor on the endpoint the environment describes (see mortar.chat); options go to ChatConfig."""
        return cls(ChatClient.from_env(env, **chat_options))

    @property
    def model(self) -> str:
        return self.chat.model

    def close(self) -> None:
        self.chat.close()

    def extract(self, seed: Seed) -> DialogueGraph:
        """The seed's graph. Raises ExtractionError when this seed cannot be extracted (unusable answers
        after all tries, or a request refused for its content); raises ChatError when the service itself
        fails (unreachable after retries, key refused): then no seed is to blame and none is marked failed."""
        return _Pipeline(self.chat, self.temperatures, seed).run(self.backend)

    def extract_many(self, seeds: list[Seed], progress=None) -> list[DialogueGraph | ExtractionError]:
        """One result per seed, in order: its DialogueGraph, or the ExtractionError that says why it failed
        (to be recorded as a failed seed). ChatError propagates as in extract()."""
        results: list[DialogueGraph | ExtractionError] = []
        for n, seed in enumerate(seeds, start=1):
            try:
                result: DialogueGraph | ExtractionError = self.extract(seed)
            except ExtractionError as e:
                log.warning("knowledge graph of seed %s failed: %s", seed.id, e)
                result = e
            results.append(result)
            if progress:
                progress(n, len(seeds), {"stage": "knowledge graph", "seed": seed.id,
                                         "failed": isinstance(result, ExtractionError)})
        return results


class _Malformed(ValueError):
    """An answer that is not the JSON the step asked for."""


@dataclass(frozen=True)
class _Rewrite:
    question: str
    anaphors: tuple[str, ...]
    elliptical: bool
    story_resolved: bool


@dataclass(frozen=True)
class _Part:
    """Names and relations one part of a round (question, answer, rewritten question) was given."""
    entities: tuple[str, ...]
    relations: tuple[Relation, ...]


class _Pipeline:
    def __init__(self, chat: ChatClient, temperatures: tuple[float, ...], seed: Seed):
        self.chat, self.temperatures, self.seed = chat, temperatures, seed
        self.turns = [r.turn_id for r in seed.rounds]
        self.calls = 0

    def ask(self, prompt: Prompt, parse: Callable[[dict], object], **fields: str):
        """Ask one step; parse its JSON answer, asking again (warmer) while the answer is unusable."""
        messages = [{"role": "system", "content": prompts.SYSTEM},
                    {"role": "user", "content": prompt.render(**fields)}]
        problem = ""
        for n, temperature in enumerate(self.temperatures, start=1):
            self.calls += 1
            try:
                answer = self.chat.complete(messages, temperature=temperature)
                return parse(_json_object(answer))
            except _Malformed as e:
                problem = str(e)
            except ChatError as e:
                if e.code == "json_validate_failed":  # the service's JSON mode caught a malformed answer
                    problem = "the service rejected the model's answer as invalid JSON"
                elif e.status in REFUSED_FOR_CONTENT:
                    raise ExtractionError(f"seed {self.seed.id}: {prompt.step}: request refused: {e}") from None
                else:
                    raise
            if n < len(self.temperatures):
                log.warning("seed %s: %s: unusable answer (%s); asking again at temperature %g",
                            self.seed.id, prompt.step, problem, self.temperatures[n])
        raise ExtractionError(f"seed {self.seed.id}: {prompt.step}: no usable JSON answer after "
                              f"{len(self.temperatures)} tries ({problem})")

    def run(self, backend: str) -> DialogueGraph:
        seed = self.seed
        dialogue = prompts.dialogue_text(seed.rounds)
        # dialogue-oriented steps: the whole graph G(V, E)
        facts = prompts.facts_text(self.ask(prompts.DECLARATIVE, self.per_round(_text), dialogue=dialogue))
        topic = self.ask(prompts.TOPIC, _topic, facts=facts)
        types = self.ask(prompts.ENTITY_TYPES, _entity_types, topic=topic, facts=facts)
        entities, relations = self.ask(prompts.GRAPH, _graph, topic=topic, entity_types=prompts.as_json(types),
                                       facts=facts)
        # round-oriented steps: each round's subgraph, chosen through its decontextualised question
        rewrites = self.ask(prompts.DECONTEXTUALISATION, self.per_round(_rewrite), story=seed.story or "(none)",
                            dialogue=dialogue)
        standalone = {t: rewrites[t].question or seed.round(t).question for t in self.turns}
        chosen = self.ask(prompts.ROUND_GRAPH, self.per_round(_round_parts), entities=_entity_list(entities),
                          relations=prompts.as_json([{"source": r.source, "target": r.target, "relation": r.name}
                                                     for r in relations]),
                          dialogue=prompts.dialogue_with_rewrites(seed.rounds, standalone))
        used = [n for parts in chosen.values() for part in parts
                for n in part.entities + tuple(m for r in part.relations for m in (r.source, r.target))]
        used += [n for r in relations for n in (r.source, r.target)]
        members = self.canonicalise(entities, types, used)

        def expand(name: str) -> tuple[str, ...]:
            return members.get(name, (name,))

        def expand_relations(rels) -> list[Relation]:
            return [Relation(s, t, r.name) for r in rels for s in expand(r.source) for t in expand(r.target) if s != t]

        def graph(part: _Part) -> Graph:
            names = list(dict.fromkeys(m for n in part.entities for m in expand(n)))
            rels = [r for r in expand_relations(part.relations) if r.source in names and r.target in names]
            return Graph(tuple(entities[n] for n in names), tuple(dict.fromkeys(rels)))

        whole = Graph(tuple(entities.values()), tuple(dict.fromkeys(expand_relations(relations))))
        rounds = []
        for k, turn in enumerate(self.turns):
            question, answer, decontext = (graph(p) for p in chosen[turn])
            decontext = decontext.union(question)  # the rewrite restates the question, so names all it names
            rewrite = rewrites[turn]
            elliptical = rewrite.elliptical and k > 0
            anaphors = tuple(a for a in rewrite.anaphors if _occurs(a, seed.round(turn).question))
            whole = whole.union(question).union(answer).union(decontext)
            rounds.append(RoundGraph(
                turn_id=turn, question=question, answer=answer, decontextualised_question=standalone[turn],
                decontextualised=decontext, needed=decontext.names - question.names,
                elliptical=elliptical, continues=self.turns[k - 1] if elliptical else None, anaphors=anaphors,
                story_resolved=rewrite.story_resolved and bool(anaphors) and not elliptical))
        log.info("seed %s: knowledge graph of %d entities from %d LLM calls", seed.id, len(whole.entities), self.calls)
        return DialogueGraph(seed.id, backend, self.chat.model, whole, tuple(rounds))

    def canonicalise(self, entities: dict[str, Entity], types: list[str], used: list[str]) -> dict[str, tuple[str, ...]]:
        """Map each name used outside the whole graph onto the entities it stands for: an alias of one
        existing entity, a group of them, or an entity the graph omitted (added to ``entities``)."""
        unseen = list(dict.fromkeys(n for n in used if n not in entities))
        if not unseen:
            return {}
        decisions = self.ask(prompts.CANONICALISATION, _canonicalisation(unseen), entities=_entity_list(entities),
                             entity_types=prompts.as_json(types), names="\n".join(f"- {n}" for n in unseen))
        members = {}
        for name in unseen:
            is_subset, group = decisions[name]
            known = tuple(m.name for m in group if m.name in entities) if is_subset else ()
            if not known:
                new = group[0] if group and not is_subset else Entity(name)
                entities.setdefault(new.name, new)  # under the name the LLM settled on, possibly an existing one
                known = (new.name,)
            members[name] = known
        return members

    def per_round(self, parse_item: Callable[[object], object]) -> Callable[[dict], dict]:
        """Parse an answer keyed "Round <turn_id>" with one entry for every round of the seed."""
        def parse(answer: dict) -> dict:
            keyed = {re.sub(r"\D", "", str(k)): v for k, v in answer.items()}
            result = {}
            for turn in self.turns:
                if str(turn) not in keyed:
                    raise _Malformed(f"no entry for {prompts.round_key(turn)}")
                try:
                    result[turn] = parse_item(keyed[str(turn)])
                except _Malformed as e:
                    raise _Malformed(f"{prompts.round_key(turn)}: {e}") from None
            return result
        return parse


# -- parsing the answers: each raises _Malformed with the reason -----------------------------------

def _json_object(answer: str) -> dict:
    text = answer.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.S)  # some models fence JSON despite being told
    if fenced:
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except ValueError as e:
        raise _Malformed(f"not JSON: {e}") from None
    if not isinstance(value, dict):
        raise _Malformed(f"expected a JSON object, got {type(value).__name__}")
    return value


def _entity_list(entities: dict[str, Entity]) -> str:
    return prompts.as_json([{"name": e.name, "type": e.type, "description": e.description} for e in entities.values()])


def _occurs(words: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(words.lower())}(?!\w)", text.lower()) is not None


def _text(value) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # a year or an amount given as a number
    if not isinstance(value, str):
        raise _Malformed(f"expected a string, got {type(value).__name__}")
    return value.strip()


def _flag(value, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if value in (0, 1) or (isinstance(value, str) and value.strip().lower() in ("true", "false", "0", "1")):
        return str(value).strip().lower() in ("1", "true")
    raise _Malformed(f"{what}: expected true or false, got {value!r}")


def _list(value, what: str) -> list:
    if not isinstance(value, list):
        raise _Malformed(f"{what}: expected a list, got {type(value).__name__}")
    return value


def _topic(answer: dict) -> str:
    topic = _text(answer.get("topic"))
    if not topic:
        raise _Malformed("empty topic")
    return topic


def _entity_types(answer: dict) -> list[str]:
    types = [canonical(_text(t)) for t in _list(answer.get("entity_types"), "entity_types")]
    return list(dict.fromkeys(t for t in types if t))


def _entity(value) -> Entity:
    if isinstance(value, str):
        return Entity(canonical(value))
    if not isinstance(value, dict):
        raise _Malformed(f"entity: expected an object, got {type(value).__name__}")
    return Entity(canonical(_text(value.get("name") or "")), canonical(_text(value.get("type") or "")),
                  _text(value.get("description") or ""))


def _relation(value) -> Relation | None:
    if not isinstance(value, dict):
        raise _Malformed(f"relation: expected an object, got {type(value).__name__}")
    # the paper's prompts call them source_entity / target_entity / relationship: take either spelling
    source = canonical(_text(value.get("source") or value.get("source_entity") or ""))
    target = canonical(_text(value.get("target") or value.get("target_entity") or ""))
    name = _text(value.get("relation") or value.get("relationship") or "").lower()
    return Relation(source, target, name) if source and target and source != target else None


def _relations(value, what: str) -> tuple[Relation, ...]:
    found = (_relation(r) for r in _list(value if value is not None else [], what))
    return tuple(dict.fromkeys(r for r in found if r))


def _graph(answer: dict) -> tuple[dict[str, Entity], tuple[Relation, ...]]:
    entities: dict[str, Entity] = {}
    for e in (_entity(v) for v in _list(answer.get("entities"), "entities")):
        if e.name:
            entities.setdefault(e.name, e)
    return entities, _relations(answer.get("relations"), "relations")


def _rewrite(value) -> _Rewrite:
    if not isinstance(value, dict):
        raise _Malformed(f"expected an object, got {type(value).__name__}")
    anaphors = tuple(a for a in (_text(a) for a in _list(value.get("anaphors") or [], "anaphors")) if a)
    return _Rewrite(_text(value.get("question") or ""), anaphors, _flag(value.get("elliptical", False), "elliptical"),
                    _flag(value.get("story_resolved", False), "story_resolved"))


def _part(value, what: str) -> _Part:
    if value is None:
        return _Part((), ())
    if not isinstance(value, dict):
        raise _Malformed(f"{what}: expected an object, got {type(value).__name__}")
    names = (_entity(e).name for e in _list(value.get("entities") or [], f"{what}.entities"))
    return _Part(tuple(dict.fromkeys(n for n in names if n)), _relations(value.get("relations"), f"{what}.relations"))


def _round_parts(value) -> tuple[_Part, _Part, _Part]:
    if not isinstance(value, dict):
        raise _Malformed(f"expected an object, got {type(value).__name__}")
    if not any(k in value for k in ("question", "answer", "decontextualised")):
        raise _Malformed("none of question / answer / decontextualised given")
    return (_part(value.get("question"), "question"), _part(value.get("answer"), "answer"),
            _part(value.get("decontextualised"), "decontextualised"))


def _canonicalisation(unseen: list[str]) -> Callable[[dict], dict[str, tuple[bool, tuple[Entity, ...]]]]:
    def parse(answer: dict) -> dict[str, tuple[bool, tuple[Entity, ...]]]:
        keyed = {canonical(str(k)): v for k, v in answer.items()}
        result = {}
        for name in unseen:
            entry = keyed.get(name)
            if not isinstance(entry, dict):
                raise _Malformed(f"no decision for {name!r}")
            group = tuple(e for e in (_entity(m) for m in _list(entry.get("members") or [], f"{name}.members"))
                          if e.name)
            result[name] = (_flag(entry.get("is_subset", False), f"{name}.is_subset"), group)
        return result
    return parse
