"""PersonaChat-style persona dialogues, the persona paper's setting.

One dialogue a JSON object, in a JSONL file or a JSON document (a list of dialogues, or ParlAI's
``{"train": [...], "valid": [...]}``)::

    {"id": "p1",                                   # optional: else <split>-<n> or dialogue-<n>
     "personality": ["I have two dogs.", ...],     # the speaker's persona ("persona" also reads)
     "revised_personality": [...],                 # optional: the dataset's paraphrased persona
     "partner_personality": [...],                 # optional: the chat partner's persona
     "utterances": [{"history": [partner_0, self_0, ..., partner_k], "candidates": [..., gold]}, ...]}

Each utterance is a round: its question is the partner's new line (the history's last entry) and its gold
answer the last candidate, as PersonaChat orders them; the candidates are kept for response selection.
The speaker's persona is the seed's grounding (its story), one sentence a line.
"""

from __future__ import annotations

import json
from pathlib import Path

from mortar.dataset import DatasetError, Persona, Round, Seed, Where, persona_text
from mortar.formats.dialogues import json_lines

PERSONA_KEYS = ("personality", "persona")
REVISED_KEYS = ("revised_personality", "revised_persona")
PARTNER_KEYS = ("partner_personality", "partner_persona")


def looks_like(record) -> bool:
    """Whether a JSON object is a persona dialogue (its first record, for format detection)."""
    return isinstance(record, dict) and "utterances" in record and any(k in record for k in PERSONA_KEYS)


def is_persona_document(doc) -> bool:
    """Whether a whole-file JSON document (parsed) holds persona dialogues (a list of them, or splits of them)."""
    return any(looks_like(d) for d in _first_of_each(doc))


def _document(text: str):
    """The whole file as one JSON document, or None (JSONL: a document a line)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _first_of_each(doc) -> list:
    if isinstance(doc, list):
        return doc[:1]
    if isinstance(doc, dict):
        return [v[0] for v in doc.values() if isinstance(v, list) and v]
    return []


def load(path: Path, text: str, grounding_field: str | None = None) -> list[Seed]:
    head = text.lstrip()
    doc = _document(text) if head.startswith(("[", "{")) else None
    if head.startswith("[") or is_persona_document(doc):
        if doc is None:
            raise DatasetError(f"{path}: invalid JSON: not a list of persona dialogues")
        if isinstance(doc, list):
            records = [("dialogue", i, rec) for i, rec in enumerate(doc)]
        else:
            records = [(split, i, rec) for split, items in doc.items() if isinstance(items, list)
                       for i, rec in enumerate(items)]
        return [_seed(path, Where(path, n, rec), f"{split}-{i + 1}") for n, (split, i, rec) in enumerate(records)]
    return [_seed(path, Where(path, lineno - 1, rec, unit="line"), f"dialogue-{lineno}")
            for lineno, rec in json_lines(path, text)]


def _sentences(where: Where, keys: tuple[str, ...], required: bool) -> tuple[str, ...]:
    key = next((k for k in keys if k in where.rec), None)
    if key is None:
        if required:
            where.fail(keys[0], "missing")
        return ()
    value = where.rec[key]
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        where.fail(key, "not a list of sentences (strings)")
    sentences = tuple(s.strip() for s in value if s.strip())
    if required and not sentences:
        where.fail(key, "empty persona")
    return sentences


def _seed(path: Path, where: Where, default_id: str) -> Seed:
    persona = Persona(_sentences(where, PERSONA_KEYS, True), _sentences(where, REVISED_KEYS, False),
                      _sentences(where, PARTNER_KEYS, False))
    rounds = []
    for k, utterance in enumerate(where.list_field("utterances")):
        history = _texts(where, utterance, k, "history")
        candidates = _texts(where, utterance, k, "candidates")
        rounds.append(Round(turn_id=k + 1, question=history[-1], answer=candidates[-1],
                            candidates=tuple(candidates)))
    if not rounds:
        where.fail("utterances", "empty dialogue (no utterances)")
    seed_id = where.rec.get("id", where.rec.get("conv_id", default_id))
    if not isinstance(seed_id, (str, int)) or isinstance(seed_id, bool) or not str(seed_id).strip():
        where.fail("id", "not a non-empty string")
    return Seed(id=str(seed_id), story=persona_text(persona.sentences), rounds=tuple(rounds), persona=persona)


def _texts(where: Where, utterance, k: int, name: str) -> list[str]:
    field = f"utterances[{k}].{name}"
    if not isinstance(utterance, dict):
        where.fail(f"utterances[{k}]", "not a JSON object")
    value = utterance.get(name)
    if value is None:
        where.fail(field, "missing")
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        where.fail(field, "not a list of strings")
    if not value or not value[-1].strip():
        where.fail(field, "empty" if not value else "its last entry is empty")
    return value
