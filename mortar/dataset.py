"""Seeds (CoQA-format dialogues) and test cases, with loaders that fail with one clear line.

Two input formats:
- CoQA v1.0 JSON (the official ``coqa-dev-v1.0.json`` reads unchanged; unknown fields ignored);
- JSONL, one dialogue per line: ``{"id", "story" (optional), "rounds": [{"question", "answer" (optional)}]}``.
"""

from __future__ import annotations

import hashlib
import json
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

    @property
    def is_unknown(self) -> bool:
        return self.answer is not None and self.answer.strip().lower() == UNKNOWN


@dataclass(frozen=True)
class Seed:
    id: str
    story: str
    rounds: tuple[Round, ...]
    source: str = ""

    def round(self, turn_id: int) -> Round:
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


def load_dataset(path: str | Path) -> Dataset:
    """Read a CoQA JSON or JSONL dataset; raise DatasetError (one line) on any bad input."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: file not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DatasetError(f"{path}: not UTF-8 text (byte {e.start})") from None
    if path.suffix.lower() == ".jsonl" or (not text.lstrip().startswith("{") and text.strip()):
        seeds = _load_jsonl(path, text)
    else:
        seeds = _load_coqa(path, text)
    if not seeds:
        raise DatasetError(f"{path}: no dialogues in the file")
    seen: dict[str, int] = {}
    for i, seed in enumerate(seeds):
        if seed.id in seen:
            raise DatasetError(
                f"{path}: record {i + 1} (id {seed.id!r}): field 'id': duplicate of record {seen[seed.id] + 1}"
            )
        seen[seed.id] = i
    return Dataset(path=str(path), sha256=hashlib.sha256(raw).hexdigest(), seeds=tuple(seeds))


def _load_coqa(path: Path, text: str) -> list[Seed]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise DatasetError(f"{path}: field 'data': missing or not a list (expected CoQA v1.0 JSON)")
    seeds = []
    for i, rec in enumerate(doc["data"]):
        where = _Where(path, i, rec)
        questions = where.list_field("questions")
        answers = where.list_field("answers")
        if len(questions) != len(answers):
            where.fail("questions/answers", f"{len(questions)} questions but {len(answers)} answers")
        rounds = []
        for k, (q, a) in enumerate(zip(questions, answers)):
            turn_id = where.item_field(q, "questions", k, "turn_id", int)
            a_turn = where.item_field(a, "answers", k, "turn_id", int)
            if a_turn != turn_id:
                where.fail(f"answers[{k}].turn_id", f"is {a_turn}, question {k + 1} has turn_id {turn_id}")
            question = where.item_field(q, "questions", k, "input_text", str)
            answer = where.item_field(a, "answers", k, "input_text", str)
            rounds.append(Round(turn_id=turn_id, question=question, answer=answer))
        seeds.append(where.seed(rounds, story_required=True))
    return seeds


def _load_jsonl(path: Path, text: str) -> list[Seed]:
    seeds = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise DatasetError(f"{path}: line {lineno}: invalid JSON at column {e.colno}: {e.msg}") from None
        where = _Where(path, lineno - 1, rec, unit="line")
        rounds = []
        for k, r in enumerate(where.list_field("rounds")):
            question = where.item_field(r, "rounds", k, "question", str)
            answer = where.item_field(r, "rounds", k, "answer", str, required=False)
            rounds.append(Round(turn_id=k + 1, question=question, answer=answer))
        seeds.append(where.seed(rounds, story_required=False))
    return seeds


class _Where:
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
