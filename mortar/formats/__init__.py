"""Dataset file formats: each a loader of seeds, detected from the file's content or named (``--format``).

- ``coqa``: CoQA v1.0 JSON (the official ``coqa-dev-v1.0.json`` reads unchanged);
- ``dialogues``: MORTAR's JSONL, one dialogue a line: ``{"id", "story", "rounds": [{"question", "answer"}]}``;
- ``chat``: OpenAI chat JSONL, one conversation a line: ``{"messages": [{"role", "content"}, …]}``: the system
  message (or a field named by ``grounding_field``) is the grounding, each user turn a question, the assistant
  turn after it the gold answer;
- ``sharegpt``: ShareGPT, a JSON array or JSONL of ``{"conversations": [{"from": "human"|"gpt"|"system",
  "value"}]}``;
- ``persona``: PersonaChat-style persona dialogues (``personality``, ``revised_personality``, ``partner_personality``,
  ``utterances`` with ``history`` and ``candidates``, gold last), JSONL or a JSON document;
- ``parquet``: Parquet or Arrow files with Hugging Face's CoQA schema (``story``, ``questions``,
  ``answers.input_text``) or QuAC's (``context``, ``questions``, ``orig_answers`` / ``answers``).

A malformed record is one DatasetError naming the file, the line (or record, or row) and what is wrong; nothing of
a file that fails is kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mortar.dataset import Dataset, DatasetError, Seed
from mortar.formats import chat, coqa, dialogues, nlu, persona, tables


@dataclass(frozen=True)
class Format:
    name: str
    text: str  # one line for --help and the Datasets page
    load: Callable[..., list[Seed]]  # (path, raw bytes, grounding_field) → seeds
    binary: bool = False
    folder: bool = False  # the dataset is a folder of files, not a file


FORMATS = {f.name: f for f in (
    Format("coqa", "CoQA v1.0 JSON", coqa.load),
    Format("dialogues", "JSONL dialogues: {id, story, rounds: [{question, answer}]}", dialogues.load),
    Format("chat", "OpenAI chat JSONL: {messages: [{role, content}]}", chat.load_openai),
    Format("sharegpt", "ShareGPT: {conversations: [{from, value}]}, a JSON array or JSONL", chat.load_sharegpt),
    Format("persona", "PersonaChat-style: {personality, revised_personality, partner_personality, utterances: "
           "[{history, candidates}]}, JSONL or JSON", persona.load),
    Format("nlu", "intent/slot utterances, a JSON array or JSONL: {text, tags (BIO), intent, dialogue, turn, split}",
           nlu.load),
    Format("snips", "Snips benchmark JSON: {IntentName: [{data: [{text, entity}]}]}", nlu.load_snips),
    Format("atis", "a folder with seq.in, seq.out and label (one utterance, its BIO tags, its intent a line)",
           lambda path, raw, grounding_field: nlu.load_triple(path), folder=True),
    Format("parquet", "Parquet or Arrow with Hugging Face's CoQA or QuAC columns", tables.load, binary=True),
)}
SUFFIXES = (".json", ".jsonl", ".parquet", ".arrow")  # what the dashboard offers to upload


def detect_format(path: Path, raw: bytes) -> str:
    """The format of a file from its content (its first bytes, its first record's keys)."""
    if tables.is_table(raw):
        return "parquet"
    text = _text(path, raw)
    head = text.lstrip()
    document = _document_kind(text) if head.startswith(("[", "{")) else None
    if document:
        return document
    if head.startswith("["):
        return "sharegpt"
    first = _first_record(text)
    if head.startswith("{") and first is None:
        return "coqa"  # one JSON document over several lines
    if persona.looks_like(first):
        return "persona"
    if nlu.looks_like(first):
        return "nlu"
    keys = set(first or ())
    if "messages" in keys:
        return "chat"
    if "conversations" in keys:
        return "sharegpt"
    if "data" in keys and "rounds" not in keys:
        return "coqa"
    return "dialogues"


@functools.lru_cache(maxsize=32)
def _format_of_file(path: str, format: str | None, mtime_ns: int, size: int) -> str | None:
    try:
        return format or detect_format(Path(path), Path(path).read_bytes())
    except (OSError, DatasetError):
        return None


def format_of(path: str | Path, format: str | None = None) -> str | None:
    """The format a dataset file reads as (``format`` when named); None for a file that cannot be read."""
    if nlu.is_triple(Path(path)):
        return format or "atis"
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return _format_of_file(str(path), format, stat.st_mtime_ns, stat.st_size)


def load_dataset(path: str | Path, format: str | None = None, grounding_field: str | None = None) -> Dataset:
    """Read a dataset in any of :data:`FORMATS` (``format`` None: detected); DatasetError (one line) on bad input."""
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise DatasetError(f"{path}: unknown format {format!r}; choose from {', '.join(FORMATS)}")
    if nlu.is_triple(path) and format in (None, "atis"):
        raw = b"".join((path / name).read_bytes() for name in nlu.TRIPLE)
        return _dataset(path, raw, nlu.load_triple(path))
    if not path.is_file():
        raise DatasetError(f"{path}: file not found" + (" (a folder of intent/slot files needs seq.in, seq.out and "
                                                        "label)" if path.is_dir() else ""))
    raw = path.read_bytes()
    kind = FORMATS[format or detect_format(path, raw)]
    if kind.folder:
        raise DatasetError(f"{path}: the {kind.name} format is a folder with {', '.join(nlu.TRIPLE)}")
    if grounding_field and kind.name != "chat":
        raise DatasetError(f"{path}: a grounding field is for chat JSONL (this file reads as {kind.name})")
    return _dataset(path, raw, kind.load(path, raw if kind.binary else _text(path, raw), grounding_field))


def _dataset(path: Path, raw: bytes, seeds: list[Seed]) -> Dataset:
    if not seeds:
        raise DatasetError(f"{path}: no dialogues in the file")
    seen: dict[str, int] = {}
    for i, seed in enumerate(seeds):
        if seed.id in seen:
            raise DatasetError(
                f"{path}: record {i + 1} (id {seed.id!r}): field 'id': duplicate of record {seen[seed.id] + 1}")
        seen[seed.id] = i
    return Dataset(path=str(path), sha256=hashlib.sha256(raw).hexdigest(), seeds=tuple(seeds))


def _document_kind(text: str) -> str | None:
    """The format of a whole-file JSON document of persona dialogues ("persona") or intent/slot utterances ("nlu",
    "snips"); None for any other text (JSONL, CoQA, ShareGPT)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return None
    if persona.is_persona_document(doc):
        return "persona"
    if isinstance(doc, list) and doc and nlu.looks_like(doc[0]):
        return "nlu"
    return "snips" if nlu.looks_like_snips(doc) else None


def _text(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DatasetError(f"{path}: not UTF-8 text (byte {e.start})") from None


def _first_record(text: str) -> dict | None:
    """The first line as a JSON object, or None when it is not one (a document over several lines)."""
    line = next((line for line in text.splitlines() if line.strip()), "")
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None
