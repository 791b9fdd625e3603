"""Hugging Face classifiers as an intent/slot system: a sequence-classification folder for the intent and, optional,
a token-classification folder for the slots.

The spec is ``hf-nlu:INTENT_FOLDER[+SLOT_FOLDER]`` (folder paths without a "+"): each folder is one
``save_pretrained`` model with its tokenizer. The intent folder is required: a ``...ForSequenceClassification``
model whose ``config.id2label`` names the intents. The slot folder is a ``...ForTokenClassification`` model whose
``config.id2label`` holds BIO tags (``O``, ``B-slot``, ``I-slot``) and whose tokenizer is a fast one (its
``word_ids`` map sub-tokens to words); without it every word is tagged ``O``.

Slot tags are per word, the utterance split on whitespace as the datasets are: each word takes the label of its
first sub-token. The intent's probabilities are the softmax over every intent label (DialTest's DeepGini reads
them). Only the last utterance is classified: a classifier trained on single utterances sees no context, so
"and for tomorrow?" is understood on its own words. The models are loaded from the folders only
(``local_files_only``), on the CPU, in eval mode.

The SUT's model name is the folders' names and a digest of their configuration, tokenizer and weight files, so
another model (or the same one fine-tuned again) gets another fingerprint and no stored answer of the old one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path

from mortar.sut.base import SutError, SutSettings
from mortar.sut.nlu import NLUSUT, NLUSystem, Prediction

HF_NLU = "hf-nlu"  # the SUT spec: hf-nlu:INTENT_FOLDER[+SLOT_FOLDER]
INTENT_HEAD, SLOT_HEAD = "ForSequenceClassification", "ForTokenClassification"
BIO = re.compile(r"O|[BI]-\S+")
DEFAULT_LABEL = re.compile(r"LABEL_\d+")  # what transformers names the labels of a config that names none


class HFClassifierNLU(NLUSystem):
    """An intent classifier and an optional slot tagger, both Hugging Face models in local folders."""

    name = HF_NLU

    def __init__(self, intent_folder: Path, slot_folder: Path | None = None):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoModelForTokenClassification, AutoTokenizer

        self.torch = torch
        self.intent_tokenizer = AutoTokenizer.from_pretrained(intent_folder, local_files_only=True)
        self.intent_model = AutoModelForSequenceClassification.from_pretrained(intent_folder,
                                                                               local_files_only=True).eval()
        self.intents = _labels(self.intent_model.config)
        self.slot_tokenizer = self.slot_model = None
        if slot_folder is not None:
            self.slot_tokenizer = AutoTokenizer.from_pretrained(slot_folder, local_files_only=True)
            if not self.slot_tokenizer.is_fast:
                raise SutError(f"{HF_NLU}: the tokenizer of {slot_folder} is not a fast one (tokenizer.json): it "
                               "cannot map sub-tokens to words")
            self.slot_model = AutoModelForTokenClassification.from_pretrained(slot_folder,
                                                                              local_files_only=True).eval()
            self.tag_names = _labels(self.slot_model.config)

    def predict(self, utterances: list[str]) -> Prediction:
        return self.predict_many([utterances])[0]

    def predict_many(self, dialogues: list[list[str]]) -> list[Prediction]:
        if not dialogues:
            return []
        last = [d[-1] if d else "" for d in dialogues]
        words = [u.split() for u in last]
        with self.torch.inference_mode():
            encoded = self.intent_tokenizer(last, padding=True, truncation=True, return_tensors="pt")
            probabilities = self.torch.softmax(self.intent_model(**encoded).logits, dim=-1).tolist()
            tags = self._tags(words) if self.slot_model is not None else [("O",) * len(w) for w in words]
        return [Prediction(self.intents[max(range(len(p)), key=p.__getitem__)], t, dict(zip(self.intents, p)))
                for p, t in zip(probabilities, tags)]

    def _tags(self, words: list[list[str]]) -> list[tuple[str, ...]]:
        """Each word's tag: the label of its first sub-token (a word cut off by truncation is ``O``)."""
        encoded = self.slot_tokenizer(words, is_split_into_words=True, padding=True, truncation=True,
                                      return_tensors="pt")
        best = self.slot_model(**encoded).logits.argmax(-1).tolist()
        out = []
        for k, utterance in enumerate(words):
            first: dict[int, int] = {}
            for position, word in enumerate(encoded.word_ids(k)):
                if word is not None:
                    first.setdefault(word, best[k][position])
            out.append(tuple(self.tag_names[first[w]] if w in first else "O" for w in range(len(utterance))))
        return out


def _labels(config) -> list[str]:
    return [config.id2label[i] for i in range(config.num_labels)]


def parse_spec(spec: str) -> tuple[Path, Path | None]:
    """The intent folder and the slot folder (None) of ``hf-nlu:INTENT_FOLDER[+SLOT_FOLDER]``."""
    _, _, rest = spec.partition(":")
    intent, plus, slots = rest.partition("+")
    if not intent or (plus and not slots):
        raise SutError(f"{HF_NLU}: name the folders as {HF_NLU}:INTENT_FOLDER[+SLOT_FOLDER], not {spec!r}")
    return Path(intent), Path(slots) if slots else None


def check_folder(folder: Path, head: str, role: str) -> list[str]:
    """The labels of a model folder whose ``config.json`` names a ``...{head}`` architecture; SutError otherwise."""
    if not folder.is_dir():
        raise SutError(f"{HF_NLU}: the {role} folder {folder} does not exist")
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise SutError(f"{HF_NLU}: {folder} holds no readable config.json of a Hugging Face model "
                       f"({type(e).__name__})") from None
    architectures = config.get("architectures") or []
    if not any(str(a).endswith(head) for a in architectures):
        kind = "sequence" if head == INTENT_HEAD else "token"
        raise SutError(f"{HF_NLU}: the {role} folder {folder} is not a {kind}-classification model "
                       f"(config.json names {', '.join(architectures) or 'no architecture'})")
    id2label = config.get("id2label") or {}
    labels = [id2label[k] for k in sorted(id2label, key=int)]
    if not labels or all(DEFAULT_LABEL.fullmatch(label) for label in labels):
        raise SutError(f"{HF_NLU}: the {role} model in {folder} names no labels: set config.id2label")
    return labels


def check_bio(labels: list[str], folder: Path) -> None:
    wrong = [label for label in labels if not BIO.fullmatch(label)]
    if wrong or "O" not in labels:
        raise SutError(f"{HF_NLU}: the slot labels of {folder} are not BIO tags (O, B-slot, I-slot): "
                       f"{', '.join(wrong[:5]) or 'no O'}")


def model_name(intent: Path, slots: Path | None) -> str:
    """The folders' names and a digest of their files: another model, another name (and SUT fingerprint)."""
    folders = [intent, slots] if slots else [intent]
    digest = hashlib.sha256("".join(_folder_digest(f.resolve()) for f in folders).encode()).hexdigest()[:12]
    return f"{HF_NLU}-{'+'.join(f.resolve().name for f in folders)}-{digest}"


def _folder_digest(folder: Path) -> str:
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in (".json", ".txt", ".model",
                                                                                  ".safetensors", ".bin"))
    return hashlib.sha256("".join(f"{p.name}:{_file_digest(p, *_stamp(p))}" for p in files).encode()).hexdigest()


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


@functools.lru_cache(maxsize=64)
def _file_digest(path: Path, size: int, mtime_ns: int) -> str:  # size and time: a rewritten file is read again
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def make_hf_sut(spec: str, settings: SutSettings | None = None) -> NLUSUT:
    """``hf-nlu:INTENT_FOLDER[+SLOT_FOLDER]``, its folders checked now (their config.json), the models loaded when
    it first answers."""
    intent, slots = parse_spec(spec)
    check_folder(intent, INTENT_HEAD, "intent")
    if slots is not None:
        check_bio(check_folder(slots, SLOT_HEAD, "slot"), slots)
    return NLUSUT(model_name(intent, slots), lambda: _load(intent, slots), settings)


def _load(intent: Path, slots: Path | None) -> HFClassifierNLU:
    try:
        return HFClassifierNLU(intent, slots)
    except (OSError, ValueError) as e:  # a folder without weights or tokenizer: transformers' own words, one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SutError(f"{HF_NLU}: cannot load {intent}{f' + {slots}' if slots else ''}: {first}") from None
