"""Seeds (a grounding text and question/answer rounds) and test cases, and what the loaders share: the dataset,
its one-line errors, and a reader of one record's fields (``Where``). The loaders of each file format are in
``mortar.formats``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mortar.errors import InputError

UNKNOWN = "unknown"


class DatasetError(InputError, ValueError):
    """A user error in a dataset file: the message names the file, the record and the field."""


@dataclass(frozen=True)
class Round:
    turn_id: int
    question: str
    answer: str | None  # None when the dataset has no gold answer (JSONL without "answer")
    candidates: tuple[str, ...] = ()  # the dataset's own candidate replies, the gold among them (PersonaChat)
    intent: str | None = None  # an intent/slot dataset's gold intent (DialTest's task)
    tags: tuple[str, ...] = ()  # … and its BIO slot tag per word of the question (split on spaces)

    @property
    def is_unknown(self) -> bool:
        return self.answer is not None and self.answer.strip().lower() == UNKNOWN


@dataclass(frozen=True)
class Persona:
    """The persona paper's grounding: the speaker's persona (first-person sentences), the dataset's revised
    (paraphrased) persona, and the chat partner's persona; either of the last two may be missing (())."""

    sentences: tuple[str, ...]
    revised: tuple[str, ...] = ()
    partner: tuple[str, ...] = ()


def persona_text(sentences) -> str:
    """A persona as the SUT is given it: one sentence a line."""
    return "\n".join(sentences)


@dataclass(frozen=True)
class Seed:
    id: str
    story: str  # the grounding; for a persona dialogue its persona (``persona_text``)
    rounds: tuple[Round, ...]
    source: str = ""  # where the dialogue comes from (CoQA's source; an intent/slot dataset's split)
    persona: Persona | None = None  # a persona dialogue: the partner's lines are the questions, the gold replies answers

    def round(self, turn_id: int) -> Round:
        if 0 < turn_id <= len(self.rounds) and self.rounds[turn_id - 1].turn_id == turn_id:
            return self.rounds[turn_id - 1]  # rounds numbered from 1, as nearly every dataset has them
        for r in self.rounds:
            if r.turn_id == turn_id:
                return r
        raise KeyError(f"seed {self.id} has no round {turn_id}")


@dataclass(frozen=True)
class TestCase:
    """A question sequence asked to the SUT: the seed itself (ORIG) or a perturbation of it.

    ``source_rounds[p]`` is the seed ``turn_id`` of the question asked at position ``p + 1``.
    """

    __test__ = False  # not a pytest class

    seed_id: str
    perturbation: str
    replicate: int
    source_rounds: tuple[int, ...]
    replaced: tuple[tuple[int, str], ...] = ()  # (position, question) asked instead of the seed's (METAL)
    target_round: int | None = None  # single-turn methods: the seed round whose question is changed
    story: str | None = None  # the grounding asked with instead of the seed's story (None: the seed's)
    guide: str | None = None  # how a guided search made it ("gini", or "random" for its baseline); None: unguided

    @property
    def test_case_id(self) -> str:
        """seed/perturbation/replicate, or seed/perturbation/round for a single-turn method's case
        (seed/perturbation/round/guide+replicate for one of several guided mutants of a round)."""
        if self.target_round is None:
            return f"{self.seed_id}/{self.perturbation}/{self.replicate}"
        guided = f"/{self.guide}{self.replicate}" if self.guide else ""
        return f"{self.seed_id}/{self.perturbation}/{self.target_round}{guided}"

    def story_of(self, seed: "Seed") -> str:
        return seed.story if self.story is None else self.story

    def question_at(self, seed: "Seed", position: int) -> str:
        """The question asked at a 1-based position."""
        for pos, question in self.replaced:
            if pos == position:
                return question
        return seed.round(self.source_rounds[position - 1]).question


@dataclass(frozen=True)
class Dataset:
    path: str
    sha256: str
    seeds: tuple[Seed, ...]

    @property
    def name(self) -> str:
        return Path(self.path).name


class Where:
    """Field access for one record that turns every problem into a one-line DatasetError."""

    def __init__(self, path: Path, index: int, rec, unit: str = "record"):
        self.path, self.rec = path, rec
        label = f"{unit} {index + 1}"
        if isinstance(rec, dict) and isinstance(rec.get("id"), str):
            label += f" (id {rec['id']!r})"
        self.label = label
        if not isinstance(rec, dict):
            self.fail("", "not a JSON object")

    def fail(self, field: str, problem: str):
        at = f": field '{field}'" if field else ""
        raise DatasetError(f"{self.path}: {self.label}{at}: {problem}")

    def list_field(self, name: str) -> list:
        if name not in self.rec:
            self.fail(name, "missing")
        value = self.rec[name]
        if not isinstance(value, list):
            self.fail(name, "not a list")
        return value

    def item_field(self, item, list_name: str, k: int, name: str, kind: type, required: bool = True):
        field = f"{list_name}[{k}].{name}"
        if not isinstance(item, dict):
            self.fail(f"{list_name}[{k}]", "not a JSON object")
        if name not in item or item[name] is None:
            if required:
                self.fail(field, "missing")
            return None
        value = item[name]
        if kind is int and isinstance(value, str) and value.isdigit():
            value = int(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            self.fail(field, f"expected {kind.__name__}, got {type(value).__name__}")
        if kind is str and required and not value.strip():
            self.fail(field, "empty")
        return value

    def seed(self, rounds: list[Round], story_required: bool) -> Seed:
        seed_id = self.rec.get("id")
        if not isinstance(seed_id, str) or not seed_id.strip():
            self.fail("id", "missing or not a non-empty string")
        story = self.rec.get("story")
        if story is None and story_required:
            self.fail("story", "missing")
        if story is not None and not isinstance(story, str):
            self.fail("story", "not a string")
        if not rounds:
            self.fail("questions" if story_required else "rounds", "empty dialogue (no rounds)")
        turn_ids = [r.turn_id for r in rounds]
        if len(set(turn_ids)) != len(turn_ids):
            self.fail("questions", "duplicate turn_id")
        source = self.rec.get("source")
        return Seed(id=seed_id, story=story or "", rounds=tuple(rounds), source=source if isinstance(source, str) else "")


def limited(dataset: Dataset, limit: int | None) -> Dataset:
    """Only the first ``limit`` seeds (all of them for None or 0)."""
    if not limit:
        return dataset
    return Dataset(dataset.path, dataset.sha256, dataset.seeds[:limit])
