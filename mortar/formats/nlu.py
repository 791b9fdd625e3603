"""Intent and slot datasets (DialTest's task): each utterance has an intent and a BIO slot tag per word.

- ``nlu``: a JSON array (or JSONL) of utterances ``{"text", "tags", "intent"}``: ``text`` the words separated by
  spaces (or ``tokens``, a list), ``tags`` one BIO tag per word (a string or a list: ``O``, ``B-city``,
  ``I-city``); optional ``id``, ``dialogue`` and ``turn`` (utterances of one dialogue, in turn order: a later one
  may lean on an earlier one, "and for tomorrow"), and ``split`` (train / test);
- ``snips``: the Snips benchmark's JSON, ``{"IntentName": [{"data": [{"text": "book a table in "},
  {"text": "paris", "entity": "city"}]}]}``: the entity chunks become B-/I- tags;
- ``atis``: a folder with the ``seq.in`` (words), ``seq.out`` (tags) and ``label`` (intent) files, a line each.

A dialogue is a seed; its utterances are rounds with no gold answer (``answer`` None) and with ``intent`` and
``tags``. The split, where given, is the seed's ``source``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mortar.dataset import DatasetError, Round, Seed, Where
from mortar.formats.dialogues import json_lines

TAG = re.compile(r"^(O|[BI]-\S+)$")
TRIPLE = ("seq.in", "seq.out", "label")


def looks_like(record) -> bool:
    """Whether a JSON object is an utterance of the ``nlu`` format."""
    return isinstance(record, dict) and "intent" in record and "tags" in record


def looks_like_snips(doc) -> bool:
    return isinstance(doc, dict) and bool(doc) and all(
        isinstance(v, list) and v and isinstance(v[0], dict) and "data" in v[0] for v in doc.values())


def is_triple(path: Path) -> bool:
    return path.is_dir() and all((path / name).is_file() for name in TRIPLE)


def load(path: Path, text: str, grounding_field: str | None = None) -> list[Seed]:
    if text.lstrip().startswith("["):
        try:
            records = list(enumerate(json.loads(text), start=1))
        except json.JSONDecodeError as e:
            raise DatasetError(f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
        unit = "record"
    else:
        records, unit = list(json_lines(path, text)), "line"
    utterances = []
    for n, rec in records:
        where = Where(path, n - 1, rec, unit=unit)
        words = _words(where)
        tags = _tags(where, "tags", rec.get("tags"), len(words))
        intent = rec.get("intent")
        if not isinstance(intent, str) or not intent.strip():
            where.fail("intent", "missing or not a non-empty string")
        dialogue = rec.get("dialogue", rec.get("id", f"{unit}-{n}"))
        turn = rec.get("turn", 1)
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
            where.fail("turn", "not a positive integer")
        split = rec.get("split", "")
        utterances.append((str(dialogue), turn, Round(turn, " ".join(words), None, intent=intent.strip(), tags=tags),
                           split if isinstance(split, str) else "", where))
    return _dialogues(path, utterances)


def _words(where: Where) -> list[str]:
    rec = where.rec
    if "tokens" in rec:
        words = rec["tokens"]
        if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() and " " not in w for w in words):
            where.fail("tokens", "not a list of words")
    elif isinstance(rec.get("text"), str):
        words = rec["text"].split()
    else:
        where.fail("text", "missing or not a string")
    if not words:
        where.fail("text", "empty utterance")
    return words


def _tags(where: Where, field: str, value, n_words: int) -> tuple[str, ...]:
    tags = value.split() if isinstance(value, str) else value
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        where.fail(field, "missing, or not a string or list of BIO tags")
    if len(tags) != n_words:
        where.fail(field, f"{len(tags)} tags for {n_words} words")
    bad = next((t for t in tags if not TAG.match(t)), None)
    if bad is not None:
        where.fail(field, f"{bad!r} is not a BIO tag (O, B-slot, I-slot)")
    return tuple(tags)


def _dialogues(path: Path, utterances: list) -> list[Seed]:
    """Utterances grouped into dialogues (in the order their first utterance comes), each in turn order."""
    grouped: dict[str, list] = {}
    for dialogue, turn, round_, split, where in utterances:
        grouped.setdefault(dialogue, []).append((turn, round_, split, where))
    seeds = []
    for dialogue, turns in grouped.items():
        turns.sort(key=lambda t: t[0])
        if [t[0] for t in turns] != list(range(1, len(turns) + 1)):
            turns[-1][3].fail("turn", f"dialogue {dialogue!r} has turns {[t[0] for t in turns]}, not 1, 2, 3, …")
        splits = {t[2] for t in turns}
        if len(splits) > 1:
            turns[-1][3].fail("split", f"dialogue {dialogue!r} is in more than one split ({', '.join(sorted(splits))})")
        seeds.append(Seed(id=dialogue, story="", rounds=tuple(t[1] for t in turns), source=splits.pop()))
    return seeds


def load_snips(path: Path, text: str, grounding_field: str | None = None) -> list[Seed]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    if not looks_like_snips(doc):
        raise DatasetError(f"{path}: not Snips JSON ({{intent: [{{data: [{{text, entity}}]}}]}})")
    seeds = []
    for intent, examples in doc.items():
        for k, example in enumerate(examples):
            label = f"{path}: intent {intent!r} example {k + 1}"
            words, tags = [], []
            for chunk in example.get("data") if isinstance(example.get("data"), list) else [None]:
                if not isinstance(chunk, dict) or not isinstance(chunk.get("text"), str):
                    raise DatasetError(f"{label}: field 'data': not a list of {{text, entity}} chunks")
                chunk_words = chunk["text"].split()
                entity = chunk.get("entity")
                words += chunk_words
                tags += [("B-" if i == 0 else "I-") + entity if entity else "O" for i in range(len(chunk_words))]
            if not words:
                raise DatasetError(f"{label}: empty utterance")
            seeds.append(Seed(id=f"{intent}-{k + 1}", story="",
                              rounds=(Round(1, " ".join(words), None, intent=intent, tags=tuple(tags)),)))
    return seeds


def load_triple(folder: Path) -> list[Seed]:
    """The ``seq.in`` / ``seq.out`` / ``label`` triple of a folder: one single-turn dialogue a line."""
    lines = {name: (folder / name).read_text(encoding="utf-8").splitlines() for name in TRIPLE}
    if len({len(v) for v in lines.values()}) != 1:
        counts = ", ".join(f"{name} {len(v)}" for name, v in lines.items())
        raise DatasetError(f"{folder}: the files have different line counts ({counts})")
    seeds = []
    for n, (words, tags, intent) in enumerate(zip(*lines.values()), start=1):
        where = Where(folder / "seq.in", n - 1, {}, unit="line")
        words = words.split()
        if not words:
            where.fail("", "empty utterance")
        if not intent.strip():
            Where(folder / "label", n - 1, {}, unit="line").fail("", "no intent")
        tags = _tags(Where(folder / "seq.out", n - 1, {}, unit="line"), "", tags, len(words))
        seeds.append(Seed(id=f"line-{n}", story="", rounds=(Round(1, " ".join(words), None, intent=intent.strip(),
                                                                  tags=tags),)))
    return seeds


def write(records: list[dict], out: str | Path, fmt: str = "nlu") -> None:
    """Utterances ``{"text", "tags", "intent", "dialogue", "turn", "split"}`` written in a format ``load`` reads:
    ``nlu`` a JSON array; ``snips`` the Snips JSON (one example an utterance); ``atis`` a folder of ``seq.in``,
    ``seq.out`` and ``label``. Each file is written whole or not at all."""
    out = Path(out)
    if fmt == "atis":
        out.mkdir(parents=True, exist_ok=True)
        files = {"seq.in": [r["text"] for r in records], "seq.out": [" ".join(r["tags"]) for r in records],
                 "label": [r["intent"] for r in records]}
        for name, lines in files.items():
            _write_text(out / name, "".join(line + "\n" for line in lines))
        return
    if fmt == "snips":
        doc: dict[str, list] = {}
        for r in records:
            doc.setdefault(r["intent"], []).append({"data": _chunks(r["text"].split(), r["tags"])})
        return _write_text(out, json.dumps(doc, ensure_ascii=False, indent=1))
    _write_text(out, as_json(records))


def as_json(records: list[dict]) -> str:
    """Utterances as the ``nlu`` format's JSON array."""
    fields = ("text", "tags", "intent", "dialogue", "turn", "split")
    return json.dumps([{k: r[k] for k in fields if r.get(k) not in (None, "")} for r in records], ensure_ascii=False,
                      indent=1)


def _chunks(words: list[str], tags) -> list[dict]:
    """Words and BIO tags as Snips chunks: a run of O words is one chunk, each slot span one with its entity."""
    chunks: list[dict] = []
    for word, tag in zip(words, tags):
        entity = None if tag == "O" else tag[2:]
        continues = chunks and chunks[-1].get("entity") == entity and not tag.startswith("B-")
        if continues:
            chunks[-1]["text"] += " " + word
        else:
            chunks.append({"text": word, **({"entity": entity} if entity else {})})
    for k in range(len(chunks) - 1):  # Snips chunks carry the spaces between them
        chunks[k]["text"] += " "
    return chunks


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
