"""The prompts of the LLM information-extraction pipeline (MORTAR §III-E2; journal version, Fig. 8).

One single-turn prompt per step, each asking for one JSON object. Every prompt starts with a line
``Step: <name>`` so that logs, and the fake server of the tests, can tell the steps apart.
Rounds are keyed "Round <turn_id>" in both directions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from string import Template

from mortar.dataset import Round

SYSTEM = ("You extract information from dialogues for a knowledge graph. Follow the instructions exactly and "
          "reply with a single JSON object and nothing else.")

# How every prompt asks for names, so that the same thing gets the same name in every step.
NAMING = ("a canonical name: lower case, singular, without articles, demonstratives or possessives "
          '("the old barns" -> "old barn", "her brother" -> "brother"); a person by the fullest name the text '
          'gives; a date, time or amount by its value ("1990", "three")')


@dataclass(frozen=True)
class Prompt:
    step: str
    template: Template

    def render(self, **fields: str) -> str:
        return f"Step: {self.step}\n\n" + self.template.substitute(fields, naming=NAMING).strip() + "\n"


DECLARATIVE = Prompt("declarative information extraction", Template("""
The dialogue below is made of rounds: in each round one person asks a question and the other answers it.
Turn every round into one declarative sentence that states what the round establishes, that is the
answer expressed with the words of the question.
- Write out what every pronoun or reference to an earlier round stands for, so that each sentence can be
  understood on its own, without the other rounds.
- Keep the names of people, places and things as the dialogue spells them.
- When the answer is "unknown" or missing, say what was asked and that it is not known.

Reply with JSON only, one key per round:
{"Round 1": "<sentence for round 1>", "Round 2": "<sentence for round 2>", ...}

Dialogue:
$dialogue
"""))

TOPIC = Prompt("topic extraction", Template("""
Below are the facts a dialogue established, one sentence per round. Give the dialogue a short,
descriptive topic of a few words that sums up what it is about.

Reply with JSON only: {"topic": "<topic>"}

Facts:
$facts
"""))

ENTITY_TYPES = Prompt("entity type extraction", Template("""
We are building a knowledge graph of a dialogue about: $topic
List the types of entity that occur in the facts below and that matter for this topic.
- Name each type with one or two lower-case words.
- Leave out catch-all types such as "other", "thing" or "unknown".
- No two types may overlap or mean the same (not both "company" and "organisation"); a short list of
  well-chosen types is better than a long one.

Reply with JSON only: {"entity_types": ["<type>", ...]}

Facts:
$facts
"""))

GRAPH = Prompt("graph extraction", Template("""
Build the knowledge graph of a dialogue about: $topic
Entity types: $entity_types

1. Find every entity in the facts below that belongs to one of the entity types. For each one give
   - "name": $naming;
   - "type": one of the entity types;
   - "description": one sentence on what the facts say about it.
2. Find every pair of those entities that the facts clearly relate. For each pair give
   - "source" and "target": the names of the two entities, exactly as in step 1;
   - "relation": a short verb phrase for how they are related ("owns", "lives in");
   - "description": one sentence on why they are related.

Reply with JSON only:
{"entities": [{"name": "...", "type": "...", "description": "..."}, ...],
 "relations": [{"source": "...", "target": "...", "relation": "...", "description": "..."}, ...]}

Facts:
$facts
"""))

DECONTEXTUALISATION = Prompt("question decontextualisation", Template("""
Below are a story and a dialogue about it, in rounds. Rewrite the question of every round so that
someone who has not seen the earlier rounds can understand it and answer it:
- replace every pronoun or other reference to an earlier round ("he", "it", "there", "then", "that one",
  "the other") by what it stands for;
- complete every fragment ("Why?", "How many?", "And then?") into the full question it continues;
- take what you fill in from the earlier rounds of the dialogue only, never from the story;
- leave a question that already stands on its own as it is.
For every round also give:
- "anaphors": the words of the question that point to something outside the question itself, as written
  in the question ([] when there are none);
- "elliptical": true when the question is a bare continuation of the round before it and makes no sense
  without it ("Why?", "How many?", "And then?", "What else?"), otherwise false;
- "story_resolved": true only when the question has anaphors and a reader of the story alone, without the
  dialogue, could tell without doubt what each of them stands for, because the story offers exactly one
  possible referent; otherwise false.

Reply with JSON only, one key per round:
{"Round 1": {"question": "<stand-alone question>", "anaphors": ["..."], "elliptical": false,
             "story_resolved": false}, ...}

Story:
$story

Dialogue:
$dialogue
"""))

ROUND_GRAPH = Prompt("dialogue round graph", Template("""
Here are all entities (name, type, description) and all relations of a dialogue:
Entities: $entities
Relations: $relations

For every round of the dialogue below, choose from these lists
- "question": the entities and relations that the question itself names; a pronoun or a fragment names
  nothing, so leave out what it stands for;
- "answer": the entities and relations that the answer names;
- "decontextualised": the entities and relations that the stand-alone question names.
Use the names exactly as listed. If a round names something that is missing from the list, add it
under $naming.

Reply with JSON only, one key per round:
{"Round 1": {"question": {"entities": ["<name>", ...], "relations": [{"source": "...", "target": "...", "relation": "..."}, ...]},
             "answer": {"entities": [...], "relations": [...]},
             "decontextualised": {"entities": [...], "relations": [...]}}, ...}

Dialogue:
$dialogue
"""))

CANONICALISATION = Prompt("canonicalisation", Template("""
Existing entities of a dialogue (name, type, description): $entities
Entity types: $entity_types

Each new name below was used for this dialogue but is not one of the existing entities. For each one decide:
- if it is another name for one existing entity, or stands for a group of existing entities (as "the
  children" may stand for "tom" and "ann"), set "is_subset" to true and list those existing entities as
  "members", by name and type;
- otherwise set "is_subset" to false and give one member: the new entity itself, under $naming, with the
  most fitting of the entity types.

Reply with JSON only, one key per new name, written as given:
{"<new name>": {"is_subset": true, "members": [{"name": "...", "type": "..."}, ...]}, ...}

New names:
$names
"""))

STEPS = (DECLARATIVE, TOPIC, ENTITY_TYPES, GRAPH, DECONTEXTUALISATION, ROUND_GRAPH, CANONICALISATION)


def round_key(turn_id: int) -> str:
    return f"Round {turn_id}"


def _answer(r: Round) -> str:
    return r.answer if r.answer and r.answer.strip() else "(not recorded)"


def dialogue_text(rounds: tuple[Round, ...]) -> str:
    return "\n\n".join(f"{round_key(r.turn_id)}\nQuestion: {r.question}\nAnswer: {_answer(r)}" for r in rounds)


def dialogue_with_rewrites(rounds: tuple[Round, ...], rewrites: dict[int, str]) -> str:
    return "\n\n".join(f"{round_key(r.turn_id)}\nQuestion: {r.question}\nStand-alone question: {rewrites[r.turn_id]}\n"
                       f"Answer: {_answer(r)}" for r in rounds)


def facts_text(facts: dict[int, str]) -> str:
    return "\n".join(f"{round_key(t)}: {sentence}" for t, sentence in facts.items())


def as_json(value) -> str:
    return json.dumps(value, ensure_ascii=False)
